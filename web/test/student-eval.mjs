// The evaluate steps of student.mjs, run on its page after the presets' steps: a dev file with
// characters the model lacks (skipped, counted, each character named once with its file, line and
// column), the timed first questions counted toward the run (not asked again), Stop keeping and
// showing the answered questions, a long file estimated first (Enter on "Evaluate all" puts focus
// on Stop), a questions-only file with no score block, people the model never saw said to be new
// to it, a one-line text refused as a questions file with what is wrong.
import path from 'node:path';
import { assert, stillShot } from './harness.mjs';

// What the steps need from student.mjs: its page and named `step`, `S` (evaluate in the page),
// `upload` and `evaluateAll`, the built-in dev set (`dev`) and its first 30 lines with three
// questions the model cannot read (`lines`; 'å' at column `colÅ` of the seventh), where the
// pictures go and the steps' timeout.
export async function evaluationSteps({
  page,
  step,
  S,
  upload,
  evaluateAll,
  dev,
  lines,
  colÅ,
  outDir,
  TIMEOUT,
}) {
  await step(
    'evaluate: questions with characters the model lacks are skipped, counted and named once; ' +
      'the timed questions count',
    async () => {
      await upload('file-dev', 'oov_dev.tsv', `${lines.join('\n')}\n`);
      await page.waitForFunction(
        () => document.querySelector('#data-table').innerText.includes('oov_dev.tsv'),
        null,
        { timeout: 30000 },
      );
      await page.selectOption('#eval-file', 'dev');
      await page.fill('#eval-max', '');
      const r = await evaluateAll();
      const skipped = await page.textContent('#eval-skipped');
      const want =
        `3 questions were not asked because the model's vocabulary lacks 'Ω' ` +
        `(U+03A9, first at oov_dev.tsv line 3, column 11) and 'å' (U+00E5, first at oov_dev.tsv ` +
        `line 7, column ${colÅ}); they count as wrong.`;
      assert(skipped === want, `skipped line: “${skipped}”, expected “${want}”`);
      // Its people are the built-in corpus's (whatever the file's name): no note that they are new.
      assert(
        await page.isHidden('#eval-strangers'),
        `the built-in people of oov_dev.tsv called new to the shipped model: ` +
          `“${await page.textContent('#eval-strangers')}”`,
      );
      assert(
        r.rep.rows.length === 30 && r.rep.score[1] === 30,
        `report of ${r.rep.rows.length} rows, score ${r.rep.score}`,
      );
      assert(
        r.rep.rows[2].prediction === '' && r.rep.rows[2].correct === false,
        'a skipped question is not counted wrong',
      );
      // The first 20 were timed (three calls: the estimate) and count toward the run: 30 questions asked in all.
      assert(r.est && r.est.timed === 20, `estimate: ${JSON.stringify(r.est)}`);
      assert(r.asked === 30, `${r.asked} questions were asked for 30 (the timed ones again?)`);
      await stillShot(page, '#eval-card', path.join(outDir, 'student-eval-skipped.png'));
      return `“${skipped}” ${r.rep.line}`;
    },
  );

  await step('evaluate: Stop keeps and shows the questions answered so far', async () => {
    await page.click('#use-embedded');
    await page.selectOption('#eval-file', 'dev');
    await S(() => {
      window.__page.evalReport = null;
      window.__page.evalError = null;
    });
    await page.click('#btn-eval');
    // Stop as soon as the first part is in (or answer "all" to the estimate first).
    await page.waitForFunction(
      () =>
        !document.getElementById('eval-confirm').hidden ||
        /: [1-9]\d* of \d+ questions/.test(document.getElementById('eval-status').textContent) ||
        window.__page.evalReport,
      null,
      { timeout: TIMEOUT },
    );
    if (await page.isVisible('#eval-confirm')) {
      await page.click('#eval-confirm button[data-eval]:not([data-eval="0"])');
      await page.waitForFunction(
        () =>
          /Evaluating .*: [1-9]\d* of \d+ questions/.test(
            document.getElementById('eval-status').textContent,
          ) || window.__page.evalReport,
        null,
        { timeout: TIMEOUT },
      );
    }
    await page.click('#eval-stop');
    await page.waitForFunction(() => window.__page.evalReport || window.__page.evalError, null, {
      timeout: TIMEOUT,
    });
    const rep = await S(() => window.__page.evalReport);
    const status = await page.textContent('#eval-status');
    assert(
      rep && rep.rows.length > 0 && rep.rows.length < rep.total && rep.total === 136,
      `report: ${rep && rep.rows.length} of ${rep && rep.total}`,
    );
    assert(
      status.startsWith(`Stopped after ${rep.rows.length} of 136 questions`),
      `status: ${status}`,
    );
    assert(
      (await page.textContent('#eval-acc-label')).includes(`first ${rep.rows.length} of 136`),
      'the score does not say it covers the answered questions',
    );
    assert(
      (await page.locator('#eval-table tbody tr').count()) === rep.rows.length,
      'the table does not show the answered questions',
    );
    assert(!(await page.isVisible('#eval-stop')), 'Stop still shown');
    // Stop hides itself: focus goes to Evaluate beside it, not to the page's body.
    await page.waitForTimeout(100);
    const focusStopped = await page.evaluate(
      () => document.activeElement.id || document.activeElement.tagName,
    );
    assert(
      focusStopped === 'btn-eval',
      `focus after the evaluation's Stop is on ${focusStopped}, not Evaluate`,
    );
    await stillShot(page, '#eval-card', path.join(outDir, 'student-eval-stopped.png'));
    assert(
      await page.isHidden('#eval-strangers'),
      'the note on unseen people shows for the built-in model on its own dev file',
    );
    return status;
  });

  await step(
    'evaluate: a long file is estimated first; a shorter run within the timed questions costs ' +
      'nothing more; Enter on “Evaluate all” puts focus on Stop',
    async () => {
      // The built-in dev set 160 times over (21,760 questions): past the page's 20 s on either backend
      // (forty times over took 19 s on the CPU backend of a 2-core AMD EPYC, and the page did not ask).
      const all = dev.split('\n').filter(Boolean);
      await upload(
        'file-dev',
        'long_dev.tsv',
        `${Array.from({ length: 160 }, () => all.join('\n')).join('\n')}\n`,
      );
      await page.waitForFunction(
        () => document.querySelector('#data-table').innerText.includes('long_dev.tsv'),
        null,
        { timeout: 30000 },
      );
      await page.selectOption('#eval-file', 'dev');
      await page.fill('#eval-max', '');
      await S(() => {
        window.__page.evalReport = null;
        window.__page.evalError = null;
        window.__page.evalEstimate = null;
      });
      // Enter in "at most" evaluates, as the button does.
      await page.focus('#eval-max');
      await page.keyboard.press('Enter');
      await page.waitForFunction(
        () =>
          !document.getElementById('eval-confirm').hidden ||
          window.__page.evalError ||
          window.__page.evalReport,
        null,
        { timeout: TIMEOUT },
      );
      const box = await page.innerText('#eval-confirm');
      const ran = await S(
        () =>
          window.__page.evalReport &&
          `${window.__page.evalReport.rows.length} questions answered without asking`,
      );
      assert(!ran, `the page did not ask first: ${ran}`);
      const timed = Number((box.match(/the first (\d+) took/) || [])[1] || 0);
      const only = box.match(/Only the first ([\d,]+) \(([^)]*)\)/);
      // (The shipped model's cost was timed by an earlier step: then no question is timed again.)
      assert(/would take about/.test(box), `the estimate's box: “${box}”`);
      assert(
        !only ||
          (Number(only[1].replace(/,/g, '')) <= timed
            ? only[2] === 'answered already'
            : /^about .* more$/.test(only[2])),
        `the shorter run is offered as “${only && only[0]}” after ${timed} timed questions`,
      );
      await stillShot(page, '#eval-card', path.join(outDir, 'student-eval-confirm.png'));
      await page.focus('#eval-confirm button[data-eval]:not([data-eval="0"])');
      await page.keyboard.press('Enter');
      await page.waitForTimeout(100);
      const focus = await page.evaluate(() => ({
        on: document.activeElement.id || document.activeElement.tagName,
        done: !!window.__page.evalReport,
      }));
      assert(
        focus.on === 'eval-stop',
        `focus after “Evaluate all” is on ${focus.on}${focus.done ? ' (the evaluation had ended)' : ''}`,
      );
      await page.waitForFunction(
        () =>
          /Evaluating .*: [1-9][\d,]* of [\d,]+ questions/.test(
            document.getElementById('eval-status').textContent,
          ) || window.__page.evalReport,
        null,
        { timeout: TIMEOUT },
      );
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => window.__page.evalReport || window.__page.evalError, null, {
        timeout: TIMEOUT,
      });
      const rep = await S(() => window.__page.evalReport);
      assert(
        rep && rep.rows.length > 0 && rep.rows.length < rep.total,
        `stopped by Enter on Stop: ${rep && rep.rows.length} of ${rep && rep.total}`,
      );
      await page.click('#use-embedded');
      return (
        `“${box.split('\n')[0].slice(0, 160)}”; ` +
        `${only ? only[0] : 'no shorter run offered'}; stopped at ${rep.rows.length}`
      );
    },
  );

  await step(
    'evaluate: a questions-only file shows no score block; people the model never saw are said ' +
      'to be new to it; a one-line text is refused as questions',
    async () => {
      const qs = lines
        .slice(0, 5)
        .map((l) => l.split('\t')[0].replace('Ω', ''))
        .join('\n');
      await upload('file-test', 'inputs.tsv', `${qs}\n`);
      await page.selectOption('#eval-file', 'test');
      const r = await evaluateAll();
      assert(
        !r.rep.score && r.rep.rows.length === 5,
        `report: ${JSON.stringify(r.rep.score)} ${r.rep.rows.length}`,
      );
      assert(
        !(await page.isVisible('#eval-scores')) && (await page.isVisible('#eval-predictions-only')),
        'a score block beside predictions only',
      );
      // People the built-in corpus does not hold, asked of its model: the note says it guesses.
      await upload(
        'file-dev',
        'others.tsv',
        'Where was Ada Lovelace born?\tLondon\nWhere was Alan Turing born?\tLondon\nWhere was ' +
          'Marie Curie born?\tWarsaw\n',
      );
      await page.waitForFunction(
        () => document.querySelector('#data-table').innerText.includes('others.tsv'),
        null,
        { timeout: 30000 },
      );
      await page.selectOption('#eval-file', 'dev');
      await evaluateAll();
      const strangers = await page.textContent('#eval-strangers');
      assert(
        (await page.isVisible('#eval-strangers')) &&
          /learned the made-up people of the built-in corpus; the people of others\.tsv are new to it/.test(
            strangers,
          ),
        `the note on a model asked about people it never saw: “${strangers}”`,
      );
      await upload('file-dev', 'note.tsv', 'Ann Vole. Ann Vole was born in Paris .\n');
      await page.waitForFunction(() => !document.getElementById('data-error').hidden, null, {
        timeout: 30000,
      });
      const msg = await page.textContent('#data-error');
      assert(
        /note\.tsv: none of its 1 line is a question/.test(msg) && /wiki\.txt/.test(msg),
        `message: ${msg}`,
      );
      return msg.trim();
    },
  );
}
