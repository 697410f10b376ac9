// Browser test of an evaluation split across the CPU backend's engines (web/page/eval.js,
// web/helpers.js, src/wasm/eval_split.rs), each run in a fresh browser profile, with the shipped
// model on the built-in dev set (136 questions) where six questions carry a character the model
// lacks (skipped, counted and named):
//   A  one engine (?workers=1): the reference report;
//   B  two engines on the cross-origin isolated server: the same report (every row's prediction,
//      line for line, the score, the London line, the skipped line), the helper answering a share;
//   C  two engines behind a server without COEP (not isolated): the same report;
//   D  two engines, Stop in the middle (after a round on both) of the set followed by itself (272
//      questions): the answered questions are the file's first ones, their rows A's first rows,
//      their score A's over them, their skipped line counting those among them and naming the
//      characters as A's;
//   E  two engines asked, the helper's wasm module refused by the network: the Device card says
//      "2 engines asked, 1 running" and why, and the evaluation (the first 10 questions) gives A's
//      first 10 rows on one engine.
// Before each of A–D a first evaluation of 8 questions starts the helper (it joins an evaluation
// once it holds the model, web/page/eval.js join), so that the helper takes part in the next.
// Each evaluation's time is printed (not asserted: BENCHMARKS.md has the measurement).
// Usage: node web/test/eval-workers.mjs ISOLATED_URL [NOT_ISOLATED_URL]  (as web/test/workers.mjs)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openBrowser } from './browser.mjs';
import { plainServer } from './serve.mjs';
import { assert, steps } from './harness.mjs';

const outDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'out', 'cpu');
fs.mkdirSync(outDir, { recursive: true });
const isolatedBase = process.argv[2] || 'http://127.0.0.1:8080/';
const TIMEOUT = 300000;
// Questions with a character the shipped model lacks (0-based): spread so that the helper's blocks
// get some; Ω and å first at lines 2 and 6.
const OOV = { 1: 'Ω', 5: 'å', 6: 'Ω', 70: 'å', 100: 'Ω', 131: 'Ω' };
// Named steps (harness.mjs); a failed one is counted and the next runs.
const { step: check, summary } = steps({
  label: 'eval-workers',
  dir: outDir,
  page: () => null,
  what: 'CHECKS',
  keepGoing: true,
});
const t0 = Date.now();

// The built-in dev set, the questions OOV names given a character the shipped model lacks;
// `twice`: followed by itself (272 questions).
async function devFile(page, twice) {
  const text = await page.evaluate(async () => {
    const { builtinDev } = await import('./web/page/data.js');
    return builtinDev()
      .map((r) => r.join('\t'))
      .join('\n');
  });
  const lines = text.split('\n');
  for (const [i, ch] of Object.entries(OOV))
    lines[i] = lines[i].replace('Where was ', `Where was ${ch}`);
  return `${lines.join('\n')}\n`.repeat(twice ? 2 : 1);
}

// A page at `query` with the shipped model and the dev file loaded (`twice`: devFile's); `block`:
// refuse the helpers' wasm module (every request for it after the page's engine's).
async function open(name, base, query, { block = false, twice = false } = {}) {
  const b = await openBrowser(`eval-workers-${name}`, { width: 1280, height: 900 });
  const page = b.ctx.pages()[0] || (await b.ctx.newPage());
  page.on('pageerror', (e) => console.log(`  [${name}] page error: ${e.message}`));
  if (block) {
    let seen = 0;
    await b.ctx.route('**/attnlab_bg.wasm', (route) =>
      seen++ ? route.abort('connectionrefused') : route.continue(),
    );
  }
  await page.goto(new URL(`index.html?backend=cpu&${query}`, base).href);
  await page.waitForFunction(
    () =>
      window.__page &&
      window.__page.ready &&
      window.__page.shipped &&
      window.__page.shipped.state === 'loaded',
    null,
    { timeout: TIMEOUT },
  );
  await page.setInputFiles('#file-dev', {
    name: 'oov_dev.tsv',
    mimeType: 'text/plain',
    buffer: Buffer.from(await devFile(page, twice), 'utf8'),
  });
  await page.waitForFunction(
    (n) =>
      document.getElementById('eval-file').value === 'dev' &&
      document.getElementById('eval-estimate').textContent.startsWith(`${n} questions`),
    twice ? 272 : 136,
    { timeout: TIMEOUT },
  );
  return { page, close: b.close };
}

// Evaluate the form's file; `stop`: Stop is clicked by the page itself at the first progress it
// shows on two engines, so the evaluation stops after the round then asked for (the timed calls
// take 20 questions, and a round at most 64 × 2 more, so of the doubled file at most its first 136).
// Resolves to the report (with what the page adds: engines, byHelpers, seconds).
async function evaluate(page, { max = '', stop = false } = {}) {
  await page.fill('#eval-max', max);
  await page.evaluate((halt) => {
    window.__page.evalReport = null;
    window.__page.evalError = null;
    if (!halt) return;
    const status = document.getElementById('eval-status');
    new MutationObserver((_, o) => {
      if (!/ on \d+ engines: [1-9]\d* of \d+ questions/.test(status.textContent)) return;
      o.disconnect();
      document.getElementById('eval-stop').click();
    }).observe(status, { childList: true, characterData: true, subtree: true });
  }, stop);
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
  const r = await page.evaluate(() => ({
    rep: window.__page.evalReport,
    error: window.__page.evalError,
  }));
  assert(!r.error, `evaluation error: ${r.error}`);
  return r.rep;
}

async function run(name, base, query, opts = {}) {
  const { page, close } = await open(name, base, query, { twice: !!opts.stop });
  try {
    await evaluate(page, { max: '8' });
    const rep = await evaluate(page, opts);
    await page
      .locator('#eval-card')
      .screenshot({ path: path.join(outDir, `eval-workers-${name}.png`) });
    console.log(
      `  ${name}: ${rep.rows.length} of ${rep.total} questions on ${rep.engines} engine(s) ` +
        `(${rep.byHelpers} by the helper) in ${rep.seconds.toFixed(2)} s; ${rep.line}`,
    );
    return rep;
  } finally {
    await close();
  }
}

// The report `b` equals `a` (over a's first rows when b was stopped): every row, the score, the
// London line and the skipped line.
function same(a, b, what) {
  const k = b.rows.length;
  for (let i = 0; i < k; i++) {
    const [x, y] = [a.rows[i], b.rows[i]];
    assert(
      JSON.stringify(x) === JSON.stringify(y),
      `${what}: row ${i + 1} is ${JSON.stringify(y)}, one engine gave ${JSON.stringify(x)}`,
    );
  }
  const right = a.rows.slice(0, k).filter((r) => r.correct).length;
  assert(
    b.score[0] === right && b.score[1] === k,
    `${what}: score ${b.score}, one engine's first ${k} rows have ${right} right`,
  );
  if (k === a.rows.length)
    assert(
      b.line === a.line && b.london_line === a.london_line,
      `${what}: "${b.line}" / "${b.london_line}" vs "${a.line}" / "${a.london_line}"`,
    );
  // A stopped evaluation's line counts the skipped questions among its rows; the characters named
  // (each first at line 2 or 6) are the same.
  const n = Object.keys(OOV).filter((i) => +i < k).length;
  const count = (x) =>
    x
      .replace(/^\d+ questions? (was|were) not asked/, 'N not asked')
      .replace(/; (it counts|they count) as wrong$/, '');
  assert(
    b.skipped.startsWith(`${n} question${n === 1 ? ' was' : 's were'} not asked`) &&
      count(b.skipped) === count(a.skipped),
    `${what}: skipped "${b.skipped}" vs "${a.skipped}" (${n} of its rows)`,
  );
  return `${k} rows identical, ${b.score[0]} of ${k} right, ${n} skipped, named as on one engine`;
}

const plain = await plainServer(process.argv[3]);
try {
  const A = await run('A-one', isolatedBase, 'workers=1');
  await check('A: one engine, the reference', () => {
    assert(
      A.engines === 1 && A.rows.length === 136 && A.total === 136,
      `${A.rows.length} of ${A.total} rows on ${A.engines} engines`,
    );
    assert(
      A.skipped.startsWith(`${Object.keys(OOV).length} questions were not asked`),
      `skipped: ${A.skipped}`,
    );
    return `${A.line}; ${A.skipped}`;
  });
  const B = await run('B-two', isolatedBase, 'workers=2');
  await check('B: two engines (isolated) give the one engine’s report', () => {
    assert(
      B.engines === 2 && B.byHelpers > 0 && B.rows.length === 136,
      `${B.rows.length} rows on ${B.engines} engines, ${B.byHelpers} by the helper`,
    );
    return same(A, B, 'B vs A');
  });
  const C = await run('C-not-isolated', plain.base, 'workers=2');
  await check('C: two engines (not isolated) give the one engine’s report', () => {
    assert(
      C.engines === 2 && C.byHelpers > 0 && C.rows.length === 136,
      `${C.rows.length} rows on ${C.engines} engines, ${C.byHelpers} by the helper`,
    );
    return same(A, C, 'C vs A');
  });
  const D = await run('D-stopped', isolatedBase, 'workers=2', { stop: true });
  await check('D: two engines stopped mid-way keep the first questions, in order', () => {
    assert(
      D.engines === 2 &&
        D.byHelpers > 0 &&
        D.rows.length >= 8 &&
        D.rows.length <= 136 &&
        D.total === 272,
      `${D.rows.length} rows of ${D.total} on ${D.engines} engines, ${D.byHelpers} by the helper`,
    );
    return same(A, D, 'D vs A');
  });
  await check(
    'E: a helper that does not start is named in the Device card; one engine evaluates',
    async () => {
      const { page, close } = await open('E-no-helper', isolatedBase, 'workers=2', { block: true });
      try {
        const E = await evaluate(page, { max: '10' });
        // The helper's start fails while the page's engine answers (it does not wait for helpers).
        await page
          .waitForFunction(
            () => /engines asked/.test(document.getElementById('device-workers').textContent),
            null,
            { timeout: TIMEOUT },
          )
          .catch(() => {});
        const line = await page.textContent('#device-workers');
        await page
          .locator('#device-card')
          .screenshot({ path: path.join(outDir, 'eval-workers-E-device.png') });
        assert(
          /^Workers: 2 engines asked, 1 running: a helper engine did not start: \S/.test(line),
          `Device card: ${line}`,
        );
        const train = await page.textContent('#gpu-line');
        assert(
          !/engines/.test(train),
          `the Train card's device line still counts the engine that did not start: ${train}`,
        );
        assert(
          E.engines === 1 && E.byHelpers === 0 && E.rows.length === 10,
          `${E.rows.length} rows on ${E.engines} engines`,
        );
        return `${same(A, E, 'E vs A')}; “${line}”`;
      } finally {
        await close();
      }
    },
  );
} finally {
  plain.stop();
}
process.exit(summary(t0));
