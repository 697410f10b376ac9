// The middle steps of nogpu.mjs, which runs them on its page (opened without WebGPU, so on the
// CPU backend) after the first visit's steps and before the Benchmark card's:
//   kernel checks (CPU kernels vs f64 references) → all ten demos draw, and a control recomputes →
//   a demo answers while an evaluation runs → pretrain a few steps (loss finite and falling, the
//   chart updates) → the quick preset's own batch for two steps (timed) → evaluate → ask
//   (prediction + attention maps) → a course .params file answers as PyTorch does → width 4096 is
//   refused before anything starts, with the estimate and the limit, and the page stays usable →
//   a batch too big is refused with one that fits → dropout 1 and a word are refused, 0 trains.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { assert } from './harness.mjs';

// What the steps need from nogpu.mjs: its page and named `step`, its reads of the page's state
// (`P`, `waitPage`), `setField`, `vanillaAnswer`, `wasmOnPage`, where the pictures go, the steps'
// timeout, and `timings`, where the training steps leave their times for nogpu.mjs's last line.
export async function engineSteps({
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
}) {
  await step(
    'kernel checks on the CPU backend: every op family against its f64 reference',
    async () => {
      await page.evaluate(() => {
        document.getElementById('checks-card').open = true;
      });
      const t0 = Date.now();
      await page.click('#run');
      await page.waitForFunction(() => window.__checks.done, null, { timeout: TIMEOUT });
      const c = await page.evaluate(() => window.__checks);
      assert(
        !c.error && c.rows.length > 0 && c.failed === 0,
        `checks: ${c.passed} passed, ${c.failed} failed, error ${c.error}; ${c.rows
          .filter((r) => !r.passed)
          .map((r) => `${r.op} ${r.case} ${r.max_err}`)
          .join('; ')}`,
      );
      await page.evaluate(() => {
        document.getElementById('checks-card').open = false;
      });
      return `${c.passed} of ${c.rows.length} passed in ${((Date.now() - t0) / 1000).toFixed(1)} s`;
    },
  );

  await step('all ten demos draw on the CPU backend, and a control recomputes', async () => {
    await page.waitForFunction(() => window.__demos && window.__demos.ready, null, {
      timeout: TIMEOUT,
    });
    const st = await page.evaluate(() => ({
      error: window.__demos.error,
      backend: window.__demos.backend,
      runs: window.__demos.runs,
      errors: window.__demos.errors,
    }));
    assert(!st.error && st.backend === 'cpu', `demos: ${st.error} on ${st.backend}`);
    const ids = ['e1', 'e2', 'e3', 'e4', 'e5', 'e6', 'e7', 'e8', 'e9', 'e10'];
    const missing = ids.filter((id) => !(st.runs[id] >= 1));
    assert(missing.length === 0, `not rendered: ${missing.join(', ')}`);
    assert(st.errors.length === 0, `demo errors: ${st.errors.join('; ')}`);
    // Every demo's canvas has ink on it and its numbers table is filled.
    const drawn = await page.evaluate(
      (list) =>
        list.map((id) => {
          const el = document.getElementById(id);
          const cv = el.querySelector('canvas.demo-canvas');
          const px = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data;
          let ink = 0;
          for (let i = 0; i < px.length; i += 4)
            if (px[i + 3] > 0 && (px[i] < 240 || px[i + 1] < 240 || px[i + 2] < 240)) ink++;
          return {
            id,
            ink,
            numbers: el.querySelector('.demo-numbers').innerText.length,
            status: el.querySelector('.demo-status').textContent,
          };
        }),
      ids,
    );
    const blank = drawn.filter((d) => d.ink < 100 || d.numbers < 10 || /Could not/.test(d.status));
    assert(blank.length === 0, `blank or failed demos: ${JSON.stringify(blank)}`);
    // The labels name the CPU backend's kernels, not a GPU.
    const label = await page.textContent('#e1 .demo-cpu');
    assert(/f32/.test(label) && !/GPU/.test(label), `E1 reference label: ${label}`);
    // E1: a longer query concentrates α on the best key (as in demos.mjs).
    const before = await page.evaluate(() => ({
      runs: window.__demos.runs.e1,
      a: Math.max(...window.__demos.results.e1.dev.alpha),
    }));
    await page.evaluate(() => {
      const el = document.querySelector('#e1 input[id$="-scale"]');
      el.value = '8';
      el.dispatchEvent(new Event('input', { bubbles: true }));
    });
    await page.waitForFunction(
      (b) =>
        window.__demos.runs.e1 > b &&
        document.getElementById('e1').getAttribute('aria-busy') === 'false',
      before.runs,
      { timeout: 30000 },
    );
    const after = await page.evaluate(() => Math.max(...window.__demos.results.e1.dev.alpha));
    assert(after > before.a, `E1: max α ${before.a} → ${after}`);
    // E7: the toy trains with and without the mask on the CPU backend too.
    const r7 = await page.evaluate(() => window.__demos.runs.e7);
    await page.click('#e7 button[id$="-trainthetoywithandwithoutthemask"]');
    await page.waitForFunction(
      (b) =>
        window.__demos.runs.e7 > b &&
        document.getElementById('e7').getAttribute('aria-busy') === 'false',
      r7,
      { timeout: TIMEOUT },
    );
    const t = await page.evaluate(() => window.__demos.results.e7.train);
    const last = (l) => l.slice(-10).reduce((a, b) => a + b, 0) / 10;
    assert(
      t && last(t.open.losses) < 0.5 && last(t.masked.losses) > 0.9 * t.masked.floor,
      `E7 toy: ${t ? `${last(t.open.losses)} vs ${last(t.masked.losses)}` : 'no result'}`,
    );
    for (const id of ['e1', 'e3', 'e7', 'e9'])
      await page.locator(`#${id}`).screenshot({ path: path.join(outDir, `nogpu-demo-${id}.png`) });
    return (
      `10 of 10 drawn; E1 max α ${before.a.toFixed(3)} → ${after.toFixed(3)}; E7 toy ` +
      `${last(t.open.losses).toFixed(3)} without the mask vs ` +
      `${last(t.masked.losses).toFixed(3)} with`
    );
  });

  await step(
    'a demo answers while an evaluation runs (the evaluation is asked for in parts)',
    async () => {
      // The shipped model over the built-in dev questions five times (680): several of the
      // evaluation's half-second parts on any machine (60 questions took 0.3 s, one part, on a
      // fast one). A demo's control is moved at the first progress the evaluation shows, and the
      // demo must answer before the evaluation ends.
      await page.click('#use-embedded');
      const dev = await page.evaluate(async () => {
        const { builtinDev } = await import(new URL('web/page/data.js', location.href).href);
        return builtinDev()
          .map((r) => r.join('\t'))
          .join('\n');
      });
      await setField('eval-max', '');
      await page.setInputFiles('#file-dev', {
        name: 'dev5.tsv',
        mimeType: 'text/plain',
        buffer: Buffer.from(`${dev}\n`.repeat(5), 'utf8'),
      });
      await page.selectOption('#eval-variant', 'vanilla');
      await page.selectOption('#eval-file', 'dev');
      await page.waitForFunction(
        () => document.getElementById('eval-estimate').textContent.startsWith('680 questions'),
        null,
        { timeout: TIMEOUT },
      );
      const r = await page.evaluate(
        () =>
          new Promise((done) => {
            window.__page.evalReport = null;
            window.__page.evalError = null;
            let probe = null;
            const status = document.getElementById('eval-status');
            new MutationObserver((_, o) => {
              if (!/: [1-9]\d* of \d+ questions/.test(status.textContent)) return;
              o.disconnect();
              const before = window.__demos.runs.e2 || 0;
              const el = document.getElementById('e2-s');
              el.value = String(Number(el.value) === 12 ? 11 : 12);
              el.dispatchEvent(new Event('input'));
              const t0 = performance.now();
              const wait = setInterval(() => {
                if ((window.__demos.runs.e2 || 0) > before) {
                  probe = { ms: performance.now() - t0, evalDone: !!window.__page.evalReport };
                  clearInterval(wait);
                }
              }, 5);
            }).observe(status, { childList: true, characterData: true, subtree: true });
            const t0 = performance.now();
            const poll = setInterval(() => {
              const all = document.querySelector(
                '#eval-confirm button[data-eval]:not([data-eval="0"])',
              );
              if (all && !document.getElementById('eval-confirm').hidden) all.click();
              if ((window.__page.evalReport || window.__page.evalError) && probe) {
                clearInterval(poll);
                done({
                  probe,
                  seconds: (performance.now() - t0) / 1000,
                  rows: window.__page.evalReport && window.__page.evalReport.rows.length,
                  error: window.__page.evalError,
                });
              }
            }, 20);
            document.getElementById('btn-eval').click();
          }),
      );
      assert(!r.error && r.rows === 680, `evaluation: ${r.error || `${r.rows} rows`}`);
      assert(
        !r.probe.evalDone,
        `the demo answered only after the evaluation (${r.probe.ms.toFixed(0)} ms; evaluation ` +
          `${r.seconds.toFixed(1)} s)`,
      );
      await page.click('#use-served');
      await setField('eval-max', 8);
      return (
        `680 questions in ${r.seconds.toFixed(1)} s; E2 moved at the first progress ` +
        `answered after ${r.probe.ms.toFixed(0)} ms, before the evaluation ended`
      );
    },
  );

  let firstLoss;
  await step('pretrain a few steps: the loss is finite and falls, the chart updates', async () => {
    await page.selectOption('#preset', 'quick');
    await setField('h-pre_batch', 8);
    await setField('h-max_steps', 16);
    const chartBefore = await page.evaluate(() => document.getElementById('chart').toDataURL());
    // Another worker count chosen: its Apply (a reload) is held back while the run trains.
    await page.selectOption('#workers', '1');
    // By keyboard: Enter on Pretrain puts focus on Pause; when the run ends by itself, focus goes
    // to the status line (not to Pretrain, where one more Enter would start a new run).
    await page.focus('#btn-pretrain');
    await page.keyboard.press('Enter');
    await page.waitForFunction(
      () =>
        window.__page.status === 'running' &&
        document.getElementById('device-apply').disabled &&
        /Pause or stop the training run first/.test(
          document.getElementById('device-apply-note').textContent,
        ),
      null,
      { timeout: 60000 },
    );
    const s = await waitPage(
      (s) => s.finished >= 1 && s.status === 'idle',
      'the end of pretraining',
    );
    assert(!s.error, `error: ${s.error}`);
    assert(
      (await page.isEnabled('#device-apply')) &&
        /Applying reloads the page/.test(await page.textContent('#device-apply-note')),
      'Apply not offered again after the run',
    );
    const focusEnd = await page.evaluate(
      () => document.activeElement.id || document.activeElement.tagName,
    );
    assert(
      focusEnd === 'train-status',
      `focus after the run ended is on ${focusEnd}, not the status line`,
    );
    await page.selectOption('#workers', 'auto');
    assert(
      !(await page.isVisible('#device-apply')),
      'Apply still offered with the running worker count selected again',
    );
    const losses = s.losses.map((l) => l[1]);
    assert(losses.length >= 3 && losses.every(Number.isFinite), `losses: ${losses}`);
    firstLoss = losses[0];
    const tail = losses.slice(-2).reduce((a, b) => a + b, 0) / 2;
    assert(
      tail < firstLoss - 0.1,
      `loss did not fall: ${losses.map((l) => l.toFixed(3)).join(' ')}`,
    );
    const chartAfter = await page.evaluate(() => document.getElementById('chart').toDataURL());
    assert(chartAfter !== chartBefore, 'the chart did not change');
    assert(
      s.models.some((m) => m.variant === 'vanilla'),
      'no vanilla model after pretraining',
    );
    timings.batch8 = s.msPerStep;
    // run.py's schedule ends at 200 · (documents of the pretraining text) · 128 tokens, whatever the corpus.
    const table = await page.textContent('#data-table');
    const docs = Number(
      (table.match(/counts ([\d,]+) examples/) || table.match(/([\d,]+) lines/) || [])[1].replace(
        /,/g,
        '',
      ),
    );
    assert(
      s.started.final_tokens === 200 * docs * 128,
      `final_tokens ${s.started.final_tokens} for a corpus of ${docs} lines`,
    );
    assert(
      Math.abs(s.started.dropout - 0.1) < 1e-6,
      `dropout ${s.started.dropout}, expected the assignment's 0.1`,
    );
    await page.locator('#train-card').screenshot({ path: path.join(outDir, 'nogpu-training.png') });
    return (
      `16 steps at batch 8: loss ${firstLoss.toFixed(3)} → ${tail.toFixed(3)}, ` +
      `${s.msPerStep.toFixed(0)} ms/step`
    );
  });

  await step(
    'the quick preset is sized to this device (about two minutes), with the full preset’s time; ' +
      'two of its steps timed',
    async () => {
      await page.locator('#train-card').scrollIntoViewIfNeeded();
      const z = await waitPage((s) => s.sizing && s.quick, 'the device measurement');
      const q = z.quick;
      assert(
        q.seconds > 0 && q.seconds < 150,
        `the quick preset would take ${q.seconds.toFixed(0)} s here`,
      );
      await page.selectOption('#preset', 'quick');
      const opt = await page.evaluate(() =>
        [...document.querySelectorAll('#preset option')].map((o) => o.textContent),
      );
      const note = `${await page.textContent('#preset-note')} ${await page.textContent('#preset-more-text')}`;
      assert(
        /^Quick, about \d.* here: the flow, not knowledge$/.test(opt[0]) &&
          /^Middle(, about \d.* here: 2 layers on (the birth notes|your pretraining text)$|: too large)/.test(
            opt[1],
          ) &&
          /^Full assignment(, about \d.* here|: too large)/.test(opt[2]),
        `preset labels: ${opt.join(' | ')}`,
      );
      assert(
        /on this device/.test(note) && /first step/.test(note) && /not knowledge/.test(note),
        `the quick preset's note: “${note}”`,
      );
      assert(
        Number(await page.inputValue('#h-pre_batch')) === q.pre_batch,
        'the form does not hold the sized batch',
      );
      await setField('h-max_steps', 2);
      const batch = await page.inputValue('#h-pre_batch');
      const t0 = Date.now();
      await page.click('#btn-pretrain');
      await waitPage((s) => s.status === 'running', 'the quick preset to start');
      const started = await page.textContent('#train-status');
      const s = await waitPage(
        (s) => s.finished >= 2 && s.status === 'idle',
        'two steps of the quick preset',
      );
      assert(!s.error && s.steps === 2, `steps ${s.steps}, error ${s.error}`);
      const secs = (Date.now() - t0) / 1000;
      timings.quick = s.msPerStep;
      const worst = await page.evaluate(() =>
        window.__page.longTasks.reduce((m, t) => Math.max(m, t.ms), 0),
      );
      // The steps (about a second each here) run in the engine's worker, not on the page's thread.
      assert(
        (await wasmOnPage()).length === 0,
        `the page's thread fetched the wasm module: ${await wasmOnPage()}`,
      );
      const perEpoch = Number(
        ((started.match(/([\d,]+) steps? per epoch/) || [])[1] || '').replace(/,/g, ''),
      );
      const epochs = Number(await page.inputValue('#h-pre_epochs'));
      timings.quickTotal = perEpoch * epochs;
      // The estimate holds: the run's own steps take about what the measurement said.
      assert(
        s.msPerStep < 3 * q.msPerStep + 50 && s.msPerStep > q.msPerStep / 3 - 50,
        `a step took ${s.msPerStep.toFixed(0)} ms, the estimate was ${q.msPerStep.toFixed(0)} ms`,
      );
      return (
        `sized: batch ${batch}, ${q.preSteps} + ${q.ftSteps} steps ≈ ${q.seconds.toFixed(0)} s ` +
        `(full preset ≈ ${(q.fullSeconds / 3600).toFixed(1)} h); measured in ` +
        `${z.sizing.seconds.toFixed(1)} s; ` +
        `its steps took ${s.msPerStep.toFixed(0)} ms (estimate ${q.msPerStep.toFixed(0)} ms; ` +
        `two steps, start and save included: ${secs.toFixed(1)} s); longest main-thread task ` +
        `so far ${worst} ms`
      );
    },
  );

  await step('evaluate: accuracy beside the London baseline', async () => {
    await page.selectOption('#eval-variant', 'vanilla');
    await page.selectOption('#eval-file', 'dev');
    await setField('eval-max', 8);
    // An earlier step may have left a report (the long evaluation runs to the end when this device
    // is fast enough not to ask first): wait for this click's own report.
    await page.evaluate(() => {
      window.__page.evalReport = null;
      window.__page.evalError = null;
    });
    await page.click('#btn-eval');
    await page.waitForFunction(() => window.__page.evalReport || window.__page.evalError, null, {
      timeout: TIMEOUT,
    });
    const rep = await page.evaluate(() => window.__page.evalReport);
    assert(rep, `evaluation failed: ${await page.evaluate(() => window.__page.evalError)}`);
    assert(
      rep.rows.length === 8 && rep.score && rep.score[1] === 8 && rep.london,
      `report: ${JSON.stringify(rep.score)} for ${rep.rows.length} rows`,
    );
    assert((await page.locator('#eval-table tbody tr').count()) === 8, 'table rows');
    return `${rep.line} (London: ${rep.london_line}) in ${rep.seconds.toFixed(1)} s`;
  });

  await step('ask a name: a prediction and the attention maps per layer and head', async () => {
    const q = await page.evaluate(() => window.__page.evalReport.rows[0].question);
    const name = q.replace(/^Where was /, '').replace(/ born\?$/, '');
    await page.fill('#ask-text', name);
    await page.click('#btn-ask');
    await page.waitForFunction(() => window.__page.ask || window.__page.askError, null, {
      timeout: TIMEOUT,
    });
    const a = await vanillaAnswer();
    assert(!a.error, `ask failed: ${a.error}`);
    assert(
      a.question === q && a.layers === 2 && a.heads === 4 && a.worst < 1e-4,
      `answer: ${JSON.stringify(a)}`,
    );
    const thumbs = await page.locator('#ask-result canvas.thumb').count();
    assert(thumbs === 8, `${thumbs} heatmap thumbnails`);
    await page.locator('#ask-card').screenshot({ path: path.join(outDir, 'nogpu-ask.png') });
    return `“${a.question}” → “${a.prediction}”, maps over ${a.T} characters`;
  });

  await step(
    'a course .params file (torch.save of a state_dict) loads with the selected corpus and answers as PyTorch does',
    async () => {
      // tests/fixtures/torch/vanilla.params: 2 layers, 2 heads (not in the file: typed beside it), vocab 20.
      // The corpus "abcdefghijklmnopq?" gives that vocabulary (PAD, MASK and 18 characters). The
      // expected answer is PyTorch's greedy decoding of "qpo?⁇" (32 steps, float64, smallest top-2
      // gap 0.031), computed with scripts/parity.py's GPT as make_torch_fixture.py does.
      const torchDir = path.join(
        path.dirname(fileURLToPath(import.meta.url)),
        '..',
        '..',
        'tests',
        'fixtures',
        'torch',
      );
      const params = fs.readFileSync(path.join(torchDir, 'vanilla.params'));
      const asked = await page.inputValue('#ask-text');
      await page.fill('#params-heads', '2');
      await page.setInputFiles('#file-wiki', {
        name: 'wiki.txt',
        mimeType: 'text/plain',
        buffer: Buffer.from('abcdefghijklmnopq?'),
      });
      await page.waitForFunction(
        () => document.getElementById('data-table').textContent.includes('vocabulary 20'),
        null,
        { timeout: 30000 },
      );
      await page.evaluate(() => {
        window.__page.modelError = null;
      });
      await page.setInputFiles('#file-model', {
        name: 'vanilla.params',
        mimeType: 'application/octet-stream',
        buffer: params,
      });
      await page.waitForFunction(
        () =>
          (window.__page.loaded && window.__page.loaded.label === 'vanilla.params') ||
          window.__page.modelError,
        null,
        { timeout: 60000 },
      );
      const err = await page.evaluate(() => window.__page.modelError);
      assert(!err, `upload failed: ${err}`);
      const card = await page.textContent('#models');
      assert(
        /vanilla\.params/.test(card) &&
          /2 layers × 2 heads × width 16/.test(card) &&
          /vocabulary 20/.test(card),
        `model card: ${card}`,
      );
      // The head count it was read with is said (a wrong one loads without an error).
      const note = await page.textContent('#model-note');
      assert(
        (await page.isVisible('#model-note')) &&
          /does not record its head count: it was read with 2 heads/.test(note),
        `the .params note: “${note}”`,
      );
      await page.evaluate(() => {
        window.__page.ask = null;
        window.__page.askError = null;
      });
      await page.fill('#ask-text', 'qpo?');
      await page.click('#btn-ask');
      await page.waitForFunction(() => window.__page.ask || window.__page.askError, null, {
        timeout: TIMEOUT,
      });
      const a = await vanillaAnswer();
      const want = 'oknokokkkopppp?kooookppppp?okkof';
      assert(
        !a.error && a.prediction === want && a.heads === 2,
        `answer: ${JSON.stringify(a)}, PyTorch's: ${want}`,
      );
      // truncated: a message naming the file, and the .params model stays loaded
      const before = (await P()).models.map((m) => `${m.variant}:${m.label}`).join();
      await page.evaluate(() => {
        window.__page.modelError = null;
      });
      await page.setInputFiles('#file-model', {
        name: 'cut.params',
        mimeType: 'application/octet-stream',
        buffer: params.subarray(0, Math.floor(params.length / 2)),
      });
      await page.waitForFunction(() => window.__page.modelError, null, { timeout: 60000 });
      const msg = (await page.textContent('#model-error')).trim();
      assert(
        (await page.isVisible('#model-error')) && /cut\.params/.test(msg),
        `truncated .params message: ${msg}`,
      );
      const after = (await P()).models.map((m) => `${m.variant}:${m.label}`).join();
      assert(
        after === before && /vanilla:vanilla\.params/.test(after),
        `models changed after a failed upload: ${before} → ${after}`,
      );
      // A synthesizer's head count is read from its weights (w2 has block / heads rows): with the
      // field left empty it loads with its 2 heads, not run.py's 8.
      await page.fill('#params-heads', '');
      await page.evaluate(() => {
        window.__page.modelError = null;
      });
      await page.setInputFiles('#file-model', {
        name: 'synthesizer.params',
        mimeType: 'application/octet-stream',
        buffer: fs.readFileSync(path.join(torchDir, 'synthesizer.params')),
      });
      await page.waitForFunction(
        () =>
          (window.__page.loaded && window.__page.loaded.label === 'synthesizer.params') ||
          window.__page.modelError,
        null,
        { timeout: 60000 },
      );
      const synthErr = await page.evaluate(() => window.__page.modelError);
      assert(
        !synthErr &&
          /synthesizer\s+2 layers × 2 heads × width 16 [^)]*\)\s*synthesizer\.params/.test(
            await page.textContent('#models'),
          ),
        `synthesizer .params: ${synthErr || (await page.textContent('#models'))}`,
      );
      // back to the built-in corpus for the steps after this one
      await page.click('#use-embedded');
      await page.fill('#ask-text', asked);
      return (
        `“qpo?” → “${a.prediction}” (PyTorch's); truncated: “${msg.slice(0, 140)}”; ` +
        `synthesizer.params read with its 2 heads`
      );
    },
  );

  await step(
    'width 4096: refused before anything starts, with the estimate and the limit; the page stays usable',
    async () => {
      await setField('h-n_embd', 4096);
      await setField('h-max_steps', 2);
      const before = await P();
      await page.click('#btn-pretrain');
      await page.waitForFunction(() => !document.getElementById('train-error').hidden, null, {
        timeout: 60000,
      });
      const msg = (await page.textContent('#train-error')).trim();
      const s = await waitPage((s) => s.status === 'idle', 'idle after the refusal', 30000);
      assert(
        /does not fit/.test(msg) &&
          /width 4096/.test(msg) &&
          /GiB of weights/.test(msg) &&
          /more than the [\d.]+ GiB the CPU backend may use in this browser/.test(msg),
        `message: ${msg}`,
      );
      assert(s.steps === before.steps && s.finished === before.finished, 'something ran');
      for (const b of ['btn-pretrain', 'btn-finetune', 'btn-eval', 'btn-ask'])
        assert(await page.isEnabled(`#${b}`), `#${b} is disabled after the refusal`);
      assert(await page.isEnabled('#btn-bench'), 'the benchmark is disabled after the refusal');
      await page
        .locator('#train-card')
        .screenshot({ path: path.join(outDir, 'nogpu-refused.png') });
      // Still usable: a normal run afterwards trains.
      await setField('h-n_embd', 64);
      await setField('h-pre_batch', 4);
      await page.click('#btn-pretrain');
      const s2 = await waitPage(
        (x) => x.finished === s.finished + 1 && x.status === 'idle',
        'a run after the refusal',
      );
      assert(
        !s2.error && s2.steps === 2,
        `after the refusal: ${s2.steps} steps, error ${s2.error}`,
      );
      // And questions still work.
      await page.evaluate(() => {
        window.__page.ask = null;
      });
      await page.click('#btn-ask');
      await page.waitForFunction(() => window.__page.ask || window.__page.askError, null, {
        timeout: TIMEOUT,
      });
      assert(
        await page.evaluate(() => !!(window.__page.ask && window.__page.ask.vanilla)),
        `Ask failed after the refusal: ${await page.evaluate(() => window.__page.askError)}`,
      );
      return msg;
    },
  );

  await step(
    'a batch too big for the CPU backend: refused with the batch that would fit',
    async () => {
      await setField('h-n_embd', 256);
      await setField('h-n_layer', 4);
      await setField('h-n_head', 8);
      await setField('h-pre_batch', 512);
      const before = await P();
      await page.click('#btn-pretrain');
      await page.waitForFunction(
        (f) =>
          !document.getElementById('train-error').hidden &&
          window.__page.status === 'idle' &&
          /does not fit/.test(document.getElementById('train-error').textContent),
        before.finished,
        { timeout: 60000 },
      );
      const msg = (await page.textContent('#train-error')).trim();
      assert(/batch \d+ would fit/.test(msg), `message: ${msg}`);
      await page.selectOption('#preset', 'quick');
      return msg;
    },
  );

  await step(
    'dropout: 1 and a word are refused with a message; 0 trains without dropout',
    async () => {
      await setField('h-max_steps', 2);
      await setField('h-pre_batch', 4);
      const msgs = [];
      for (const bad of ['1', 'lots']) {
        const before = await P();
        await setField('h-dropout', bad);
        await page.click('#btn-pretrain');
        await page.waitForFunction(
          (b) =>
            !document.getElementById('train-error').hidden &&
            document.getElementById('train-error').textContent.includes(`“${b}”`),
          bad,
          { timeout: 30000 },
        );
        const msg = (await page.textContent('#train-error')).trim();
        const s = await P();
        assert(
          /dropout is “.*”; give a probability of at least 0 and below 1 \(0 turns dropout off/.test(
            msg,
          ) &&
            s.status === 'idle' &&
            s.finished === before.finished,
          `dropout ${bad}: ${msg} (status ${s.status})`,
        );
        msgs.push(msg);
      }
      const before = await P();
      await setField('h-dropout', 0);
      await page.click('#btn-pretrain');
      const s = await waitPage(
        (x) => x.finished === before.finished + 1 && x.status === 'idle',
        'a run without dropout',
      );
      assert(
        !s.error && s.started.dropout === 0 && s.steps === 2,
        `dropout 0: ${JSON.stringify(s.started)}, error ${s.error}`,
      );
      await page.selectOption('#preset', 'quick');
      assert(
        (await page.inputValue('#h-dropout')) === '0.1',
        `the preset's dropout is ${await page.inputValue('#h-dropout')}`,
      );
      return `${msgs.map((m) => `“${m}”`).join('; ')}; 0 trained 2 steps with dropout ${s.started.dropout}`;
    },
  );
}
