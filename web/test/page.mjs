// Browser test of the training page, in headless Chromium on whatever WebGPU adapter it has
// (SwiftShader on a machine without a GPU, so the model is tiny and the runs are a few steps;
// ATTNLAB_BACKEND=cpu runs it on the CPU backend instead, without the device-lost step):
//   open → pretrain (chart updates, loss falls) → pause → reload → resume from the saved state →
//   device lost → resume again → finish → evaluate → ask (prediction + attention maps) →
//   upload the CLI's checkpoint (same predictions as the CLI) → a malformed TSV (line-numbered error) →
//   a bad corpus, a non-UTF-8 file, a damaged checkpoint and impossible hyperparameters (messages),
// recording long tasks throughout (reported; the check is that the engine never ran on the page's
// thread). Prints each step with its time, saves
// screenshots to web/test/out/, exits 0 only if every step passed.
// Usage: ATTNLAB_FIXTURE=DIR node web/test/page.mjs [base URL]   (DIR from web/test/fixture.sh, and the
// server started with --data DIR/data). CHROMIUM=/path/to/chrome picks the browser.
// The steps from evaluate to the dropped file are in page-after-run.mjs, run in place.
import fs from 'node:fs';
import path from 'node:path';
import { openBrowser, pageUrl } from './browser.mjs';
import {
  assert,
  atPhoneWidth,
  cardShot,
  outDir as testOut,
  pageError,
  pageState,
  steps,
  waitFor,
} from './harness.mjs';
import { afterFirstRunSteps } from './page-after-run.mjs';

const base = process.argv[2] || 'http://127.0.0.1:8080/';
const url = pageUrl(base);
const fixture = process.env.ATTNLAB_FIXTURE;
const outDir = testOut();
const STEP_TIMEOUT = 180000;
// The quick preset with a batch small enough for a software GPU.
const BATCH = 4;
// The CPU backend runs these steps ~10x faster than SwiftShader: a longer run leaves time to pause.
const MAX_STEPS = process.env.ATTNLAB_BACKEND === 'cpu' ? 240 : 24;

const stepStarts = []; // page-time start of each step (to place long tasks)
let page;
const harness = steps({ label: 'page', dir: outDir, page: () => page, what: 'PAGE STEPS' });

// A named step (harness.mjs), its start in page time kept for placing the long tasks.
async function step(name, f) {
  const at = page
    ? await page.evaluate(() => Math.round(performance.now())).catch(() => null)
    : null;
  return harness.step(name, async () => {
    const detail = await f();
    if (at !== null) stepStarts.push({ name, at });
    return detail;
  });
}

// The page's state (without the bulky parts). A page whose main thread stops answering fails the
// test instead of hanging it.
const P = () =>
  Promise.race([
    pageState(page),
    new Promise((_, reject) =>
      setTimeout(
        () => reject(new Error('the page did not answer for 30 s (main thread blocked?)')),
        30000,
      ),
    ),
  ]);

const waitPage = (pred, what, timeout = STEP_TIMEOUT) =>
  waitFor(P, pred, what, {
    timeout,
    every: 250,
    fatal: (s, w) => (w === 'error' ? null : pageError(s)),
  });

async function longTasks(since) {
  const tasks = await page.evaluate(() => window.__page.longTasks);
  return tasks.filter((t) => t.start >= since);
}

async function setField(id, value) {
  await page.fill(`#${id}`, String(value));
}

async function run() {
  assert(
    fixture && fs.existsSync(path.join(fixture, 'cli-vanilla.safetensors')),
    'ATTNLAB_FIXTURE must name a folder made by web/test/fixture.sh (with cli-vanilla.safetensors)',
  );
  const { ctx, close } = await openBrowser('page', { width: 1100, height: 900 });
  const cspErrors = [];
  try {
    page = ctx.pages()[0] || (await ctx.newPage());
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/.test(m.text())) cspErrors.push(m.text());
      if (m.type() === 'error' || m.type() === 'warning')
        console.log(`[page ${m.type()}] ${m.text()}`);
    });
    page.on('pageerror', (e) => console.log(`[page error] ${e.message}`));
    page.on('crash', () => console.log('[page crashed]'));
    let readyAt = 0;
    const tasksSeen = []; // long tasks of the page before the reload

    await step('open the page (served data folder offered and used)', async () => {
      await page.goto(url);
      const s = await waitPage((s) => s.ready, 'the page to be ready', 120000);
      assert(s.status === 'idle', `status is ${s.status}: ${s.error}`);
      assert(
        s.dataSource === 'served',
        `data source is ${s.dataSource}, expected the served fixture folder`,
      );
      readyAt = await page.evaluate(() => performance.now());
      const gpu = await page.textContent('#gpu-line');
      return gpu;
    });

    let firstLoss, pausedAt;
    await step(
      'pretrain the quick preset a few steps: the chart updates and the loss falls',
      async () => {
        await page.selectOption('#preset', 'quick');
        await setField('h-pre_batch', BATCH);
        await setField('h-max_steps', MAX_STEPS);
        await page.click('#btn-pretrain');
        let s = await waitPage(
          (s) => s.status === 'running' && s.losses.length >= 1,
          'the first loss',
        );
        firstLoss = s.losses[0][1];
        const chartBefore = await page.evaluate(() => document.getElementById('chart').toDataURL());
        // Wait for losses reported after that snapshot: on a fast backend the first poll can already
        // see ten steps, and two snapshots with nothing in between would prove nothing.
        const seen = (await P()).losses.length;
        s = await waitPage(
          (s) => s.steps >= 10 && s.losses.length >= Math.max(3, seen + 1),
          'ten steps and a new loss',
        );
        const chartAfter = await page.evaluate(() => document.getElementById('chart').toDataURL());
        assert(chartBefore !== chartAfter, 'the chart did not change while training');
        // The learning rate's course, said under the chart: at 4 rows (508 tokens) a step, the
        // warm-up's 10,240 tokens last until step 21 at the earliest (a short last batch adds steps).
        const sched = await page.evaluate(() => ({
          text: document.getElementById('schedule-note').textContent,
          shown: !document.getElementById('schedule-note').hidden,
          ph: window.__page.started.phases,
        }));
        assert(
          sched.shown && sched.ph.warm_until >= 21 && sched.ph.warm_until <= 40,
          `the schedule's warm-up: ${JSON.stringify(sched)}`,
        );
        assert(
          sched.text.startsWith('Learning rate, run.py’s schedule: step 1 at the full 6.0e-3') &&
            sched.text.includes(`steps 2-${sched.ph.warm_until} lower`),
          `the schedule note: ${sched.text}`,
        );
        const running = await page.textContent('#progress-text');
        assert(
          new RegExp(`epoch \\d+ of \\d+ · step \\d+ of ${MAX_STEPS} · ETA`).test(running),
          `progress text while running: ${running}`,
        );
        await page.click('#btn-pause');
        s = await waitPage((s) => s.status === 'paused', 'the pause');
        pausedAt = s.steps;
        assert(
          s.savedStep === pausedAt,
          `the pause saved step ${s.savedStep}, expected ${pausedAt}`,
        );
        const losses = s.losses.map((l) => l[1]);
        const tail = losses.slice(-2).reduce((a, b) => a + b, 0) / 2;
        assert(
          tail < firstLoss - 0.1,
          `loss did not fall: first ${firstLoss.toFixed(3)}, last two ${tail.toFixed(3)} ` +
            `(${losses.map((l) => l.toFixed(3)).join(' ')})`,
        );
        const prog = await page.textContent('#progress-text');
        assert(
          new RegExp(`paused at step ${pausedAt} of ${MAX_STEPS}$`).test(prog),
          `progress text when paused (no ETA): ${prog}`,
        );
        const note = await page.textContent('#preset-note');
        assert(
          !/Measuring/.test(note),
          `the preset note still says “${note}” after the measurement`,
        );
        await cardShot(page, '#train-card', path.join(outDir, 'page-training.png'));
        return (
          `loss ${firstLoss.toFixed(3)} → ${tail.toFixed(3)} over ${pausedAt} steps ` +
          `(${s.msPerStep.toFixed(0)} ms/step); ${prog}`
        );
      },
    );

    // A second tab of the page while this one has the run open (paused here): the tabs share the
    // saved run, so the second neither resumes it nor starts its own (web/page/runlock.js).
    let tabB = null;
    await step(
      'a second tab while this one has the run open: no Resume there, its Pretrain refused, the saved run untouched',
      async () => {
        tabB = await page.context().newPage();
        tabB.on('pageerror', (e) => console.log(`[second tab error] ${e.message}`));
        await tabB.goto(url);
        await tabB.waitForFunction(() => window.__page && window.__page.ready, null, {
          timeout: 120000,
        });
        const seen = await tabB.evaluate(() => ({
          banner: document.getElementById('resume-banner').hidden
            ? ''
            : document.getElementById('resume-text').textContent,
          resume: !document.getElementById('resume-saved').hidden,
          discard: !document.getElementById('discard-saved').hidden,
          trainResume: !document.getElementById('btn-resume').disabled,
          status: document.getElementById('train-status').textContent,
        }));
        assert(
          seen.banner.includes(
            `open in another tab of this page (step ${pausedAt} of ${MAX_STEPS}`,
          ) &&
            !seen.resume &&
            !seen.discard &&
            !seen.trainResume &&
            /open in another tab/.test(seen.status),
          `the second tab while the first has the run: ${JSON.stringify(seen)}`,
        );
        await tabB.click('#btn-pretrain');
        await tabB.waitForFunction(() => !document.getElementById('train-error').hidden, null, {
          timeout: 30000,
        });
        const refused = (await tabB.textContent('#train-error')).trim();
        const b = await tabB.evaluate(() => ({
          status: window.__page.status,
          steps: window.__page.steps,
        }));
        assert(
          /^another tab of this page has a training run open/.test(refused),
          `the second tab's Pretrain: ${refused}`,
        );
        assert(
          b.status === 'idle' && b.steps === 0,
          `the second tab started anyway: ${JSON.stringify(b)}`,
        );
        return `“${seen.banner.slice(0, 90)}…”; Pretrain there: “${refused.slice(0, 90)}…”`;
      },
    );

    await step('reload: the saved run is offered and resumes from its checkpoint', async () => {
      tasksSeen.push(...(await longTasks(readyAt)));
      await page.reload();
      await waitPage((s) => s.ready, 'the page after the reload', 120000);
      // The reload let go of the run: the second tab now offers it too (then it closes).
      if (tabB) {
        await tabB
          .waitForFunction(
            () =>
              !document.getElementById('resume-saved').hidden &&
              !document.getElementById('resume-banner').hidden,
            null,
            { timeout: 15000 },
          )
          .catch(() => {
            throw new Error('the second tab did not offer the run after this tab let go of it');
          });
        const said = await tabB.textContent('#train-status');
        assert(
          /let go of its run/.test(said),
          `the second tab's status after the first let go: ${said}`,
        );
        await tabB.close();
        tabB = null;
      }
      readyAt = await page.evaluate(() => performance.now());
      const banner = await page.isVisible('#resume-banner');
      assert(banner, 'no resume banner after the reload');
      // While the run waits, the shipped model is loaded and answers in Ask (issue 28 item 4).
      const waiting = await P();
      assert(
        waiting.shipped.state === 'loaded' && waiting.models.some((m) => m.slot === 'vanilla'),
        `the shipped model while a run waits: ${waiting.shipped.state}`,
      );
      await page.click('#ask-examples button[data-ask]');
      await page.waitForFunction(() => window.__page.ask || window.__page.askError, null, {
        timeout: STEP_TIMEOUT,
      });
      const answered = await page.evaluate(() =>
        window.__page.ask && window.__page.ask.vanilla
          ? window.__page.ask.vanilla.prediction
          : `error: ${window.__page.askError}`,
      );
      assert(answered && !answered.startsWith('error'), `Ask while the run waits: ${answered}`);
      await cardShot(page, '#ask-card', path.join(outDir, 'page-ask-while-saved.png'));
      await page.evaluate(() => {
        window.__page.ask = null;
        window.__page.askError = null;
      });
      const text = await page.textContent('#resume-text');
      assert(text.includes(`step ${pausedAt} of ${MAX_STEPS}`), `banner says: ${text}`);
      // While it waits, the form shows the saved run's batch and max steps (not the preset's).
      const waitingForm = await page.evaluate(() => ({
        batch: document.getElementById('h-pre_batch').value,
        max: document.getElementById('h-max_steps').value,
      }));
      assert(
        waitingForm.batch === String(BATCH) && waitingForm.max === String(MAX_STEPS),
        `the form while the saved run waits: batch ${waitingForm.batch}, max steps ${waitingForm.max}`,
      );
      // The Train card's Resume continues it too (a restored scroll position can hide the banner).
      assert(
        (await page.isEnabled('#btn-resume')) &&
          /press Resume/.test(await page.textContent('#train-status')),
        'the Train card offers no Resume for the saved run',
      );
      await page.click('#resume-saved');
      const s = await waitPage(
        (s) => s.status === 'running' && s.steps > pausedAt,
        'steps after the resume',
      );
      assert(s.resumedFrom === pausedAt, `resumed from ${s.resumedFrom}, expected ${pausedAt}`);
      // The banner hides with its button: focus goes to the Train card's Pause, not to the page's body.
      await page.waitForTimeout(100);
      const focusResumed = await page.evaluate(
        () => document.activeElement.id || document.activeElement.tagName,
      );
      assert(
        focusResumed === 'btn-pause',
        `focus after the banner's Resume is on ${focusResumed}, not Pause`,
      );
      // The form shows the run it resumed (its batch and max steps), not the preset's defaults.
      const form = await page.evaluate(() => ({
        batch: document.getElementById('h-pre_batch').value,
        max: document.getElementById('h-max_steps').value,
      }));
      assert(
        form.batch === String(BATCH) && form.max === String(MAX_STEPS),
        `the form after the resume: batch ${form.batch}, max steps ${form.max} (the run: ${BATCH}, ${MAX_STEPS})`,
      );
      assert(
        s.losses.length >= 3 && s.losses[0][1] === firstLoss,
        'the loss history was not restored with the run',
      );
      return `resumed at step ${s.resumedFrom}, now ${s.steps}`;
    });

    await step('device lost: the page says so, keeps the checkpoint and resumes', async () => {
      if ((await P()).backend === 'cpu') {
        // ATTNLAB_BACKEND=cpu: the CPU backend has no device to lose; just finish the run.
        const s = await waitPage(
          (s) => s.finished >= 1 && s.status === 'idle',
          'the end of pretraining',
        );
        assert(s.steps === MAX_STEPS, `finished at step ${s.steps}, expected ${MAX_STEPS}`);
        return `skipped on the CPU backend (nothing to lose); finished at ${s.steps}`;
      }
      await page.evaluate(() => window.__page.destroyDevice());
      let s = await waitPage(
        (s) => s.deviceLost && s.status === 'idle',
        'the device-lost report',
        60000,
      );
      const msg = await page.textContent('#train-error');
      assert(
        /device was lost/.test(msg) && /last checkpoint \(step \d+/.test(msg),
        `message: ${msg}`,
      );
      assert(await page.isVisible('#resume-banner'), 'no resume offered after the device was lost');
      await page.click('#resume-saved');
      s = await waitPage(
        (s) => s.status === 'running' && s.resumedFrom !== null,
        'the resume after the device loss',
      );
      const from = s.resumedFrom;
      s = await waitPage((s) => s.finished >= 1 && s.status === 'idle', 'the end of pretraining');
      assert(s.steps === MAX_STEPS, `finished at step ${s.steps}, expected ${MAX_STEPS}`);
      assert(
        s.models.some((m) => m.variant === 'vanilla'),
        'no vanilla model after pretraining',
      );
      return `“${msg.trim().slice(0, 90)}…”; resumed at step ${from}, finished at ${s.steps}`;
    });

    // From evaluate to the dropped file (page-after-run.mjs).
    await afterFirstRunSteps({
      page,
      step,
      P,
      waitPage,
      setField,
      fixture,
      outDir,
      STEP_TIMEOUT,
      BATCH,
    });

    await step(
      'phone width: with every card filled (tables, maps), nothing is wider than a 390 px screen',
      async () => {
        const r = await atPhoneWidth(page);
        await page.screenshot({ path: path.join(outDir, 'page-phone.png') });
        await page.setViewportSize({ width: 1100, height: 900 });
        assert(
          r.width <= 390,
          `the page is ${r.width} px wide at 390 px; widest: ${r.wide.join(', ')}`,
        );
        return `${r.width} px`;
      },
    );

    await step(
      'a saved run discarded: the banner and the status stop offering it, and a reload does not bring it back',
      async () => {
        await page.check('input[name=variant][value=vanilla]');
        await setField('h-pre_batch', 2);
        await setField('h-max_steps', 400);
        await page.click('#btn-pretrain');
        // Saved with its losses (a save every few seconds), so the reload has a curve to show.
        await waitPage((s) => s.status === 'running' && s.savedStep >= 2, 'a running run, saved');
        // Leaving the page saves the run at once; the reload offers it.
        await page.reload();
        await waitPage((s) => s.ready, 'the page after the reload', 120000);
        assert(await page.isVisible('#resume-banner'), 'no resume banner after the reload');
        const series = await page.evaluate(() => window.__page.chartSeries);
        assert(
          series.includes('saved run'),
          `the saved run's curve is not on the chart: ${JSON.stringify(series)}`,
        );
        await page.focus('#discard-saved');
        await page.keyboard.press('Enter');
        await page.waitForFunction(() => document.getElementById('resume-banner').hidden, null, {
          timeout: 30000,
        });
        await page.waitForTimeout(200);
        const after = await page.evaluate(() => ({
          status: document.getElementById('train-status').textContent,
          focus: document.activeElement.id || document.activeElement.tagName,
          series: window.__page.chartSeries,
        }));
        assert(
          !after.series.includes('saved run'),
          `the discarded run's curve stays on the chart: ${after.series}`,
        );
        assert(
          /discarded/.test(after.status) && !/press Resume/.test(after.status),
          `the status after Discard: “${after.status}”`,
        );
        assert(after.focus !== 'BODY', "focus fell to the page's body after Discard");
        await page.reload();
        await waitPage((s) => s.ready, 'the page after a second reload', 120000);
        assert(
          await page.isHidden('#resume-banner'),
          'the discarded run is offered again after a reload',
        );
        readyAt = await page.evaluate(() => performance.now());
        return `“${after.status}”; focus on ${after.focus}`;
      },
    );

    await step(
      "the student's own data file is kept across a reload, and a source button forgets it",
      async () => {
        const devRow = () =>
          page.evaluate(
            () =>
              [...document.querySelectorAll('#data-table tbody tr')].find((r) =>
                /dev/.test(r.cells[0].textContent),
              ).cells[1].textContent,
          );
        const mine =
          fs
            .readFileSync(path.join(fixture, 'data', 'birth_dev.tsv'), 'utf8')
            .split('\n')
            .slice(0, 3)
            .join('\n') + '\n';
        await page.setInputFiles('#file-dev', {
          name: 'my_dev.tsv',
          mimeType: 'text/tab-separated-values',
          buffer: Buffer.from(mine),
        });
        await page.waitForFunction(
          () => /my_dev\.tsv/.test(document.getElementById('data-table').textContent),
          null,
          { timeout: 30000 },
        );
        const said = await page.textContent('#data-summary');
        assert(
          /kept in this browser/.test(said) && /reload reads them again/.test(said),
          `the Data card says: “${said}”`,
        );
        await page.reload();
        await waitPage((s) => s.ready, 'the page after the reload', 120000);
        const kept = await devRow();
        assert(/my_dev\.tsv/.test(kept), `after a reload the dev file is ${kept}`);
        await page.click('#use-served');
        await page.reload();
        await waitPage((s) => s.ready, 'the page after a second reload', 120000);
        const back = await devRow();
        assert(
          !/my_dev\.tsv/.test(back),
          `the served files were chosen, yet a reload brought back ${back}`,
        );
        readyAt = await page.evaluate(() => performance.now());
        return `my_dev.tsv kept over a reload; after “served files” and a reload: ${back}`;
      },
    );

    await step("the engine never ran on the page's thread, and no CSP violation", async () => {
      // Structural, not timed: the wasm module is fetched by the engine's worker only (a worker's
      // fetches are not in the page's resource timeline; a planted main-thread import shows up in
      // it). The long tasks are reported, not judged: on a loaded machine any task can be slow.
      const onPage = await page.evaluate(() =>
        performance
          .getEntriesByType('resource')
          .map((e) => e.name)
          .filter((n) => /\.wasm(\?|$)/.test(n)),
      );
      assert(
        onPage.length === 0,
        `the page's thread fetched the wasm module: ${onPage.join(', ')}`,
      );
      const tasks = [...tasksSeen, ...(await longTasks(readyAt))];
      assert(cspErrors.length === 0, `CSP: ${cspErrors.join(' | ')}`);
      await page.screenshot({ path: path.join(outDir, 'page.png'), fullPage: true });
      const worst = tasks.reduce((m, t) => Math.max(m, t.ms), 0);
      return (
        `no wasm fetched by the page's thread; ${tasks.length} long tasks (over 50 ms) ` +
        `after the page was ready, the longest ${worst} ms (reported: ` +
        `${tasks.map((t) => `${t.ms} ms${t.during ? ` in ${t.during}` : ''}`).join(', ')})`
      );
    });
    return 0;
  } finally {
    await close();
  }
}

await harness.main(run, { note: `; screenshots in ${outDir}` });
