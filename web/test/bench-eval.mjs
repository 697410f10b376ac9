// Benchmark (not a test: it asserts nothing about speed): the page's evaluation of the shipped
// model on the built-in dev set (136 questions) on the CPU backend with 1 and N engines. For each
// count of engines, in turn, REPEATS times, a fresh browser profile evaluates the whole set twice:
// during the first the helpers start (their wasm module and device) and join once they hold a copy
// of the model, during the second they only take the copy (when they joined and how many questions
// they answered are printed). The machine's load average is printed beside each row; compare rows
// taken at the same load.
// Usage: node web/test/bench-eval.mjs URL [REPEATS] [WORKERS]
//   e.g. node web/test/bench-eval.mjs http://127.0.0.1:8741/ 3 1,2
import os from 'node:os';
import { openBrowser } from './browser.mjs';

const base = process.argv[2] || 'http://127.0.0.1:8080/';
const REPEATS = +(process.argv[3] || 3);
const WORKERS = (process.argv[4] || '1,2').split(',').map(Number);
const TIMEOUT = 300000;

async function evaluate(page) {
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
  const r = await page.evaluate(() => ({
    rep: window.__page.evalReport,
    error: window.__page.evalError,
  }));
  if (r.error) throw new Error(r.error);
  if (r.rep.rows.length !== 136 || r.rep.file !== 'built-in birth_dev.tsv')
    throw new Error(`${r.rep.rows.length} questions of ${r.rep.file}`);
  return r.rep;
}

async function once(workers) {
  const { ctx, close } = await openBrowser('bench-eval', { width: 1280, height: 900 });
  try {
    const page = ctx.pages()[0] || (await ctx.newPage());
    await page.goto(new URL(`index.html?backend=cpu&workers=${workers}`, base).href);
    await page.waitForFunction(
      () =>
        window.__page &&
        window.__page.ready &&
        window.__page.shipped &&
        window.__page.shipped.state === 'loaded',
      null,
      { timeout: TIMEOUT },
    );
    await page.click('#use-embedded');
    await page.selectOption('#eval-file', 'dev');
    await page.fill('#eval-max', '');
    const first = await evaluate(page);
    const second = await evaluate(page);
    return { first, second };
  } finally {
    await close();
  }
}

const s = (x) => `${x.toFixed(2)} s`;
console.log(
  `page CPU backend, the shipped model on the built-in dev set (136 questions), ${os.cpus().length} cores`,
);
for (let r = 0; r < REPEATS; r++) {
  for (const w of WORKERS) {
    const load0 = os.loadavg()[0].toFixed(1);
    const { first, second } = await once(w);
    const load1 = os.loadavg()[0].toFixed(1);
    const joined = (x) =>
      x.joined === null
        ? 'no helper joined'
        : `the helper joined at ${s(x.joined)} and answered ${x.byHelpers}`;
    console.log(
      `  run ${r + 1}, ${w} engine(s): first ${s(first.seconds)} (${joined(first)}), second ` +
        `${s(second.seconds)} (${joined(second)}); ${second.line}; load ${load0}-${load1}`,
    );
  }
}
process.exit(0);
