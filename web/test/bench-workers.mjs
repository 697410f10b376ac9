// Benchmark (not a test: it asserts nothing about speed): the page's training step on the CPU
// backend with 1 and N engines, at the quick preset's model (tiny) and the assignment's, for each
// batch given, pretraining on the served corpus (scripts/serve.py --data DIR). For each
// configuration a fresh browser profile runs STEPS steps; the median time per step of the steps
// after the first two (warm-up) is printed. Compare with the CLI on the same corpus, batch and
// seed (BENCHMARKS.md has the commands).
// Usage: node web/test/bench-workers.mjs URL [STEPS] [WORKERS] [BATCHES] [SIZES]
//   e.g. node web/test/bench-workers.mjs http://127.0.0.1:8841/ 12 1,2 8,32 tiny,assignment
// ATTNLAB_QUERY adds to the page's address (simd=128: the SIMD128 build instead of relaxed SIMD).
import { openBrowser } from './browser.mjs';

const base = process.argv[2] || 'http://127.0.0.1:8080/';
const STEPS = +(process.argv[3] || 12);
const WORKERS = (process.argv[4] || '1,2').split(',').map(Number);
const BATCHES = (process.argv[5] || '8,32').split(',').map(Number);
const SIZES = (process.argv[6] || 'tiny,assignment').split(',');
const MODEL = {
  tiny: { n_layer: 2, n_head: 4, n_embd: 64 },
  assignment: { n_layer: 4, n_head: 8, n_embd: 256 },
};

const median = (v) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : NaN;
};

async function once(size, batch, workers) {
  const { ctx, close } = await openBrowser('bench-workers', { width: 1280, height: 900 });
  try {
    const page = ctx.pages()[0] || (await ctx.newPage());
    const q = process.env.ATTNLAB_QUERY ? `&${process.env.ATTNLAB_QUERY}` : '';
    await page.goto(new URL(`index.html?backend=cpu&workers=${workers}${q}`, base).href);
    await page.waitForFunction(
      () => window.__page && window.__page.ready && window.__page.status === 'idle',
      null,
      { timeout: 120000 },
    );
    await page.selectOption('#preset', 'quick');
    for (const [k, v] of Object.entries(MODEL[size])) await page.fill(`#h-${k}`, String(v));
    await page.fill('#h-pre_batch', String(batch));
    await page.fill('#h-max_steps', String(STEPS));
    await page.click('#btn-pretrain');
    await page.waitForFunction(() => window.__page.finished >= 1 || window.__page.error, null, {
      timeout: 590000,
    });
    const s = await page.evaluate(() => ({
      error: window.__page.error,
      ms: window.__page.stepMs.slice(),
      started: window.__page.started,
      parts: window.__page.parts,
    }));
    if (s.error) throw new Error(s.error);
    return {
      ms: median(s.ms.slice(2)),
      all: s.ms,
      micro: s.started.micro_rows,
      params: s.started.params,
      parts: s.parts,
    };
  } finally {
    await close();
  }
}

console.log(
  `page CPU backend, pretraining ${STEPS} steps per run, median ms/step after 2 warm-up steps`,
);
for (const size of SIZES) {
  for (const batch of BATCHES) {
    const row = [];
    for (const w of WORKERS) {
      const r = await once(size, batch, w);
      row.push(`${w} engine${w > 1 ? 's' : ''}: ${r.ms.toFixed(1)} ms`);
      console.log(
        `  ${size} ${batch}x127, ${w} engine(s): ${r.ms.toFixed(1)} ms/step (steps ` +
          `${r.all.map((x) => x.toFixed(0)).join(' ')}; ${r.params} parameters, micro_rows ` +
          `${r.micro}, ${r.parts} row calls)`,
      );
    }
    console.log(`${size} ${batch}x127: ${row.join(', ')}`);
  }
}
process.exit(0);
