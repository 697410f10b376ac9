// The steps of page.mjs after its first run has finished, on its page: evaluate (the score beside
// the London baseline, a filterable table) → ask (prediction + attention maps) → upload the CLI's
// checkpoint (same predictions as the CLI) → a synthesizer beside vanilla in Ask → pause, resume in
// place and stop → a non-finite loss → a malformed TSV (line-numbered error) → a bad corpus, a
// non-UTF-8 file, a damaged checkpoint and impossible hyperparameters (messages) → a file dropped
// on the data area.
import fs from 'node:fs';
import path from 'node:path';
import { askAnswer, assert, cardShot } from './harness.mjs';

// What the steps need from page.mjs: its page and named `step`, its reads of the page's state
// (`P`, `waitPage`), `setField`, the fixture folder, where the pictures go, the steps' timeout and
// the quick preset's batch it trains with.
export async function afterFirstRunSteps({
  page,
  step,
  P,
  waitPage,
  setField,
  fixture,
  outDir,
  STEP_TIMEOUT,
  BATCH,
}) {
  // Press Evaluate and wait for its report (or its error); returns the report, failing with the error.
  async function evaluated() {
    await page.click('#btn-eval');
    await page.waitForFunction(() => window.__page.evalReport || window.__page.evalError, null, {
      timeout: STEP_TIMEOUT,
    });
    const rep = await page.evaluate(() => window.__page.evalReport);
    assert(rep, `evaluation failed: ${await page.evaluate(() => window.__page.evalError)}`);
    return rep;
  }

  await step('evaluate: accuracy beside the London baseline and a filterable table', async () => {
    await page.selectOption('#eval-file', 'dev');
    await setField('eval-max', 8);
    const rep = await evaluated();
    assert(
      rep.rows.length === 8 && rep.score && rep.score[1] === 8,
      `report: ${JSON.stringify(rep.score)} for ${rep.rows.length} rows`,
    );
    assert(rep.london && rep.london[1] === 8, 'no London baseline');
    const rows = await page.locator('#eval-table tbody tr').count();
    assert(rows === 8, `table has ${rows} rows`);
    await page.selectOption('#eval-filter', 'wrong');
    const wrong = await page.locator('#eval-table tbody tr').count();
    assert(
      wrong === 8 - rep.score[0],
      `filter "wrong" shows ${wrong}, expected ${8 - rep.score[0]}`,
    );
    await page.selectOption('#eval-filter', 'all');
    // The score as people read it, with the reference's own line beside it.
    const acc = await page.locator('#eval-acc').innerText();
    assert(
      acc === `${rep.score[0]} of 8 correct (${((100 * rep.score[0]) / 8).toFixed(1)}%)`,
      `score shown as “${acc}”`,
    );
    assert(
      (await page.locator('#eval-line').innerText()) === rep.line &&
        rep.line.startsWith('Correct: '),
      `reference line “${rep.line}”`,
    );
    return `${acc}; ${rep.line} (London: ${rep.london_line})`;
  });

  await step('ask a name: a prediction and the attention maps per layer and head', async () => {
    const q = await page.evaluate(() => window.__page.evalReport.rows[0].question);
    const name = q.replace(/^Where was /, '').replace(/ born\?$/, '');
    await page.fill('#ask-text', name);
    await page.click('#btn-ask');
    await page.waitForFunction(() => window.__page.ask || window.__page.askError, null, {
      timeout: STEP_TIMEOUT,
    });
    // Every attention row is a probability distribution over the causal prefix.
    const a = await askAnswer(page);
    assert(!a.error, `ask failed: ${a.error}`);
    assert(a.question === q, `asked “${a.question}”, expected “${q}”`);
    assert(a.layers === 2 && a.heads === 4, `${a.layers} layers × ${a.heads} heads of maps`);
    assert(a.worst < 1e-4, `an attention row sums to 1 ± ${a.worst}`);
    const thumbs = await page.locator('#ask-result canvas.thumb').count();
    assert(thumbs === 8, `${thumbs} heatmap thumbnails`);
    // The map explains itself: a colour scale, ⁇ and the causal mask in words, the weight on hover.
    assert(
      (await page.locator('#ask-result canvas.legend').count()) === 1,
      'no colour scale beside the map',
    );
    // The explanation is folded below the answers ("How to read the maps"): its text, and the fold shown.
    const how = await page.locator('#ask-how').textContent();
    assert(
      how.includes('⁇') && how.includes('causal mask'),
      `no line explaining ⁇ and the triangle: “${how}”`,
    );
    assert(
      await page.isVisible('#ask-how-box > summary'),
      'the fold "How to read the maps" is not shown',
    );
    const big = page.locator('#ask-result canvas.big-map').first();
    await big.scrollIntoViewIfNeeded();
    const bb = await big.boundingBox();
    await page.mouse.move(bb.x + bb.width - 8, bb.y + bb.height - 8);
    const hover = await page.evaluate(() => window.__page.askHover);
    assert(
      hover &&
        Number.isFinite(hover.weight) &&
        /weight \d\.\d{3}$/.test(hover.text) &&
        (await page.locator('#ask-result .map-readout').innerText()) === hover.text,
      `hovering a cell shows no weight: ${JSON.stringify(hover)}`,
    );
    // A touch on a cell (no hover on a touch screen) reads it too: the first column of the last row.
    const touched = await page.evaluate(
      ({ x, y }) => {
        window.__page.askHover = null;
        document.querySelector('#ask-result .big-map').dispatchEvent(
          new PointerEvent('pointerdown', {
            clientX: x,
            clientY: y,
            pointerType: 'touch',
            bubbles: true,
          }),
        );
        return window.__page.askHover;
      },
      { x: bb.x + 20, y: bb.y + bb.height - 8 },
    );
    assert(
      touched && touched.j === 0 && touched.i === hover.i && /weight \d\.\d{3}$/.test(touched.text),
      `a touch on a cell reads nothing: ${JSON.stringify(touched)} (hover ${JSON.stringify(hover)})`,
    );
    await cardShot(page, '#ask-card', path.join(outDir, 'page-ask.png'));
    return `“${a.question}” → “${a.prediction}”, maps over ${a.T} characters`;
  });

  await step(
    'upload the CLI-made checkpoint through the file input: the CLI’s predictions',
    async () => {
      await page.setInputFiles('#file-model', path.join(fixture, 'cli-vanilla.safetensors'));
      await page.waitForFunction(
        () =>
          (window.__page.loaded && window.__page.loaded.label === 'cli-vanilla.safetensors') ||
          window.__page.modelError,
        null,
        { timeout: 60000 },
      );
      const err = await page.evaluate(() => window.__page.modelError);
      assert(!err, `upload failed: ${err}`);
      const note = await page.textContent('#model-note');
      assert(
        /^Loaded cli-vanilla\.safetensors as the vanilla model: \d+ layers/.test(note.trim()),
        `the Models card after the upload says: “${note}”`,
      );
      // Its Download is named after the model (two downloads are told apart) and is the same file.
      const [saved] = await Promise.all([
        page.waitForEvent('download'),
        page.click('#models button[data-download="vanilla"]'),
      ]);
      assert(
        saved.suggestedFilename() === 'vanilla-cli-vanilla.safetensors',
        `the model downloads as ${saved.suggestedFilename()}`,
      );
      assert(fs.readFileSync(await saved.path()).length > 1000, 'the downloaded model is empty');
      await page.evaluate(() => {
        window.__page.evalReport = null;
      });
      await page.selectOption('#eval-variant', 'vanilla');
      await setField('eval-max', 8);
      const rep = await evaluated();
      const cli = fs
        .readFileSync(path.join(fixture, 'cli-vanilla.predictions'), 'utf8')
        .split('\n')
        .slice(0, 8);
      const got = rep.rows.map((r) => r.prediction);
      assert(
        JSON.stringify(got) === JSON.stringify(cli),
        `page predictions ${JSON.stringify(got)} ≠ CLI ${JSON.stringify(cli)}`,
      );
      // The download is the CLI's --outputs_path file, byte for byte.
      const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#eval-download')]);
      const file = fs.readFileSync(await dl.path(), 'utf8');
      const want = fs.readFileSync(path.join(fixture, 'cli-vanilla.predictions'), 'utf8');
      assert(
        file === want,
        `downloaded predictions ${JSON.stringify(file)} ≠ the CLI's --outputs_path file ${JSON.stringify(want)}`,
      );
      // Named after the model and the file; a run cut by "at most" says it covered the file's first questions.
      assert(
        dl.suggestedFilename() === 'vanilla-cli-vanilla.birth_dev.predictions',
        `the predictions download as ${dl.suggestedFilename()}`,
      );
      const accLabel = await page.locator('#eval-acc-label').innerText();
      assert(
        /^accuracy on the first 8 of [\d,]+ questions of birth_dev\.tsv/.test(accLabel),
        `a run of “at most 8” is labelled “${accLabel}”`,
      );
      // A row's question button (the person's name) asks the question in Ask, by keyboard too:
      // the answer is the row's prediction, with the maps.
      // (The Ask step above asked the same question of another model: its answer is cleared first.)
      await page.evaluate(() => {
        window.__page.ask = null;
        window.__page.askError = null;
      });
      await page.locator('#eval-table tbody button.cell-ask').first().focus();
      await page.keyboard.press('Enter');
      assert(
        (await page.inputValue('#ask-text')) === rep.rows[0].question,
        `the first row's button put “${await page.inputValue('#ask-text')}” in Ask`,
      );
      await page.waitForFunction(
        (q) =>
          (window.__page.ask &&
            window.__page.ask.vanilla &&
            window.__page.ask.vanilla.question === q) ||
          window.__page.askError,
        rep.rows[0].question,
        { timeout: STEP_TIMEOUT },
      );
      const asked = await askAnswer(page);
      assert(
        asked.question === rep.rows[0].question &&
          asked.prediction === rep.rows[0].prediction &&
          asked.layers > 0,
        `the first row's button asked: ${JSON.stringify(asked)} (its row: ${JSON.stringify(rep.rows[0])})`,
      );
      // A second name clicked while the first is being answered is asked right after it.
      await page.evaluate(() => {
        window.__page.ask = null;
        const bs = document.querySelectorAll('#eval-table tbody button.cell-ask');
        bs[1].click();
        bs[2].click();
      });
      await page.waitForFunction(
        (q) =>
          (window.__page.ask &&
            window.__page.ask.vanilla &&
            window.__page.ask.vanilla.question === q) ||
          window.__page.askError,
        rep.rows[2].question,
        { timeout: STEP_TIMEOUT },
      );
      const later = await askAnswer(page);
      assert(
        later.question === rep.rows[2].question && later.prediction === rep.rows[2].prediction,
        `a name clicked while Ask was busy: ${JSON.stringify(later)} (its row: ${JSON.stringify(rep.rows[2])})`,
      );
      // A file without answers: predictions only, no score and no ✓/✗ column.
      const inputs =
        fs
          .readFileSync(path.join(fixture, 'data', 'birth_dev.tsv'), 'utf8')
          .split('\n')
          .filter(Boolean)
          .slice(0, 3)
          .map((l) => l.split('\t')[0])
          .join('\n') + '\n';
      await page.setInputFiles('#file-test', {
        name: 'birth_test_inputs.tsv',
        mimeType: 'text/tab-separated-values',
        buffer: Buffer.from(inputs),
      });
      await page.evaluate(() => {
        window.__page.evalReport = null;
      });
      await page.selectOption('#eval-file', 'test');
      await evaluated();
      const only = await page.evaluate(() => ({
        rep: window.__page.evalReport,
        head: document.querySelector('#eval-table thead').innerText,
        scores: document.getElementById('eval-scores').hidden,
        note: document.getElementById('eval-predictions-only').innerText,
        body: document.querySelector('#eval-table tbody').innerText,
      }));
      assert(
        only.rep && !only.rep.score && only.rep.rows.length === 3,
        `answerless evaluation: ${JSON.stringify(only.rep && only.rep.score)}`,
      );
      assert(
        !(await page.locator('#eval-filter-label').isVisible()),
        'the ✓/✗ filter is shown for a file without answers',
      );
      assert(
        only.scores &&
          only.note.startsWith('Predictions only') &&
          !/right|answer\t/.test(only.head) &&
          !/[✓✗]/.test(only.body),
        `answerless file shown as scored: head “${only.head}”, note “${only.note}”`,
      );
      await page.selectOption('#eval-file', 'dev');
      return (
        `8 of 8 predictions equal the CLI’s (${got.join(', ')}), and so does the ` +
        `downloaded file; an answerless file gives predictions only`
      );
    },
  );

  await step(
    'synthesizer beside vanilla: a few steps, then Ask shows both side by side',
    async () => {
      await page.check('input[name=variant][value=synthesizer]');
      await setField('h-pre_batch', BATCH);
      await setField('h-max_steps', 3);
      await page.click('#btn-pretrain');
      const s = await waitPage(
        (s) => s.finished >= 2 && s.status === 'idle',
        'the synthesizer run',
      );
      assert(
        s.models.map((m) => m.variant).join() === 'vanilla,synthesizer',
        `models: ${s.models.map((m) => m.variant)}`,
      );
      await page.evaluate(() => {
        window.__page.ask = null;
      });
      await page.fill('#ask-text', 'Where was Ada Lovelace born?');
      await page.click('#btn-ask');
      await page.waitForFunction(
        () =>
          (window.__page.ask && Object.keys(window.__page.ask).length === 2) ||
          window.__page.askError,
        null,
        { timeout: STEP_TIMEOUT },
      );
      const err = await page.evaluate(() => window.__page.askError);
      assert(!err, `ask failed: ${err}`);
      // A character neither model knows: named once, not once per model.
      await page.evaluate(() => {
        window.__page.askError = null;
      });
      await page.fill('#ask-text', 'Zoe Ωmega');
      await page.click('#btn-ask');
      await page.waitForFunction(() => window.__page.askError, null, { timeout: STEP_TIMEOUT });
      const oov = await page.locator('#ask-error').innerText();
      assert(
        oov.split('“Ω”').length === 2 && !oov.includes('vanilla:') && oov.includes('U+03A9'),
        `out-of-vocabulary message: “${oov}”`,
      );
      await page.evaluate(() => {
        window.__page.ask = null;
        window.__page.askError = null;
      });
      await page.fill('#ask-text', 'Where was Ada Lovelace born?');
      await page.click('#btn-ask');
      await page.waitForFunction(
        () =>
          (window.__page.ask && Object.keys(window.__page.ask).length === 2) ||
          window.__page.askError,
        null,
        { timeout: STEP_TIMEOUT },
      );
      const cols = await page.locator('#ask-result .ask-col').count();
      const thumbs = await page.locator('#ask-result canvas.thumb').count();
      assert(cols === 2 && thumbs === 16, `${cols} columns, ${thumbs} thumbnails`);
      const preds = await page.evaluate(() =>
        Object.entries(window.__page.ask)
          .map(([v, a]) => `${v}: “${a.prediction}”`)
          .join(', '),
      );
      await cardShot(page, '#ask-card', path.join(outDir, 'page-ask-both.png'));
      return preds;
    },
  );

  await step(
    'pause, resume in place and stop: the buttons follow the state and Stop keeps the model',
    async () => {
      await page.check('input[name=variant][value=vanilla]');
      await setField('h-pre_batch', 2);
      await setField('h-max_steps', 400);
      const finished = (await P()).finished;
      // From the keyboard: Enter on Pretrain; focus then moves to Pause, not to the page's body.
      await page.focus('#btn-pretrain');
      await page.keyboard.press('Enter');
      await waitPage((s) => s.status === 'running' && s.steps >= 1, 'a running run');
      assert(await page.isDisabled('#btn-bench'), 'the benchmark could start while training ran');
      assert(
        (await page.isDisabled('#btn-pretrain')) && (await page.isEnabled('#btn-pause')),
        'buttons while running',
      );
      const focusRunning = await page.evaluate(
        () => document.activeElement.id || document.activeElement.tagName,
      );
      assert(focusRunning === 'btn-pause', `focus after Pretrain is on ${focusRunning}, not Pause`);
      // The demos say why an update waits while a run trains (they share its device).
      assert(await page.isVisible('#demos-busy'), 'the demos do not say that a run is training');
      const tPause = Date.now();
      await page.keyboard.press('Enter');
      let s = await waitPage((s) => s.status === 'paused', 'the pause');
      await page.waitForTimeout(100);
      const focusPaused = await page.evaluate(() => [
        document.activeElement.id || document.activeElement.tagName,
        document.activeElement.disabled,
      ]);
      assert(
        focusPaused[0] !== 'BODY' && !focusPaused[1],
        `focus after Pause fell to ${focusPaused[0]}`,
      );
      const pauseMs = Date.now() - tPause;
      // Pause acts within about a second when a step is short (chunks of ~0.4 s; the save included).
      assert(
        pauseMs < 1500 + 2 * s.msPerStep,
        `Pause took ${pauseMs} ms at ${Math.round(s.msPerStep)} ms a step`,
      );
      const pausedAt = s.steps;
      assert(
        (await page.isEnabled('#btn-resume')) && (await page.isEnabled('#btn-stop')),
        'buttons while paused',
      );
      await page.waitForTimeout(500);
      assert((await P()).steps === pausedAt, 'steps went on while paused');
      await page.click('#btn-resume');
      s = await waitPage((s) => s.status === 'running' && s.steps > pausedAt, 'steps after Resume');
      await page.click('#btn-stop');
      s = await waitPage((s) => s.status === 'idle' && s.finished === finished + 1, 'the stop');
      const label = s.models.find((m) => m.variant === 'vanilla').label;
      assert(
        /stopped early/.test(label) && s.steps < 400,
        `model label after Stop: ${label} at step ${s.steps}`,
      );
      // No stale ETA after Stop; the time per step as people read it; the earlier runs stay on the chart.
      const prog = await page.textContent('#progress-text');
      assert(
        !/ETA/.test(prog) && /stopped at step/.test(prog),
        `progress line after Stop: “${prog}”`,
      );
      const saved = await page.textContent('#s-saved');
      assert(
        saved.startsWith(`the model, step ${s.steps.toLocaleString('en')} at`),
        `“saved” after Stop at step ${s.steps}: “${saved}”`,
      );
      assert(
        await page.isHidden('#demos-busy'),
        'the demos still say a run is training after Stop',
      );
      const ms = await page.textContent('#s-ms');
      assert(/^\d+(\.\d+)? (ms|s)$|^\d+ min \d\d s$/.test(ms), `time per step shown as “${ms}”`);
      assert(
        s.chartSeries.length >= 2,
        `the chart lost the earlier curves: ${JSON.stringify(s.chartSeries)}`,
      );
      assert(await page.isEnabled('#btn-bench'), 'the benchmark stayed disabled after the run');
      return `paused at ${pausedAt}, resumed, stopped at ${s.steps}: “${label}”`;
    },
  );

  await step('a non-finite loss stops training and says so', async () => {
    await page.check('input[name=variant][value=vanilla]');
    await setField('h-pre_batch', 2);
    await setField('h-max_steps', 12);
    await setField('h-pre_lr', '1e6');
    await page.click('#btn-pretrain');
    await waitPage((s) => s.status === 'idle' && s.error, 'error', STEP_TIMEOUT);
    const msg = await page.textContent('#train-error');
    assert(
      /the loss became (NaN|inf)/.test(msg) && /lower the learning rate/.test(msg),
      `message: ${msg}`,
    );
    await setField('h-pre_lr', '6e-3');
    return msg.trim();
  });

  await step('a malformed TSV: an error with the line number and what is wrong', async () => {
    const bad = 'Where was Ada Lovelace born?\tLondon\nWhere was Alan Turing born? London\n';
    await page.setInputFiles('#file-dev', {
      name: 'birth_dev.tsv',
      mimeType: 'text/tab-separated-values',
      buffer: Buffer.from(bad),
    });
    await page.waitForFunction(() => window.__page.dataError, null, { timeout: 30000 });
    const msg = await page.textContent('#data-error');
    assert(await page.isVisible('#data-error'), 'the error is not visible');
    assert(/birth_dev\.tsv:2:/.test(msg), `message lacks file:line: ${msg}`);
    return msg.trim();
  });

  await step(
    'bad inputs in the page: a corpus with MASK, a non-UTF-8 file, a damaged checkpoint, impossible hyperparameters',
    async () => {
      const got = [];
      // a corpus holding the reserved MASK character on its second line
      await page.setInputFiles('#file-wiki', {
        name: 'wiki.txt',
        mimeType: 'text/plain',
        buffer: Buffer.from('Ada was born in London.\nBob \u2047 was born in Paris.\n'),
      });
      await page.waitForFunction(
        () => window.__page.dataError && /wiki\.txt/.test(window.__page.dataError),
        null,
        { timeout: 30000 },
      );
      let msg = await page.textContent('#data-error');
      assert(
        (await page.isVisible('#data-error')) && /wiki\.txt:2/.test(msg),
        `corpus message: ${msg}`,
      );
      got.push(msg.trim());
      // bytes that are not UTF-8
      // A question TSV given as the pretraining text is refused, not trained on.
      await page.evaluate(() => {
        window.__page.dataError = null;
      });
      await page.setInputFiles('#file-wiki', {
        name: 'questions.txt',
        mimeType: 'text/plain',
        buffer: Buffer.from(
          'Where was Ada Lovelace born?\tLondon\nWhere was Alan Turing born?\tLondon\n',
        ),
      });
      await page.waitForFunction(() => window.__page.dataError, null, { timeout: 30000 });
      const asWiki = await page.evaluate(() => window.__page.dataError);
      assert(
        /questions\.txt looks like a questions file/.test(asWiki),
        `a question TSV as wiki.txt: ${asWiki}`,
      );
      await page.setInputFiles('#file-train', {
        name: 'birth_places_train.tsv',
        mimeType: 'text/plain',
        buffer: Buffer.from([0x57, 0x68, 0xff, 0xfe, 0x09, 0x41, 0x0a]),
      });
      await page.waitForFunction(
        () => window.__page.dataError && /UTF-8/.test(window.__page.dataError),
        null,
        { timeout: 30000 },
      );
      msg = await page.textContent('#data-error');
      assert(/birth_places_train\.tsv/.test(msg), `UTF-8 message: ${msg}`);
      got.push(msg.trim());
      // a truncated checkpoint: refused, and the models already loaded stay
      const before = (await P()).models.map((m) => `${m.variant}:${m.label}`).join();
      const good = fs.readFileSync(path.join(fixture, 'cli-vanilla.safetensors'));
      await page.evaluate(() => {
        window.__page.modelError = null;
      });
      await page.setInputFiles('#file-model', {
        name: 'broken.safetensors',
        mimeType: 'application/octet-stream',
        buffer: good.subarray(0, Math.floor(good.length / 2)),
      });
      await page.waitForFunction(() => window.__page.modelError, null, { timeout: 60000 });
      msg = await page.textContent('#model-error');
      assert(
        (await page.isVisible('#model-error')) && /broken\.safetensors/.test(msg),
        `checkpoint message: ${msg}`,
      );
      const after = (await P()).models.map((m) => `${m.variant}:${m.label}`).join();
      assert(after === before, `models changed after a failed upload: ${before} → ${after}`);
      got.push(msg.trim().slice(0, 100));
      // width 64 cannot be split into 3 heads: a message, and nothing starts
      await page.check('input[name=variant][value=vanilla]');
      await setField('h-n_head', 3);
      const steps = (await P()).steps;
      await page.click('#btn-pretrain');
      await page.waitForFunction(() => !document.getElementById('train-error').hidden, null, {
        timeout: 30000,
      });
      msg = await page.textContent('#train-error');
      const s = await P();
      assert(
        /^width 64 cannot be split into 3 heads: .*choose width 63 or 66, or 2 heads$/.test(
          msg.trim(),
        ) &&
          s.status === 'idle' &&
          s.steps === steps,
        `hyperparameter message: ${msg} (status ${s.status})`,
      );
      await setField('h-n_head', 4);
      got.push(msg.trim());
      // layers −1, then empty: refused with the field's range, nothing starts
      const layers = await page.inputValue('#h-n_layer');
      for (const [typed, said] of [
        ['-1', 'layers is “-1”'],
        ['', 'layers is empty'],
      ]) {
        await page.evaluate((v) => {
          document.getElementById('h-n_layer').value = v;
        }, typed);
        await page.click('#btn-pretrain');
        await page.waitForFunction(
          (w) => document.getElementById('train-error').textContent.startsWith(w),
          said,
          { timeout: 30000 },
        );
        msg = await page.textContent('#train-error');
        assert(
          msg.trim() === `${said}; give a whole number from 1 to 64` && (await P()).steps === steps,
          `layers message: ${msg}`,
        );
        got.push(msg.trim());
      }
      await setField('h-n_layer', layers);
      // the rate's floor at epoch 0: refused by name, nothing starts
      await setField('h-pre_decay', 0);
      await page.click('#btn-pretrain');
      await page.waitForFunction(
        () => /floor at epoch/.test(document.getElementById('train-error').textContent),
        null,
        { timeout: 30000 },
      );
      msg = await page.textContent('#train-error');
      assert(
        /pretrain learning rate's floor at epoch is “0”; give a whole number of at least 1/.test(
          msg,
        ) && (await P()).steps === steps,
        `floor message: ${msg}`,
      );
      await setField('h-pre_decay', 200);
      got.push(msg.trim());
      return got.map((m) => `“${m}”`).join('; ');
    },
  );

  await step(
    'drag and drop: a question file dropped on the data area is loaded by its name',
    async () => {
      const tsv =
        'Where was Ada Lovelace born?\tLondon\nWhere was Alan Turing born?\tLondon\nWhere was ' +
        'Marie Curie born?\tWarsaw\n';
      await page.evaluate((text) => {
        const dt = new DataTransfer();
        dt.items.add(new File([text], 'birth_dev.tsv', { type: 'text/tab-separated-values' }));
        const zone = document.getElementById('drop');
        for (const type of ['dragenter', 'dragover', 'drop'])
          zone.dispatchEvent(
            new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }),
          );
      }, tsv);
      await page.waitForFunction(
        () => /3 questions with answers/.test(document.getElementById('data-table').textContent),
        null,
        { timeout: 30000 },
      );
      const s = await P();
      assert(
        s.dataSource === 'files' && !s.dataError,
        `data source ${s.dataSource}, error ${s.dataError}`,
      );
      return 'birth_dev.tsv → “3 questions with answers”';
    },
  );
}
