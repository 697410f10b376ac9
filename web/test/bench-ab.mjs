// Benchmark (asserts nothing about speed): the Benchmark card's run on two served builds of the
// page, A and B, in turn in one browser, ROUNDS times, so both see the same load. Prints each
// run's matmul GFLOP/s and training step, then the median over the rounds, and B's ratio to A.
// Usage: node web/test/bench-ab.mjs URL_A URL_B [ROUNDS] [ROWS] [REPEATS] [SIZE]
//   e.g. the SIMD128 build against the relaxed-SIMD one, both on the CPU backend:
//   node web/test/bench-ab.mjs 'http://127.0.0.1:8722/index.html?backend=cpu' \
//     'http://127.0.0.1:8723/index.html?backend=cpu' 4 8 3 quick
import { openBrowser } from './browser.mjs';

const [urlA, urlB] = [process.argv[2], process.argv[3]];
if (!urlA || !urlB)
  throw new Error('usage: node web/test/bench-ab.mjs URL_A URL_B [ROUNDS] [ROWS] [REPEATS] [SIZE]');
const ROUNDS = +(process.argv[4] || 3);
const ROWS = process.argv[5] || '8';
const REPEATS = process.argv[6] || '3';
const SIZE = process.argv[7] || 'quick';
const median = (v) => {
  const s = [...v].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};
// On a loaded machine the best of the rounds is the steadier comparison; both are printed.
const best = (v, low) => (low ? Math.min(...v) : Math.max(...v));

async function open(ctx, url) {
  const page = await ctx.newPage();
  await page.goto(url);
  await page.waitForFunction(
    () => window.__bench && window.__bench.ready && window.__page && window.__page.ready,
    null,
    { timeout: 120000 },
  );
  await page.fill('#bench-rows', ROWS);
  await page.fill('#bench-repeats', REPEATS);
  await page.selectOption('#bench-size', SIZE);
  return page;
}

async function once(page) {
  await page.evaluate(() => {
    window.__bench.done = false;
  });
  await page.click('#btn-bench');
  await page.waitForFunction(() => window.__bench.done, null, { timeout: 600000, polling: 250 });
  const res = await page.evaluate(() => window.__bench);
  if (res.error || !res.result) throw new Error(res.error || 'no result');
  return res.result;
}

const { ctx, close } = await openBrowser('bench-ab', { width: 1000, height: 800 });
try {
  const pages = { A: await open(ctx, urlA), B: await open(ctx, urlB) };
  const runs = { A: [], B: [] };
  for (let r = 1; r <= ROUNDS; r++) {
    for (const k of ['A', 'B']) {
      const res = await once(pages[k]);
      runs[k].push(res);
      const mm = res.matmul.map((m) => m.gflops.toFixed(2)).join(' ');
      const st = res.steps.map((s) => `${s.variant} ${s.ms_per_step.toFixed(1)} ms`).join(', ');
      console.log(`round ${r} ${k} (${res.adapter}): matmul GFLOP/s ${mm}; step ${st}`);
    }
  }
  for (const [what, f] of [
    ['median', median],
    ['best', best],
  ]) {
    console.log(
      `${what} of ${ROUNDS} rounds (B ÷ A in brackets: above 1 is B faster for GFLOP/s, below 1 for ms):`,
    );
    runs.A[0].matmul.forEach((m, i) => {
      const [a, b] = ['A', 'B'].map((k) =>
        f(
          runs[k].map((x) => x.matmul[i].gflops),
          false,
        ),
      );
      console.log(
        `  ${m.name.padEnd(30)} A ${a.toFixed(2).padStart(7)}  B ${b.toFixed(2).padStart(7)} ` +
          `GFLOP/s  (${(b / a).toFixed(2)})`,
      );
    });
    runs.A[0].steps.forEach((s, i) => {
      const [a, b] = ['A', 'B'].map((k) =>
        f(
          runs[k].map((x) => x.steps[i].ms_per_step),
          true,
        ),
      );
      console.log(
        `  step ${s.variant.padEnd(12)} ${s.rows} x ${s.t}  A ${a.toFixed(1).padStart(8)}  B ` +
          `${b.toFixed(1).padStart(8)} ms  (${(b / a).toFixed(2)})`,
      );
    });
  }
} finally {
  await close();
}
