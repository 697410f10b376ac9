// The page as a student meets it (issue 28): presets that say their time and fit the device,
// evaluations that keep their work. On the backend ATTNLAB_BACKEND names (webgpu by default, see
// browser.mjs), with the shipped model and the built-in corpus, no server data needed:
//   presets: three labels with this device's times, the quick one saying it shows the flow, the
//     middle one (2 layers of the shipped model's width on the built-in birth notes, which choosing it
//     switches the Data card to) its measured dev accuracy, the full one the largest batch that fits (or the CLI);
//     the same labels after a reload; the larger models' times are their measured step per row
//     scaled by the rows and the data's packed share (no fitted intercept to amplify noise);
//   evaluate: a dev file with characters the model lacks (skipped, counted, each character named
//     once with its file, line and column), the timed first questions counted toward the run (not
//     asked again), Stop keeping and showing the answered questions, a questions-only file with no
//     score block, a one-line text refused as a questions file with what is wrong;
//   two models of one variant (the shipped one kept for comparison beside a loaded one) in Ask and
//     Evaluate, each named;
//   on the CPU backend, the full preset at the batch offered starts (no refusal) and stops; on
//     WebGPU, a device lost during an evaluation keeps and shows the questions answered before.
// Screenshots at 1280 and 390 px in web/test/out/[cpu/]student-*.png.
// The evaluate steps are in student-eval.mjs, the presets' step with the other variant in
// student-presets.mjs, run in place.
// Usage: [ATTNLAB_BACKEND=cpu] node web/test/student.mjs [base URL, default http://127.0.0.1:8080/]
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { openBrowser, pageUrl } from './browser.mjs';
import { assert, stillShot, outDir as testOut, steps } from './harness.mjs';
import { evaluationSteps } from './student-eval.mjs';
import { variantSteps } from './student-presets.mjs';
import { cpuSteps } from './student-cpu.mjs';

const axeSource = fs.readFileSync(
  createRequire(import.meta.url).resolve('axe-core/axe.min.js'),
  'utf8',
);

const base = process.argv[2] || 'http://127.0.0.1:8080/';
const backend = process.env.ATTNLAB_BACKEND || 'webgpu';
const outDir = testOut();
const TIMEOUT = 300000;

let page;
// A failed step is counted and the next one runs (the steps are independent).
const { step, summary } = steps({
  label: 'student',
  dir: outDir,
  page: () => page,
  what: 'STUDENT STEPS',
  keepGoing: true,
});
const S = (f, arg) => page.evaluate(f, arg);

async function upload(id, name, text) {
  await page.setInputFiles(`#${id}`, {
    name,
    mimeType: 'text/plain',
    buffer: Buffer.from(text, 'utf8'),
  });
}

// Evaluate what the form says, answering "all" when the estimate asks; resolves to the report.
async function evaluateAll() {
  await S(() => {
    window.__page.evalReport = null;
    window.__page.evalError = null;
    window.__page.evalAsked = 0;
  });
  await page.click('#btn-eval');
  await page.waitForFunction(
    () =>
      window.__page.evalReport ||
      window.__page.evalError ||
      !document.getElementById('eval-confirm').hidden,
    null,
    { timeout: TIMEOUT },
  );
  if (await page.isVisible('#eval-confirm'))
    await page.click('#eval-confirm button[data-eval]:not([data-eval="0"])');
  await page.waitForFunction(() => window.__page.evalReport || window.__page.evalError, null, {
    timeout: TIMEOUT,
  });
  const r = await S(() => ({
    rep: window.__page.evalReport,
    error: window.__page.evalError,
    asked: window.__page.evalAsked,
    est: window.__page.evalEstimate,
  }));
  assert(!r.error, `evaluation error: ${r.error}`);
  return r;
}

const t0 = Date.now();
const { ctx, close } = await openBrowser(
  'student',
  { width: 1280, height: 900 },
  { measured: false },
);
try {
  page = ctx.pages()[0] || (await ctx.newPage());
  page.on('pageerror', (e) => console.log(`page error: ${e}`));
  await page.goto(pageUrl(base));
  await page.waitForFunction(() => window.__page && window.__page.ready, null, {
    timeout: TIMEOUT,
  });
  await page.waitForFunction(
    () => window.__page.shipped && window.__page.shipped.state === 'loaded',
    null,
    { timeout: TIMEOUT },
  );

  let labels;
  await step(
    'presets: each says its time here; quick shows the flow, middle its measured accuracy, full fits or names the CLI',
    async () => {
      await page.locator('#train-card').scrollIntoViewIfNeeded();
      await page.waitForFunction(() => window.__page.presetLabels && window.__page.fit, null, {
        timeout: TIMEOUT,
      });
      const z = await S(() => ({
        labels: window.__page.presetLabels,
        sizes: window.__page.presetSizes,
        fit: window.__page.fit,
        sizing: window.__page.sizing,
        options: [...document.querySelectorAll('#preset option:not([hidden])')].map(
          (o) => o.textContent,
        ),
      }));
      labels = z.labels;
      assert(
        z.options.length === 3 &&
          z.options[0] === z.labels.quick &&
          z.options[1] === z.labels.middle &&
          z.options[2] === z.labels.full,
        `options: ${z.options.join(' | ')}`,
      );
      assert(
        /^Quick, about \d.* here: the flow, not knowledge$/.test(z.labels.quick),
        `quick: ${z.labels.quick}`,
      );
      await page.selectOption('#preset', 'quick');
      assert(
        /not knowledge/.test(await page.textContent('#preset-note')),
        'the quick note does not say what to expect',
      );
      // The quick preset's time is its own steps, timed on this data before it runs (time_run:
      // packed and cut as the run is), with the run's saves: the label is steps × that step.
      const q = await S(() => window.__page.quick);
      const quickMore = await page.textContent('#preset-more-text');
      assert(
        q.timed &&
          (q.timed.pre.rows === q.pre_batch ||
            (q.perEpoch === 1 && q.timed.pre.rows < q.pre_batch)) &&
          q.timed.pre.ms_per_step > 0 &&
          q.timed.ft &&
          /this run’s own steps, timed on this data/.test(quickMore),
        `the quick preset's steps were not timed: ${JSON.stringify(q.timed)} “${quickMore}”`,
      );
      assert(
        q.msPerStep >= q.timed.pre.ms_per_step &&
          q.msPerStep < 1.2 * q.timed.pre.ms_per_step &&
          Math.abs(q.preS - (q.preSteps * q.msPerStep) / 1000) < 1e-6 * q.preS,
        `quick: ${q.preSteps} steps of ${q.msPerStep} ms (timed ${q.timed.pre.ms_per_step} ms) = ${q.preS} s?`,
      );
      // The middle preset: 2 layers of width 128 on the built-in birth notes (the step after the
      // reload's), its expected dev accuracy as measured (results/middle-preset/).
      await page.selectOption('#preset', 'middle');
      // The note and its details (why these settings, how the time is estimated).
      const mid = `${await page.textContent('#preset-note')} ${await page.textContent('#preset-more-text')}`;
      const midOk = z.sizes.middle.tooLarge
        ? /use the CLI/.test(mid)
        : /^Middle, about \d.* here: 2 layers on (the birth notes|your pretraining text)$/.test(
            z.labels.middle,
          ) &&
          /Expect about \d+\.\d%(–\d+\.\d%)? dev accuracy/.test(mid) &&
          /right answers of \d+ in /.test(mid) &&
          !/results\//.test(mid);
      assert(midOk, `middle: ${z.labels.middle} — “${mid}”`);
      // (Finetune's epochs: the preset's 30 from a pretrained model, run.py's 75 from scratch.)
      const midForm = await page.evaluate(() =>
        ['n_layer', 'n_embd', 'pre_epochs', 'pre_decay', 'ft_epochs', 'from']
          .map((f) => document.getElementById(`h-${f}`).value)
          .join(),
      );
      assert(
        ['2,128,440,440,30,model', '2,128,440,440,75,scratch'].includes(midForm),
        `the middle preset is not 2 layers of width 128 at 440 epochs (floor at 440), then 30 ` +
          `finetuning epochs from the model: ${midForm}`,
      );
      // Full: the batch offered is the largest that fits (or the preset's), and the note says so.
      await page.selectOption('#preset', 'full');
      const full = await page.textContent('#preset-note');
      // Hours on a software WebGPU adapter (headless Chromium's SwiftShader): the note points to the CPU backend.
      const software = await S(() => window.__page.softwareAdapter);
      if (software && z.sizes.full.seconds > 3 * 3600)
        assert(
          /software one .*the CPU backend .*trains faster/.test(full),
          `the full note on a software adapter: ${full}`,
        );
      if (!software)
        assert(!/software one/.test(full), 'the note says software adapter on the CPU backend');
      const batch = Number(await page.inputValue('#h-pre_batch'));
      if (z.fit.full.pre < 1) {
        assert(
          /too large for this device/i.test(z.labels.full) &&
            /attnlab pretrain vanilla wiki\.txt/.test(full),
          `too large but: ${z.labels.full} — ${full}`,
        );
      } else {
        assert(
          batch === Math.min(128, z.fit.full.pre),
          `full preset batch ${batch}, fits ${z.fit.full.pre}`,
        );
        if (z.fit.full.pre < 128)
          assert(
            full.includes(`pretraining batch ${batch} instead of 128`) &&
              /largest that fits/.test(full),
            `the note does not say the batch was lowered: ${full}`,
          );
      }
      // The larger models' step: measured time per row × rows × the data's packed share, nothing fitted.
      const perRow = z.sizing.full.best_ms / z.sizing.full.rows;
      const fill = await S(async () => {
        const { fills } = await import('./web/page/sizing.js');
        return (await fills()).pretrain;
      });
      const want = perRow * z.sizes.full.pre_batch * fill;
      assert(
        fill > 0.2 && fill < 0.9 && Math.abs(z.sizes.full.msPerStep - want) < 1e-6 * want,
        `full step ${z.sizes.full.msPerStep} ms, measured per row ${perRow} × ${z.sizes.full.pre_batch} × ${fill}`,
      );
      await stillShot(page, '#train-card', path.join(outDir, 'student-presets.png'));
      return (
        `${z.options.join(' | ')}; pretraining fill ${fill.toFixed(2)}; full fits batch ` +
        `${z.fit.full.pre}, middle ${z.fit.middle.pre}`
      );
    },
  );

  await step(
    'presets: the same labels after a reload (the measurement is kept; nothing is re-fitted)',
    async () => {
      await page.reload();
      await page.waitForFunction(() => window.__page && window.__page.ready, null, {
        timeout: TIMEOUT,
      });
      await page.locator('#train-card').scrollIntoViewIfNeeded();
      await page.waitForFunction(() => window.__page.presetLabels, null, { timeout: TIMEOUT });
      const again = await S(() => window.__page.presetLabels);
      assert(
        JSON.stringify(again) === JSON.stringify(labels),
        `before ${JSON.stringify(labels)}, after ${JSON.stringify(again)}`,
      );
      await page.waitForFunction(
        () => window.__page.shipped && window.__page.shipped.state === 'loaded',
        null,
        { timeout: TIMEOUT },
      );
    },
  );

  // On the CPU backend only: the notes' logic is the same on both, and on SwiftShader the
  // synthesizer's timed quick run holds the GPU process (and the page's frames) for seconds.
  if (backend === 'cpu') await variantSteps({ page, step, S, TIMEOUT });

  // The built-in dev set with three questions the shipped model cannot read.
  const dev =
    (await S(() => window.__page.builtinDevText || null)) ||
    (await S(async () => {
      const { builtinDev } = await import('./web/page/data.js');
      return builtinDev()
        .map((r) => r.join('\t'))
        .join('\n');
    }));
  const lines = dev.split('\n').filter(Boolean).slice(0, 30);
  lines[2] = lines[2].replace('Where was ', 'Where was Ω');
  lines[6] = lines[6].replace(' born?', 'å born?');
  lines[8] = lines[8].replace('Where was ', 'Where was Ω');
  const colÅ = lines[6].indexOf('å') + 1;

  await step(
    'presets: Middle switches the built-in corpus to its birth notes, Quick and Full switch ' +
      'back; served files are left alone',
    async () => {
      const wikiRow = () =>
        page.$$eval('#data-table tbody tr:first-child td', (tds) =>
          tds.map((t) => t.textContent).join(' | '),
        );
      const served = await S(() => window.__page.dataSource === 'served');
      if (served) {
        await page.selectOption('#preset', 'middle');
        assert(
          !/birth notes/.test(await wikiRow()),
          `middle replaced the served pretraining text: ${await wikiRow()}`,
        );
        assert(
          /on your pretraining text/.test(await page.textContent('#preset-note')),
          'the middle note does not say it runs on the loaded text',
        );
        const label = await page.evaluate(
          () => document.querySelector('#preset option[value=middle]').textContent,
        );
        assert(
          /^Middle, about .* here: 2 layers on your pretraining text$/.test(label),
          `the middle label on the served files: ${label}`,
        );
      }
      await page.click('#use-embedded');
      await page.selectOption('#preset', 'middle');
      const notes = await wikiRow();
      assert(
        /built-in birth notes/.test(notes) &&
          /two short notes each/.test(await page.textContent('#data-summary')),
        `middle: the pretraining text is ${notes}`,
      );
      await page.waitForFunction(
        () =>
          /on the built-in people’s birth notes/.test(
            document.getElementById('preset-note').textContent,
          ),
        null,
        { timeout: TIMEOUT },
      );
      const midNote = `${await page.textContent('#preset-note')} ${await page.textContent('#preset-more-text')}`;
      assert(
        /rate reaches its floor at epoch 440, the run’s end/.test(midNote) &&
          /finetuning takes 30 epochs, not 10/.test(midNote),
        `the middle note does not say where it leaves run.py: “${midNote}”`,
      );
      for (const other of ['full', 'quick']) {
        await page.selectOption('#preset', 'middle');
        await page.selectOption('#preset', other);
        assert(
          /built-in wiki\.txt/.test(await wikiRow()),
          `${other}: the pretraining text is ${await wikiRow()}`,
        );
      }
      // The longer run's text: the birth sentences, kept by Middle, left by Quick.
      await page.click('#use-births');
      assert(
        /built-in birth sentences/.test(await wikiRow()) &&
          /birth sentence/.test(await page.textContent('#data-summary')),
        `birth sentences: ${await wikiRow()}`,
      );
      await page.selectOption('#preset', 'middle');
      assert(
        /built-in birth sentences/.test(await wikiRow()),
        `middle replaced the birth sentences: ${await wikiRow()}`,
      );
      await page.selectOption('#preset', 'quick');
      assert(
        /built-in wiki\.txt/.test(await wikiRow()),
        `quick: the pretraining text is ${await wikiRow()}`,
      );
      if (served) await page.click('#use-served');
      return (
        `${notes}; back to the whole biographies with Full and Quick; the birth sentences ` +
        `kept by Middle${served ? '; the served folder restored' : ''}`
      );
    },
  );

  // The evaluate steps (student-eval.mjs).
  await evaluationSteps({ page, step, S, upload, evaluateAll, dev, lines, colÅ, outDir, TIMEOUT });

  await step('390 px: the presets and the evaluation fit the screen', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.click('#use-embedded');
    await page.selectOption('#preset', 'middle');
    // Each preset's label, shown in the closed select, fits it (a select cuts its text without a cue):
    // the short form here, the whole label as the option's tooltip. A select is as wide as its
    // widest option unless max-width caps it, so its uncapped width is what its text needs.
    const labels = await page.$eval('#preset', (s) => {
      const capped = s.offsetWidth;
      s.style.maxWidth = 'none';
      const needs = s.offsetWidth;
      s.style.maxWidth = '';
      return {
        capped,
        needs,
        options: [...s.querySelectorAll('option:not([hidden])')]
          .filter((o) => o.value !== 'custom')
          .map((o) => ({ text: o.textContent, tip: o.title })),
      };
    });
    assert(
      labels.needs <= labels.capped + 1,
      `at 390 px the preset select needs ${labels.needs} px and has ${labels.capped} px: its ` +
        `labels (${labels.options.map((o) => o.text).join(' | ')}) are cut`,
    );
    for (const o of labels.options)
      assert(
        o.tip.startsWith(o.text.split(/[:,]/)[0]) && o.tip.length >= o.text.length,
        `the preset label “${o.text}” with the tooltip “${o.tip}”`,
      );
    console.log(
      `    390 px: the preset select needs ${labels.needs} of ${labels.capped} px: ` +
        `${labels.options.map((o) => o.text).join(' | ')}`,
    );
    // Long one-word names and answers (which cannot wrap): the table's "right?" column still fits
    // without scrolling sideways.
    const long = ['Druoundopoulos', 'Rourtchorard', 'Tainhiaescu', 'Bryklamov'].map(
      (w, i) =>
        `Where was ${['Shekric', 'Rend Reoras', 'Shaus', 'Wokia Mol'][i]} ${w} ` +
        `born?\t${['Philadelphia', 'Johannesburg', 'Argentina', 'Birmingham'][i]}`,
    );
    await upload('file-dev', 'long-words.tsv', `${long.join('\n')}\n`);
    await page.waitForFunction(
      () => document.querySelector('#data-table').innerText.includes('long-words.tsv'),
      null,
      { timeout: 30000 },
    );
    await page.selectOption('#eval-file', 'dev');
    const r = await evaluateAll();
    // No sizing under way (a data change times the quick run again; on SwiftShader that holds the
    // GPU process, and the page's frames, for seconds, and a screenshot waits for stable frames).
    await S(async () => (await import('./web/page/form.js')).sizingSettled());
    const table = await page.$eval('#eval-table', (t) => ({
      over: t.parentElement.scrollWidth - t.parentElement.clientWidth,
      longest: Math.max(...[...t.querySelectorAll('tbody td')].map((c) => c.textContent.length)),
    }));
    assert(
      r.rep.rows.length === 4 && table.over <= 1,
      `Evaluate's table (${r.rep.rows.length} rows of ${r.rep.file}) is ${table.over} px wider ` +
        `than its box (its longest cell ${table.longest} characters)`,
    );
    for (const id of ['train-card', 'eval-card']) {
      const over = await page.$eval(`#${id}`, (e) => e.scrollWidth - e.clientWidth);
      assert(over <= 1, `#${id} is ${over} px wider than its card`);
      await stillShot(page, `#${id}`, path.join(outDir, `student-${id}-390.png`));
    }
    // The demos E7 and E10 (their canvas titles and captions) at phone width, for the eye.
    await page.waitForFunction(() => window.__demos && window.__demos.ready, null, {
      timeout: TIMEOUT,
    });
    for (const id of ['e7', 'e10']) {
      await page.$eval(`#${id}`, (e) => e.scrollIntoView({ block: 'center' }));
      await page.waitForTimeout(300);
      const over = await page.$eval(`#${id}`, (e) => e.scrollWidth - e.clientWidth);
      assert(over <= 1, `#${id} is ${over} px wider than its card`);
      await stillShot(page, `#${id}`, path.join(outDir, `student-${id}-390.png`));
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    return (
      `Evaluate's table ${table.over} px wider than its box, its longest cell ` +
      `${table.longest} characters (${r.rep.rows.map((x) => x.prediction).join(', ')})`
    );
  });

  await step(
    "the loss chart's legend tells runs of one kind apart and marks the stopped one",
    async () => {
      const got = await S(async () => {
        const { legendLabels } = await import('./web/page/chart.js');
        return legendLabels([
          { label: 'pretrain vanilla (stopped)' },
          { label: 'finetune vanilla' },
          { label: 'pretrain vanilla' },
        ]);
      });
      assert(
        JSON.stringify(got) ===
          JSON.stringify([
            'pretrain vanilla 1 (stopped)',
            'finetune vanilla',
            'pretrain vanilla 2',
          ]),
        `legend: ${JSON.stringify(got)}`,
      );
      return got.join(' | ');
    },
  );

  await step(
    'two models of one variant side by side: the shipped one kept beside a loaded one, in Ask and Evaluate',
    async () => {
      await page.click('#use-embedded');
      // By keyboard: the table is drawn again after Keep, and focus stays in it (on the same button
      // where it is still there, else the card's first control), not on the page's body.
      await page.focus('#models button[data-keep="vanilla"]');
      await page.keyboard.press('Enter');
      await page.waitForFunction(
        () => window.__page.models.some((m) => m.slot === 'vanilla:kept'),
        null,
        { timeout: 30000 },
      );
      await page.waitForTimeout(100);
      const focusKept = await page.evaluate(() => ({
        tag: document.activeElement.tagName,
        inCard: !!document.activeElement.closest('#models-card'),
      }));
      assert(
        focusKept.inCard && focusKept.tag !== 'BODY',
        `focus after Keep for comparison: ${JSON.stringify(focusKept)}`,
      );
      let s = await S(() => window.__page.models);
      assert(
        s.find((m) => m.slot === 'vanilla:kept').same_as_current,
        'a kept model not yet replaced is not marked as the current one',
      );
      assert(
        (await page.locator('#eval-variant option').count()) === 1,
        'the same model offered twice',
      );
      // A second vanilla model (the one finetuned without pretraining that ships for S2a) becomes current.
      // Read from the repository: the page's copy, returned as an array, took 42 s (Playwright sends
      // one JSON value a byte).
      const bytes = fs.readFileSync(
        path.join(
          path.dirname(fileURLToPath(import.meta.url)),
          '..',
          'models',
          'builtin-nopretrain.safetensors',
        ),
      );
      await page.setInputFiles('#file-model', {
        name: 'builtin-nopretrain.safetensors',
        mimeType: 'application/octet-stream',
        buffer: bytes,
      });
      await page.waitForFunction(
        () =>
          window.__page.models.some(
            (m) => m.slot === 'vanilla' && m.label === 'builtin-nopretrain.safetensors',
          ),
        null,
        { timeout: 60000 },
      );
      s = await S(() => ({ models: window.__page.models, shipped: window.__page.shipped.label }));
      const kept = s.models.find((m) => m.slot === 'vanilla:kept');
      assert(
        kept && kept.label === s.shipped && !kept.same_as_current,
        `kept: ${JSON.stringify(kept)}`,
      );
      // The shipped model kept: the Models card says so instead of offering to load it a second time.
      assert(
        (await page.isHidden('#load-shipped')) && (await page.isVisible('#shipped-kept')),
        '“Load the shipped model again” offered while it is kept',
      );
      const options = await page.$$eval('#eval-variant option', (o) =>
        o.map((x) => [x.value, x.textContent]),
      );
      assert(
        options.length === 2 &&
          options[0][1] !== options[1][1] &&
          options.some(
            ([v, t]) => v === 'vanilla:kept' && t.includes('kept') && t.includes(s.shipped),
          ),
        `options: ${JSON.stringify(options)}`,
      );
      // Ask: both answer, each column named.
      await page.fill('#ask-text', lines[0].split('\t')[0]);
      await S(() => {
        window.__page.ask = null;
      });
      await page.click('#btn-ask');
      await page.waitForFunction(
        () => window.__page.ask && Object.keys(window.__page.ask).length === 2,
        null,
        { timeout: TIMEOUT },
      );
      const heads = await page.$$eval('#ask-result .ask-col', (cols) =>
        cols.map(
          (c) =>
            `${c.querySelector('h3').textContent} / ${(c.querySelector('.model-from') || {}).textContent}`,
        ),
      );
      assert(
        heads.length === 2 &&
          heads[0] !== heads[1] &&
          heads.some((h) => h.includes('kept') && h.includes(s.shipped)) &&
          heads.some((h) => h.includes('builtin-nopretrain')),
        `Ask columns: ${heads.join(' | ')}`,
      );
      assert(
        (await page.locator('#ask-result .stranger').count()) === 0,
        'a built-in person is called a guess',
      );
      await stillShot(page, '#ask-card', path.join(outDir, 'student-ask-two.png'));
      // Someone the built-in corpus does not hold: both answers are said to be guesses.
      await page.fill('#ask-text', 'Ada Lovelace');
      await S(() => {
        window.__page.ask = null;
      });
      await page.click('#btn-ask');
      await page.waitForFunction(
        () => window.__page.ask && Object.keys(window.__page.ask).length === 2,
        null,
        { timeout: TIMEOUT },
      );
      const guesses = await page.$$eval('#ask-result .stranger', (n) =>
        n.map((x) => x.textContent),
      );
      assert(
        guesses.length === 2 &&
          guesses.every((g) => /never read about Ada Lovelace .*this is a guess/.test(g)),
        `notes for a stranger: ${JSON.stringify(guesses)}`,
      );
      // Evaluate each on the same 8 questions: two reports, each naming its model.
      await page.selectOption('#eval-file', 'dev');
      await page.fill('#eval-max', '8');
      const reps = {};
      for (const slot of ['vanilla', 'vanilla:kept']) {
        await page.selectOption('#eval-variant', slot);
        const r = await evaluateAll();
        assert(r.rep.rows.length === 8, `${slot}: ${r.rep.rows.length} rows`);
        reps[slot] = `${r.rep.score[0]} of 8 (${r.rep.model})`;
        assert(
          (await page.textContent('#eval-status')).includes(r.rep.model),
          'the status does not name the model',
        );
      }
      // The second report replaced the first; the table of this page's evaluations shows both.
      const hist = await page.$$eval('#eval-history tbody tr', (rs) =>
        rs.map((r) => [...r.children].map((c) => c.textContent)),
      );
      // reps[slot] is "N of 8 (model)"; its row reads model | file | "N of 8 correct (…%)".
      assert(
        (await page.isVisible('#eval-history')) &&
          hist.length >= 2 &&
          Object.values(reps).every((r) =>
            hist.some((h) => r === `${h[2].split(' correct')[0]} (${h[0]})`),
          ),
        `the evaluations side by side: ${JSON.stringify(hist)}`,
      );
      await stillShot(page, '#eval-card', path.join(outDir, 'student-eval-kept.png'));
      await page.setViewportSize({ width: 390, height: 844 });
      await stillShot(page, '#models-card', path.join(outDir, 'student-models-390.png'));
      await stillShot(page, '#ask-card', path.join(outDir, 'student-ask-two-390.png'));
      const over = await page.$eval('#models-card', (e) => e.scrollWidth - e.clientWidth);
      await page.setViewportSize({ width: 1280, height: 900 });
      assert(over <= 1, `the Models card is ${over} px wider than the screen at 390 px`);
      await page.fill('#eval-max', '');
      // The new controls (Keep for comparison, Remove, the named picker, two Ask columns) pass axe.
      await page.evaluate(axeSource);
      const bad = await S(async () =>
        (await window.axe.run(document, { resultTypes: ['violations'] })).violations
          .filter((v) => ['critical', 'serious'].includes(v.impact))
          .map((v) => `${v.impact} ${v.id}: ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3)}`),
      );
      assert(!bad.length, `axe: ${bad.join('; ')}`);
      return `${heads.join(' | ')}; ${Object.entries(reps)
        .map(([k, v]) => `${k}: ${v}`)
        .join('; ')}; axe: no critical or serious violation`;
    },
  );

  if (backend === 'cpu') await cpuSteps({ page, step, S, TIMEOUT });
  if (backend === 'webgpu') {
    await step(
      'WebGPU: a device lost during an evaluation keeps and shows the questions answered before',
      async () => {
        await page.click('#use-embedded');
        await page.selectOption('#eval-variant', 'vanilla');
        await page.selectOption('#eval-file', 'dev');
        await page.fill('#eval-max', '');
        await S(() => {
          window.__page.evalReport = null;
          window.__page.evalError = null;
        });
        await page.click('#btn-eval');
        await page.waitForFunction(
          () =>
            !document.getElementById('eval-confirm').hidden ||
            /: [1-9]\d* of \d+ questions/.test(document.getElementById('eval-status').textContent),
          null,
          { timeout: TIMEOUT },
        );
        if (await page.isVisible('#eval-confirm')) {
          await page.click('#eval-confirm button[data-eval]:not([data-eval="0"])');
          await page.waitForFunction(
            () =>
              /Evaluating .*: [1-9]\d* of \d+ questions/.test(
                document.getElementById('eval-status').textContent,
              ),
            null,
            { timeout: TIMEOUT },
          );
        }
        await S(() => window.__page.destroyDevice());
        await page.waitForFunction(() => window.__page.evalError, null, { timeout: TIMEOUT });
        const r = await S(() => ({
          rep: window.__page.evalReport,
          error: window.__page.evalError,
        }));
        const rows = await page.locator('#eval-table tbody tr').count();
        assert(
          r.rep &&
            r.rep.rows.length > 0 &&
            r.rep.rows.length < r.rep.total &&
            rows === r.rep.rows.length,
          `after the loss: ${r.rep && r.rep.rows.length} of ${r.rep && r.rep.total} shown, ` +
            `${rows} rows; error ${r.error}`,
        );
        assert(
          (await page.isVisible('#eval-error')) &&
            (await page.textContent('#eval-status')).startsWith('Failed after'),
          'the failure is not said',
        );
        await stillShot(page, '#eval-card', path.join(outDir, 'student-eval-lost.png'));
        return `${r.rep.rows.length} of ${r.rep.total} kept; “${r.error}”`;
      },
    );
  }
} finally {
  await close();
}
process.exit(summary(t0));
