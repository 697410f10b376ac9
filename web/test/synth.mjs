// Browser test of the shipped synthesizer (web/page/ondemand.js, web/models/builtin-synthesizer.*),
// on ATTNLAB_BACKEND's backend (WebGPU by default, see browser.mjs): the Models card offers it with
// its dev score; E9 says how to get it and its button loads it (the page's event, not a reload); E9
// then draws its maps beside the vanilla model's and the button goes; Ask answers with both
// variants, the synthesizer's answer the CLI's; evaluated on the built-in dev questions (all 136 on
// the CPU backend, the first 24 on WebGPU) its predictions are the CLI's, line for line
// (results/builtin800/synth650.dev.predictions: the f32 model's, which the f16 copy keeps); a
// reload keeps it.
// Usage: node web/test/synth.mjs [base URL]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openBrowser, pageUrl } from './browser.mjs';
import { cardShot, checks, outDir as testOut } from './harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..', '..');
const base = process.argv[2] || 'http://127.0.0.1:8080/';
const url = pageUrl(base);
const outDir = testOut();
const TIMEOUT = 240000;
const facts = JSON.parse(
  fs.readFileSync(path.join(root, 'web', 'models', 'builtin-synthesizer.json'), 'utf8'),
);
const cli = fs
  .readFileSync(path.join(root, 'results', 'builtin800', 'synth650.dev.predictions'), 'utf8')
  .split('\n')
  .filter(Boolean);
const { check, failures } = checks();
const pct = (o) => `${((100 * o.correct) / o.total).toFixed(1)}%`;

const { ctx, close } = await openBrowser('synth', { width: 1280, height: 900 });
try {
  const page = ctx.pages()[0] || (await ctx.newPage());
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(url);
  await page.waitForFunction(
    () =>
      window.__page &&
      window.__page.ready &&
      window.__page.synth &&
      window.__page.synth.facts &&
      window.__demos &&
      window.__demos.ready,
    null,
    { timeout: TIMEOUT },
  );
  const text = await page.textContent('#synth-facts');
  check(
    /Shipped synthesizer/.test(text) &&
      text.includes(pct(facts.dev_accuracy)) &&
      text.includes(`${facts.dev_accuracy.correct} of ${facts.dev_accuracy.total}`),
    `the Models card offers it with its dev score: “${text.slice(0, 200)}…”`,
  );
  const history = text.match(
    /\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b|\.sh\b|\bnice \d|\b(results|scripts)\/|\bsessions? ?\d/i,
  );
  check(!history, `how it was made carries no process history (found “${history && history[0]}”)`);
  const label = await page.textContent('#load-synth');
  check(
    /^Load the shipped synthesizer \(\d+\.\d MB\)$/.test(label),
    `its button says the size: “${label}”`,
  );
  // The Ask card points to it while no synthesizer model is loaded.
  const hint = await page
    .waitForFunction(
      () => {
        const h = document.getElementById('ask-synth-hint');
        return h && !h.hidden && h.textContent;
      },
      null,
      { timeout: TIMEOUT },
    )
    .then((h) => h.jsonValue())
    .catch(() => '');
  check(/shipped synthesizer/.test(hint), `the Ask card points to it: “${hint}”`);
  // E9 before: no synthesizer model, and the button that loads one.
  const e9Button = page.locator('#e9 .ctl-button button', {
    hasText: 'load the shipped synthesizer model',
  });
  const before = await page.evaluate(
    () => window.__demos.results.e9 && window.__demos.results.e9.synth,
  );
  check(
    before && before.missing === true && (await e9Button.isVisible()),
    'E9 has no synthesizer model yet and offers the button',
  );
  await page.locator('#e9').scrollIntoViewIfNeeded();
  await cardShot(page, '#e9', path.join(outDir, 'synth-e9-before.png'));
  await e9Button.click();
  // Loaded, and the Models card's list brought up to date (refreshed after the load, behind the
  // engine calls already queued).
  await page.waitForFunction(
    (label) => {
      const p = window.__page;
      return (
        p.synth.state === 'failed' ||
        (p.synth.state === 'loaded' &&
          p.models.some((m) => m.slot === 'synthesizer' && m.label === label))
      );
    },
    facts.label,
    { timeout: TIMEOUT },
  );
  const s = await page.evaluate(() => ({
    state: window.__page.synth.state,
    note: window.__page.synth.note,
    models: window.__page.models.map((m) => `${m.slot}: ${m.label}`),
  }));
  check(
    s.state === 'loaded' &&
      s.models.includes(`synthesizer: ${facts.label}`) &&
      s.models.some((m) => /^vanilla: shipped model/.test(m)),
    `E9's button loaded it as the synthesizer model beside the shipped vanilla one: ` +
      `${s.state}${s.note ? ` (${s.note})` : ''}; ${s.models.join(', ')}`,
  );
  const drawn = await page
    .waitForFunction(
      () => {
        const r = window.__demos.results.e9;
        return r && r.synth && r.synth.maps && r.synth.layers;
      },
      null,
      { timeout: TIMEOUT },
    )
    .then((h) => h.jsonValue())
    .catch(() => 0);
  await page.waitForTimeout(300);
  check(
    drawn === 4 && (await e9Button.isHidden()),
    `E9 draws the synthesizer's maps (${drawn} layers) and its button is gone`,
  );
  await cardShot(page, '#e9', path.join(outDir, 'synth-e9.png'));
  // Ask: both variants answer; the synthesizer's answer to the first built-in dev question is the CLI's.
  const who = await page.getAttribute('#ask-examples button[data-ask]', 'data-ask');
  await page.fill('#ask-text', who);
  await page.evaluate(() => {
    window.__page.ask = null;
  });
  await page.click('#btn-ask');
  await page.waitForFunction(() => window.__page.ask || window.__page.askError, null, {
    timeout: TIMEOUT,
  });
  const a = await page.evaluate(() => ({
    v: window.__page.ask && window.__page.ask.vanilla,
    s: window.__page.ask && window.__page.ask.synthesizer,
    error: window.__page.askError,
  }));
  check(
    !a.error && a.v && a.s && a.s.prediction === cli[0],
    `Ask answers with both: vanilla “${a.v && a.v.prediction}”, synthesizer ` +
      `“${a.s && a.s.prediction}” (the CLI: ` +
      `“${cli[0]}”)${a.error ? `; error: ${a.error}` : ''}`,
  );
  check((await page.locator('#ask-result canvas').count()) >= 2, 'with the maps of both');
  check(await page.isHidden('#ask-synth-hint'), 'the pointer to it is gone once it is loaded');
  await cardShot(page, '#ask-card', path.join(outDir, 'synth-ask.png'));
  // Evaluate the built-in dev questions with it (an estimate's box, if one asks, is accepted): all
  // 136 on the CPU backend (3 s here), the first 24 on WebGPU (all took 151 s on SwiftShader).
  const n = process.env.ATTNLAB_BACKEND === 'cpu' ? cli.length : 24;
  // The built-in corpus's files (a server started with --data offers its own, and the page takes them).
  await page.click('#use-embedded');
  await page.selectOption('#eval-variant', 'synthesizer');
  await page.selectOption('#eval-file', 'dev');
  await page.fill('#eval-max', n === cli.length ? '' : String(n));
  await page.evaluate(() => {
    window.__page.evalReport = null;
    window.__page.evalError = null;
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
  const rep = await page.evaluate(
    () =>
      window.__page.evalReport && {
        rows: window.__page.evalReport.rows.map((r) => r.prediction),
        score: window.__page.evalReport.score,
        file: window.__page.evalReport.file,
      },
  );
  const differ = rep ? rep.rows.findIndex((p, i) => p !== cli[i]) : -2;
  const except =
    differ >= 0 ? `, except line ${differ + 1}: “${rep.rows[differ]}” for “${cli[differ]}”` : '';
  check(
    rep &&
      rep.file === 'built-in birth_dev.tsv' &&
      rep.rows.length === n &&
      differ === -1 &&
      (n < cli.length || rep.score[0] === facts.dev_accuracy.correct),
    rep
      ? `its ${rep.rows.length} dev predictions (of ${cli.length}) are the ` +
          `CLI's${except}; ` +
          `${rep.score[0]} of ${rep.score[1]} right (facts: ${facts.dev_accuracy.correct}) of ` +
          `${rep.file}`
      : `the evaluation failed: ${await page.evaluate(() => window.__page.evalError)}`,
  );
  await cardShot(page, '#models-card', path.join(outDir, 'synth-models.png'));
  // A reload brings it back (the browser keeps a mark, the page fetches it again).
  await page.reload();
  await page
    .waitForFunction(
      () =>
        window.__page &&
        window.__page.ready &&
        window.__page.synth &&
        window.__page.synth.state === 'loaded',
      null,
      { timeout: TIMEOUT },
    )
    .catch(() => {});
  const after = await page.evaluate(() => ({
    state: window.__page.synth.state,
    models: window.__page.models.map((m) => `${m.slot}: ${m.label}`),
  }));
  check(
    after.state === 'loaded' &&
      after.models.includes(`synthesizer: ${facts.label}`) &&
      after.models.some((m) => /^vanilla: shipped model/.test(m)),
    `after a reload it is the synthesizer model again, the shipped vanilla model beside it ` +
      `(${after.models.join(', ')})`,
  );
  check(errors.length === 0, `no page errors${errors.length ? `: ${errors.join('; ')}` : ''}`);
} finally {
  await close();
}
console.log(
  failures.length
    ? `RESULT: ${failures.length} FAILED`
    : 'RESULT: ALL SHIPPED SYNTHESIZER CHECKS PASSED',
);
process.exit(failures.length ? 1 : 0);
