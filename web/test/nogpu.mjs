// Browser test of the page WITHOUT WebGPU: headless Chromium started without --enable-unsafe-webgpu,
// so navigator.gpu finds no adapter and the page must run everything on the CPU backend (f32
// kernels, wasm SIMD128 or relaxed SIMD, one thread):
//   the page says it runs on the CPU backend and why (an informational note, not an error) →
//   the shipped model (web/models/) is loaded on this first visit without a click: Ask answers a
//   name of the built-in dev set with its attention maps, and its facts (dev accuracy, the London
//   baseline, the same size without pretraining, the command) are on screen →
//   kernel checks (CPU kernels vs f64 references) → all ten demos draw, and a control recomputes →
//   pretrain a few steps (loss finite and falling, the chart updates) → the quick preset's own
//   batch for two steps (timed) → evaluate → ask (prediction + attention maps) → width 4096 is
//   refused before anything starts, with the estimate and the limit, and the page stays usable →
//   the Benchmark card → the Backend selector (CPU chosen, persisted across a reload) → "Load the
//   shipped model again" replaces the trained model and is kept across a reload →
//   with a software WebGPU adapter (SwiftShader), "auto" still picks the CPU backend and says why,
//   and a broken shipped model and facts file give a quiet note, not a broken page.
// The steps from the kernel checks to dropout's refusal are in nogpu-engine.mjs, run in place.
// Prints each step with its time, saves screenshots to web/test/out/nogpu-*.png, exits 0 only if
// every step passed. Usage: node web/test/nogpu.mjs [base URL, default http://127.0.0.1:8080/]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openBrowser } from './browser.mjs';
import {
  askAnswer,
  assert,
  atPhoneWidth,
  outDir as testOut,
  pageState,
  steps,
  waitFor,
} from './harness.mjs';
import { engineSteps } from './nogpu-engine.mjs';

const base = process.argv[2] || 'http://127.0.0.1:8080/';
const url = new URL('index.html', base).href;
const outDir = testOut();
const TIMEOUT = 180000;
const timings = {};
let page;
const { step, main } = steps({
  label: 'nogpu',
  dir: outDir,
  page: () => page,
  what: 'NO-WEBGPU STEPS',
});

const P = () => pageState(page);
const waitPage = (pred, what, timeout = TIMEOUT) => waitFor(P, pred, what, { timeout });

const vanillaAnswer = () => askAnswer(page);

const pct = (o) =>
  Number.isFinite(o.correct) && o.total > 0
    ? `${((100 * o.correct) / o.total).toFixed(1)}%`
    : 'not measured';

// The wasm files the page's own thread fetched: none, when the engine runs in its worker (a worker's
// fetches are not in the page's resource timeline).
const wasmOnPage = () =>
  page.evaluate(() =>
    performance
      .getEntriesByType('resource')
      .map((e) => e.name)
      .filter((n) => /\.wasm(\?|$)/.test(n)),
  );

async function setField(id, value) {
  await page.fill(`#${id}`, String(value));
}

async function run() {
  const { ctx, close } = await openBrowser(
    'nogpu',
    { width: 1100, height: 900 },
    { webgpu: false },
  );
  try {
    page = ctx.pages()[0] || (await ctx.newPage());
    page.on('console', (m) => {
      if (m.type() === 'error') console.log(`[page ${m.type()}] ${m.text()}`);
    });
    page.on('pageerror', (e) => console.log(`[page error] ${e.message}`));
    page.on('crash', () => console.log('[page crashed]'));

    await step(
      'open the page without WebGPU: it runs on the CPU backend and says so, and why',
      async () => {
        const t0 = Date.now();
        await page.goto(url);
        await waitPage((s) => s.ready, 'the page to be ready', 120000);
        const d = await page.evaluate(() => window.__device);
        assert(d.kind === 'cpu' && d.choice === 'auto', `device ${JSON.stringify(d)}`);
        assert(
          !d.webgpu.adapter,
          'the browser found a WebGPU adapter; this test needs Chromium without one',
        );
        const line = await page.textContent('#device-line');
        const why = await page.textContent('#device-reason');
        const note = await page.textContent('#device-note');
        // The wasm build in use (relaxed SIMD where the browser has it, as Chromium does), named the
        // same way in the line and the note.
        const build = (line.match(/CPU backend \(1 thread, (wasm relaxed SIMD|wasm SIMD128)\)/) ||
          [])[1];
        assert(build, `device line: ${line}`);
        assert(/no WebGPU/.test(why), `reason: ${why}`);
        assert(note.includes(`one thread of ${build}`), `note: ${note}`);
        const workers = await page.textContent('#device-workers');
        assert(
          new RegExp(
            '^Workers: \\d+ engines? trains? each step ' +
              "(and share each evaluation's questions )?\\(auto: the browser reports \\d+ core",
          ).test(workers),
          `workers line: ${workers}`,
        );
        const notice = await page.evaluate(() => {
          const n = document.getElementById('nogpu');
          return { hidden: n.hidden, cls: n.className, text: n.innerText };
        });
        assert(
          !notice.hidden &&
            !/error/.test(notice.cls) &&
            /No WebGPU here.*CPU backend/s.test(notice.text),
          `notice: ${JSON.stringify(notice)}`,
        );
        assert(
          await page.isHidden('#gpu-details'),
          'the WebGPU adapter details are shown on the CPU backend',
        );
        assert(
          await page.isDisabled('select#backend option[value=webgpu]'),
          'WebGPU can be chosen although there is no adapter',
        );
        const s = await P();
        assert(
          s.status === 'idle' && s.backend === 'cpu',
          `training page: ${s.status} on ${s.backend}: ${s.error}`,
        );
        assert(await page.isEnabled('#btn-pretrain'), 'Pretrain is off');
        await page.screenshot({ path: path.join(outDir, 'nogpu-top.png') });
        return `${line.trim()} — ${why.trim()} (${((Date.now() - t0) / 1000).toFixed(1)} s to ready)`;
      },
    );

    await step(
      'first visit: the shipped model answers without a click, with its facts beside it',
      async () => {
        const s = await P();
        const sh = s.shipped;
        assert(sh.state === 'loaded', `shipped model: ${sh.state}: ${sh.note}`);
        const m = s.models.find((x) => x.variant === 'vanilla');
        assert(
          m && m.label === sh.label && /shipped/.test(m.label),
          `vanilla model: ${JSON.stringify(m)}`,
        );
        const facts = await page.evaluate(async () =>
          (await fetch('web/models/builtin-vanilla.json')).json(),
        );
        // The facts file agrees with the checkpoint and with the built-in corpus: its size is the
        // model's, its baseline is the London count of the built-in dev set (computed here with the
        // page's own engine, web/backend.js), and every count is out of that dev set's questions.
        const size = `${m.n_layer} layers, ${m.n_head} heads, width ${m.n_embd}`;
        assert(facts.size === size, `the facts say ${facts.size}, the checkpoint is ${size}`);
        const dev = await page.evaluate(async () => {
          const { loadDevice } = await import(new URL('web/backend.js', location.href).href);
          const { engine } = await loadDevice();
          const rows = (await engine.default_corpus()).dev
            .split('\n')
            .filter((l) => l.includes('\t'))
            .map((l) => l.split('\t'));
          return {
            n: rows.length,
            london: rows.filter((r) => r[1] === 'London').length,
            first: rows.slice(0, 3).map((r) => r[0]),
          };
        });
        assert(
          facts.baseline.place === 'London' &&
            facts.baseline.correct === dev.london &&
            facts.baseline.total === dev.n,
          `baseline ${JSON.stringify(facts.baseline)}, the built-in dev set has ${dev.london} London of ${dev.n}`,
        );
        for (const k of ['dev_accuracy', 'no_pretraining'])
          assert(facts[k].total === dev.n, `${k}: ${JSON.stringify(facts[k])} (dev has ${dev.n})`);
        // The facts line, in the Ask card and in the Models card.
        // The two runs without pretraining, each said with what it is (the second is S2a's model).
        const cnt = (o) => `${o.correct} of ${o.total}`;
        const again = facts.no_pretraining_again;
        const line =
          `dev accuracy ${pct(facts.dev_accuracy)} on the built-in corpus (most-common-place ` +
          `baseline London ${pct(facts.baseline)}, same size without ` +
          `pretraining ${pct(facts.no_pretraining)}` +
          (again
            ? ` (${cnt(facts.no_pretraining)}) with the finetune command alone; ` +
              `${pct(again)} (${cnt(again)}) in a second run of it, the model S2a compares`
            : '') +
          `)`;
        // Ask names it in one line with its dev score; the Models card gives the whole line.
        for (const [id, want] of [
          ['ask-shipped', `Answering with: shipped model, ${pct(facts.dev_accuracy)} dev`],
          ['shipped-facts', line],
        ]) {
          assert(await page.isVisible(`#${id}`), `#${id} is hidden`);
          const text = (await page.innerText(`#${id}`)).replace(/\s+/g, ' ');
          assert(text.includes(want), `#${id} says “${text}”, expected “${want}”`);
          if (facts.stand_in)
            assert(
              /stand-in/i.test(text) && /placeholder/.test(text),
              `#${id} does not say it is a stand-in: ${text}`,
            );
          else assert(!/stand-in/i.test(text), `#${id} calls the real model a stand-in`);
        }
        const cmd = [].concat(facts.command)[0];
        assert(
          cmd && (await page.textContent('#shipped-facts')).includes(cmd),
          'the command that made the model is not in the Models card',
        );
        assert(
          await page.isHidden('#load-shipped'),
          '“Load the shipped model again” is offered while it is loaded',
        );
        // Ask: the box is filled with a name of the built-in dev set, and the example buttons ask at once.
        const typed = await page.inputValue('#ask-text');
        assert(
          `Where was ${typed} born?` === dev.first[0],
          `the Ask box holds “${typed}”, not the first dev name (${dev.first[0]})`,
        );
        assert(await page.isEnabled('#btn-ask'), 'Ask is off');
        await page.click('#ask-examples button[data-ask]:nth-of-type(2)');
        await page.waitForFunction(() => window.__page.ask || window.__page.askError, null, {
          timeout: TIMEOUT,
        });
        const a = await vanillaAnswer();
        assert(!a.error, `ask failed: ${a.error}`);
        assert(
          a.question === dev.first[1] && typeof a.prediction === 'string',
          `answer: ${JSON.stringify(a)}`,
        );
        assert(
          a.layers === m.n_layer && a.heads === m.n_head && a.worst < 1e-4,
          `maps: ${JSON.stringify(a)}`,
        );
        const thumbs = await page.locator('#ask-result canvas.thumb').count();
        assert(thumbs === m.n_layer * m.n_head, `${thumbs} heatmap thumbnails`);
        const gold = await page.textContent('#ask-result .answer');
        assert(
          /says \S/.test(gold) && /[✓✗]/.test(gold),
          `no gold answer beside the prediction: ${gold}`,
        );
        await page
          .locator('#ask-card')
          .screenshot({ path: path.join(outDir, 'nogpu-shipped-ask.png') });
        await page
          .locator('#models-card')
          .screenshot({ path: path.join(outDir, 'nogpu-shipped-models.png') });
        await page.evaluate(() => {
          window.__page.ask = null;
        }); // the later Ask step waits for a new answer
        return (
          `${m.label} (${size}): “${a.question}” → ` +
          `“${a.prediction}”; ${line}${facts.stand_in ? ' [stand-in]' : ''}`
        );
      },
    );

    await step(
      'a long evaluation with the shipped model: the first questions are timed and the estimate shown before it runs',
      async () => {
        await page.click('#use-embedded');
        await page.evaluate(() => {
          window.__page.evalEstimate = null;
          window.__page.evalReport = null;
        });
        const since = await page.evaluate(() => performance.now());
        await page.selectOption('#eval-file', 'dev');
        await setField('eval-max', '');
        await page.click('#btn-eval');
        await page.waitForFunction(
          () => window.__page.evalEstimate || window.__page.evalError,
          null,
          { timeout: TIMEOUT },
        );
        const est = await page.evaluate(() => window.__page.evalEstimate);
        assert(
          est && est.questions > 20 && est.seconds > 0,
          `no estimate: ${JSON.stringify(est)} ${await page.evaluate(() => window.__page.evalError)}`,
        );
        const line = await page.innerText('#eval-estimate');
        assert(
          line.includes(`${est.questions} questions`) && /about \d/.test(line),
          `the line under the button: “${line}”`,
        );
        let said = line;
        if (est.asked) {
          said = await page.innerText('#eval-confirm');
          assert(
            /would take about \d/.test(said) && /Evaluate all/.test(said),
            `the estimate box says “${said}”`,
          );
          await page
            .locator('#eval-card')
            .screenshot({ path: path.join(outDir, 'nogpu-eval-estimate.png') });
          await page.click('#eval-confirm button[data-eval="0"]');
          assert(
            (await page.isHidden('#eval-confirm')) &&
              !(await page.evaluate(() => window.__page.evalReport)),
            'Cancel evaluated anyway',
          );
        } else {
          await page.waitForFunction(
            () => window.__page.evalReport || window.__page.evalError,
            null,
            { timeout: TIMEOUT },
          );
        }
        // The evaluation runs in the engine's worker (one 18 s main-thread task before it did):
        // checked structurally, the page's thread never fetched the wasm module; the longest
        // main-thread task is reported, not judged (timed bars belong in benchmarks).
        assert(
          (await wasmOnPage()).length === 0,
          `the page's thread fetched the wasm module: ${await wasmOnPage()}`,
        );
        const worst = await page.evaluate(
          (t) =>
            window.__page.longTasks
              .filter((k) => k.start >= t)
              .reduce((m, k) => Math.max(m, k.ms), 0),
          since,
        );
        await page.click('#use-served');
        await setField('eval-max', 8);
        return (
          `${est.questions} questions: about ${est.seconds.toFixed(0)} s here ` +
          `(${est.perQuestion.toFixed(2)} s a question); “${said.split('\n')[0]}”; ` +
          `${est.asked ? 'asked first' : 'evaluated all'}, longest main-thread task meanwhile ${worst} ms`
        );
      },
    );

    await step('numbers as people read them: durations, scores, round axis ticks', async () => {
      const got = await page.evaluate(async () => {
        const ui = await import(new URL('web/page/ui.js', location.href).href);
        return {
          d: [4.2, 42, 725, 4021500, 269.017].map(ui.duration),
          step: [8.5, 269, 269017].map(ui.fmt.step),
          score: ui.score(2, 30),
          ticks: [ui.niceTicks(0, 1117, 4), ui.niceTicks(2.87, 4.31, 4)],
        };
      });
      const want = {
        d: ['4.2 s', '42 s', '12 min 05 s', '46 days 13 h', '4 min 29 s'],
        step: ['8.50 ms', '269 ms', '4 min 29 s'],
        score: '2 of 30 correct (6.7%)',
        ticks: [
          [0, 500, 1000],
          [3, 3.5, 4],
        ],
      };
      assert(
        JSON.stringify(got) === JSON.stringify(want),
        `got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`,
      );
      return `${got.d.join(', ')}; ${got.score}; ticks ${JSON.stringify(got.ticks)}`;
    });

    // From the kernel checks to dropout's refusal (nogpu-engine.mjs).
    await engineSteps({
      page,
      step,
      P,
      waitPage,
      setField,
      vanillaAnswer,
      wasmOnPage,
      outDir,
      TIMEOUT,
      timings,
    });

    await step('the Benchmark card runs on the CPU backend', async () => {
      await page.fill('#bench-rows', '2');
      await page.fill('#bench-repeats', '1');
      await page.selectOption('#bench-size', 'quick');
      await page.click('#btn-bench');
      await page.waitForFunction(() => window.__bench.done, null, { timeout: TIMEOUT });
      const b = await page.evaluate(() => window.__bench);
      assert(!b.error && b.result, `benchmark: ${b.error}`);
      const r = b.result;
      assert(/CPU backend/.test(r.adapter), `adapter: ${r.adapter}`);
      assert(
        r.matmul.every((m) => m.gflops > 0 && Number.isFinite(m.gflops)) &&
          r.steps.every((s) => s.ms_per_step > 0),
        'non-positive numbers',
      );
      timings.bench = r;
      await page.locator('#bench-card').screenshot({ path: path.join(outDir, 'nogpu-bench.png') });
      return (
        `${r.adapter}: matmul ${r.matmul.map((m) => m.gflops.toFixed(1)).join(', ')} GFLOP/s; ` +
        `step ${r.steps.map((s) => `${s.variant} ${s.ms_per_step.toFixed(0)} ms`).join(', ')} (2 ` +
        `× 127)`
      );
    });

    await step('phone width: nothing is wider than a 390 px screen', async () => {
      await page.screenshot({ path: path.join(outDir, 'nogpu-full.png'), fullPage: true });
      const r = await atPhoneWidth(page);
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: path.join(outDir, 'nogpu-phone.png') });
      await page.setViewportSize({ width: 1100, height: 900 });
      assert(
        r.width <= 390,
        `the page is ${r.width} px wide at 390 px; widest: ${r.wide.join(', ')}`,
      );
      return `${r.width} px`;
    });

    await step(
      'the Backend selector: CPU chosen and applied, the page reloads on it, and the choice is kept',
      async () => {
        // Choosing reloads nothing (an arrow key on the selector changes it too): Apply does, and says
        // what a reload keeps; choosing what runs again takes the offer back.
        await page.evaluate(() => {
          window.__marker = 1;
        });
        await page.selectOption('#backend', 'cpu');
        await page.waitForTimeout(500);
        assert(
          await page.evaluate(() => window.__marker),
          'choosing in the Backend selector reloaded the page',
        );
        assert(
          (await page.isVisible('#device-apply')) &&
            /reloads the page/.test(await page.textContent('#device-apply-note')),
          'no Apply offered for the new choice',
        );
        await page.selectOption('#backend', 'auto');
        assert(
          !(await page.isVisible('#device-apply')),
          'Apply still offered with the running choice selected again',
        );
        await page.selectOption('#backend', 'cpu');
        await Promise.all([
          page.waitForNavigation({ timeout: 60000 }),
          page.click('#device-apply'),
        ]);
        await waitPage((s) => s.ready, 'the page after the switch', 120000);
        let d = await page.evaluate(() => window.__device);
        assert(
          d.kind === 'cpu' && d.choice === 'cpu' && /you chose the CPU/.test(d.reason),
          `after choosing CPU: ${JSON.stringify(d)}`,
        );
        assert(
          (await page.evaluate(() => localStorage.getItem('attnlab-backend'))) === 'cpu',
          'the choice was not stored',
        );
        assert(
          (await page.inputValue('#backend')) === 'cpu',
          'the selector does not show the choice',
        );
        const models = (await P()).models.map((m) => m.variant);
        assert(
          models.includes('vanilla'),
          `the saved model was not restored after the switch (${models})`,
        );
        await page.reload();
        await waitPage((s) => s.ready, 'the page after a reload', 120000);
        d = await page.evaluate(() => window.__device);
        assert(d.choice === 'cpu', `the choice did not survive a reload: ${d.choice}`);
        await page.selectOption('#backend', 'auto');
        await Promise.all([
          page.waitForNavigation({ timeout: 60000 }),
          page.click('#device-apply'),
        ]);
        await waitPage((s) => s.ready, 'the page after switching back', 120000);
        d = await page.evaluate(() => window.__device);
        assert(d.choice === 'auto' && d.kind === 'cpu', `back to auto: ${JSON.stringify(d)}`);
        return `“${(await page.textContent('#device-reason')).trim()}” after auto; CPU kept across a reload`;
      },
    );

    await step(
      '“Load the shipped model again”: it replaces the trained model and stays across a reload',
      async () => {
        let s = await P();
        assert(
          s.shipped.state === 'skipped' &&
            !s.models.find((m) => m.variant === 'vanilla').label.includes('shipped'),
          `before: ${s.shipped.state}, ${JSON.stringify(s.models)}`,
        );
        assert(
          await page.isVisible('#load-shipped'),
          'the button is not offered while a trained model is loaded',
        );
        await page.click('#load-shipped');
        // The state turns 'loaded' just before the models list is refreshed: wait for both.
        s = await waitPage(
          (x) =>
            x.shipped.state === 'loaded' &&
            x.models.find((m) => m.variant === 'vanilla').label === x.shipped.label,
          'the shipped model',
          60000,
        ).catch(() => P());
        assert(
          s.models.find((m) => m.variant === 'vanilla').label === s.shipped.label &&
            (await page.isHidden('#load-shipped')),
          `after the click: ${JSON.stringify(s.models)}`,
        );
        await page.reload();
        s = await waitPage((x) => x.ready, 'the page after a reload', 120000);
        assert(
          s.shipped.state === 'loaded' &&
            s.models.find((m) => m.variant === 'vanilla').label === s.shipped.label,
          `after a reload: ${s.shipped.state}`,
        );
        return s.shipped.label;
      },
    );
  } finally {
    await close();
  }

  // With a software WebGPU adapter (SwiftShader, a fallback adapter), "auto" keeps to the CPU
  // backend and says why; ?backend=webgpu takes the adapter.
  await step(
    'with only a software WebGPU adapter, auto picks the CPU backend and says why',
    async () => {
      const { ctx: ctx2, close: close2 } = await openBrowser('nogpu-swiftshader', {
        width: 1100,
        height: 900,
      });
      try {
        page = ctx2.pages()[0] || (await ctx2.newPage());
        // A broken shipped model (half a checkpoint) and a missing facts file: a quiet note, nothing more.
        const shipped = fs.readFileSync(
          path.join(
            path.dirname(fileURLToPath(import.meta.url)),
            '..',
            'models',
            'builtin-vanilla.safetensors',
          ),
        );
        await ctx2.route('**/web/models/builtin-vanilla.safetensors', (r) =>
          r.fulfill({
            status: 200,
            contentType: 'application/octet-stream',
            body: shipped.subarray(0, shipped.length >> 1),
          }),
        );
        await ctx2.route('**/web/models/builtin-vanilla.json', (r) =>
          r.fulfill({ status: 404, body: 'not found' }),
        );
        await page.goto(url);
        await page.waitForFunction(
          () => window.__device && window.__device.ready && window.__page && window.__page.ready,
          null,
          { timeout: 120000 },
        );
        const p = await P();
        assert(
          p.shipped.state === 'unavailable' &&
            /could not be loaded/.test(p.shipped.note) &&
            p.status === 'idle' &&
            !p.error &&
            !p.modelError,
          `broken shipped model: ${JSON.stringify(p.shipped)}, status ${p.status}, error ${p.error}`,
        );
        assert(
          (await page.isVisible('#shipped-note')) &&
            (await page.isHidden('#model-error')) &&
            (await page.isHidden('#ask-shipped')) &&
            (await page.isEnabled('#btn-pretrain')),
          'the broken shipped model is not a quiet note',
        );
        const d = await page.evaluate(() => window.__device);
        assert(
          d.webgpu.adapter && d.webgpu.fallback,
          `expected SwiftShader as a fallback adapter: ${JSON.stringify(d.webgpu)}`,
        );
        assert(
          d.kind === 'cpu' && /software fallback/.test(d.reason),
          `auto with a fallback adapter: ${JSON.stringify(d)}`,
        );
        assert(
          await page.isHidden('#nogpu'),
          'the no-WebGPU note is shown although the browser has WebGPU',
        );
        assert(
          await page.isEnabled('select#backend option[value=webgpu]'),
          'WebGPU cannot be chosen although there is an adapter',
        );
        await page.goto(new URL('index.html?backend=webgpu', base).href);
        await page.waitForFunction(() => window.__device && window.__device.ready, null, {
          timeout: 120000,
        });
        const g = await page.evaluate(() => window.__device);
        assert(
          g.kind === 'gpu' &&
            /you chose WebGPU/.test(g.reason) &&
            (await page.isVisible('#gpu-details')),
          `?backend=webgpu: ${JSON.stringify(g)}`,
        );
        return (
          `auto: “${d.reason}”; ?backend=webgpu: “${g.reason}”; broken shipped files: ` +
          `“${p.shipped.note}”`
        );
      } finally {
        await close2();
      }
    },
  );
  return 0;
}

await main(run, {
  note: `; screenshots in ${outDir}`,
  after: () => {
    if (timings.quick)
      console.log(
        `timing (CPU backend, wasm, 1 thread): quick preset ${timings.quick.toFixed(0)} ms/step ` +
          `at its batch; ${timings.batch8 ? timings.batch8.toFixed(0) : '?'} ms/step at batch 8`,
      );
  },
});
