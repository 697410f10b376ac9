// Browser test of a step in parts and of the CPU backend on several engines (web/page/steps.js,
// web/helpers.js, src/wasm/steps.rs), on the CPU backend, each run in a fresh browser profile:
//   A  whole steps on one engine (?workers=1&micro=0): the reference;
//   B  micro-batches of 3 rows on one engine (?workers=1&micro=3): the same losses and weights as A
//      within a tolerance, in 3 engine calls a step;
//   C  two engines (?workers=2) on the cross-origin isolated server (shared memory): the same as A
//      within the tolerance; the Device card says 2 engines and isolated, the Train card's device
//      line counts them (A's does not);
//   D  C again: bit-identical losses and weights (deterministic for a given N);
//   E  two engines on a server without COEP (not isolated: copied buffers): bit-identical to C,
//      and the Device card says it is not isolated;
//   F  two engines, paused, the page reloaded, the saved run resumed: bit-identical to C (exact
//      resume for a given N);
//   H  Pause in the middle of a step (the assignment's model at batch 8 on one engine, one row a
//      call): the run pauses without finishing that step (the step count stays, the step is
//      dropped), and Stop keeps the model; the time from the click to "paused" is printed, not
//      asserted.
// Usage: [ATTNLAB_FIXTURE=DIR] node web/test/workers.mjs ISOLATED_URL [NOT_ISOLATED_URL]
//   ISOLATED_URL: scripts/serve.py as usual; NOT_ISOLATED_URL: scripts/serve.py --no-isolation
//   with the same --data (without it the test starts one on a free port, with --data DIR/data
//   when ATTNLAB_FIXTURE is set: both servers must serve the same data). Screenshots of the
//   Device card go to web/test/out/cpu/.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openBrowser } from './browser.mjs';
import { plainServer } from './serve.mjs';
import { assert, steps, waitFor as waitState } from './harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const outDir = path.join(here, 'out', 'cpu');
fs.mkdirSync(outDir, { recursive: true });
const isolatedBase = process.argv[2] || 'http://127.0.0.1:8080/';
// Batch 24: the tiny model's step must be large enough to be shared (max_engines in
// src/wasm/steps.rs: 8 rows stay on one engine).
const BATCH = 24;
const H_BATCH = 8;
const STEPS = 6;
const TOL = 1e-3;
const TIMEOUT = 300000;
// Named steps (harness.mjs); a failed one is counted and the next runs.
const { step: check, summary } = steps({
  label: 'workers',
  dir: outDir,
  page: () => null,
  what: 'CHECKS',
  keepGoing: true,
});
const t0 = Date.now();

const S = (page) =>
  page.evaluate(() => {
    const s = window.__page;
    return (
      s && {
        ready: s.ready,
        status: s.status,
        steps: s.steps,
        finished: s.finished,
        error: s.error,
        losses: s.losses.slice(),
        workers: s.workers,
        parts: s.parts,
        engines: s.engines,
        resumedFrom: s.resumedFrom,
        msPerStep: s.msPerStep,
      }
    );
  });

// The page's state once `pred` holds of it; any error the page reports fails the wait.
const waitFor = (page, pred, what) =>
  waitState(
    () => S(page),
    (s) => !s.error && pred(s),
    what,
    { timeout: TIMEOUT, every: 100, fatal: (s) => s.error },
  );

// The finished model's weights, from the checkpoint the page keeps in IndexedDB (safetensors).
async function weights(page) {
  const bytes = await page.evaluate(async () => {
    const store = await import('./web/page/store.js');
    const rec = await store.get('model:vanilla');
    if (!rec) return null;
    // As base64: Playwright returns an array as one JSON value a byte (12 µs each here).
    const u = new Uint8Array(rec.bytes.buffer || rec.bytes);
    let bin = '';
    for (let i = 0; i < u.length; i += 32768)
      bin += String.fromCharCode(...u.subarray(i, i + 32768));
    return btoa(bin);
  });
  assert(bytes, 'no finished model in IndexedDB');
  const b = Buffer.from(bytes, 'base64');
  const n = Number(b.readBigUInt64LE(0));
  const header = JSON.parse(b.subarray(8, 8 + n).toString('utf8'));
  const out = {};
  for (const [name, t] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const [s, e] = t.data_offsets;
    const raw = b.subarray(8 + n + s, 8 + n + e);
    out[name] = new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.length));
  }
  return out;
}

// One run of the quick preset (pretraining, batch 24, 6 steps) at `query`; `pause`: pause after the
// first step, reload, resume the saved run. Returns {losses: Map(step → loss), weights, state, device}.
async function run(name, base, query, { pause = false } = {}) {
  const t0 = Date.now();
  const { ctx, close } = await openBrowser(`workers-${name}`, { width: 1280, height: 900 });
  try {
    const page = ctx.pages()[0] || (await ctx.newPage());
    page.on('pageerror', (e) => console.log(`  [${name}] page error: ${e.message}`));
    const url = new URL(`index.html?backend=cpu&${query}`, base).href;
    await page.goto(url);
    await waitFor(page, (s) => s.ready && s.status === 'idle', 'the page');
    await page.selectOption('#preset', 'quick');
    await page.fill('#h-pre_batch', String(BATCH));
    await page.fill('#h-max_steps', String(STEPS));
    await page.click('#btn-pretrain');
    if (pause) {
      await waitFor(page, (s) => s.status === 'running' && s.steps >= 1, 'the first step');
      await page.click('#btn-pause');
      const p = await waitFor(page, (s) => s.status === 'paused', 'the pause');
      await page.reload();
      await waitFor(page, (s) => s.ready, 'the reload');
      await page.click('#resume-saved');
      await waitFor(
        page,
        (s) => s.resumedFrom !== null && s.resumedFrom !== undefined,
        'the resume',
      );
      const r = await S(page);
      assert(r.resumedFrom === p.steps, `resumed at step ${r.resumedFrom}, paused at ${p.steps}`);
    }
    const s = await waitFor(
      page,
      (s) => s.finished >= 1 && s.status === 'idle',
      'the run to finish',
    );
    const device = await page.evaluate(() => ({
      line: document.getElementById('device-workers').textContent,
      train: document.getElementById('gpu-line').textContent,
      isolated: self.crossOriginIsolated,
      select: document.getElementById('workers').value,
    }));
    await page
      .locator('#device-card')
      .screenshot({ path: path.join(outDir, `workers-${name}-device.png`) });
    const w = await weights(page);
    console.log(
      `  ${name}: ${((Date.now() - t0) / 1000).toFixed(1)} s, losses ` +
        `${s.losses.map(([k, l]) => `${k}:${l.toFixed(5)}`).join(' ')}, parts ${s.parts}`,
    );
    return { losses: new Map(s.losses.map(([k, l]) => [k, l])), weights: w, state: s, device };
  } finally {
    await close();
  }
}

function compare(a, b, what, tol) {
  const common = [...a.losses.keys()].filter((k) => b.losses.has(k));
  assert(common.length >= 2, `${what}: only ${common.length} common loss readings`);
  let worst = 0;
  for (const k of common) {
    const d = Math.abs(a.losses.get(k) - b.losses.get(k)) / Math.abs(a.losses.get(k));
    worst = Math.max(worst, d);
    if (tol === 0)
      assert(
        a.losses.get(k) === b.losses.get(k),
        `${what}: step ${k} loss ${b.losses.get(k)} vs ${a.losses.get(k)}`,
      );
  }
  assert(worst <= tol, `${what}: losses differ by ${worst.toExponential(2)} (relative)`);
  // Relative to the model's largest weight, as tests/it/parts.rs measures: AdamW divides each
  // gradient by its own running size, so a weight whose gradient is rounding noise (near 0) moves
  // by about the learning rate either way, and a per-tensor measure of a tensor of such weights
  // would say nothing about the step.
  let scale = 1e-12;
  let diff = 0;
  let where = '';
  for (const [name, x] of Object.entries(a.weights)) {
    const y = b.weights[name];
    assert(y && y.length === x.length, `${what}: parameter ${name} missing or of another size`);
    for (let i = 0; i < x.length; i++) {
      scale = Math.max(scale, Math.abs(x[i]));
      const d = Math.abs(x[i] - y[i]);
      if (d > diff) {
        diff = d;
        where = `${name}[${i}]`;
      }
    }
  }
  if (tol === 0) assert(diff === 0, `${what}: ${where} differs by ${diff}`);
  const wWorst = diff / scale;
  assert(
    wWorst <= tol,
    `${what}: weights differ by ${wWorst.toExponential(2)} (relative to the largest; ${where})`,
  );
  return (
    `${common.length} losses within ${worst.toExponential(1)}, weights within ` +
    `${wWorst.toExponential(1)}${where ? ` (most at ${where})` : ''}`
  );
}

// H: pause in the middle of a step.
async function pauseMidStep() {
  const { ctx, close } = await openBrowser('workers-H', { width: 1280, height: 900 });
  try {
    const page = ctx.pages()[0] || (await ctx.newPage());
    await page.goto(new URL('index.html?backend=cpu&workers=1&micro=1', isolatedBase).href);
    await waitFor(page, (s) => s.ready && s.status === 'idle', 'the page');
    await page.selectOption('#preset', 'quick');
    for (const [k, v] of Object.entries({
      n_layer: 4,
      n_head: 8,
      n_embd: 512,
      pre_batch: H_BATCH,
      max_steps: 20,
    }))
      await page.fill(`#h-${k}`, String(v));
    await page.click('#btn-pretrain');
    // In the middle of a step after the first: one to four of its 8 row calls done. Width 512
    // makes a row call long beside the click's way to the engine (a step of width 256, 0.33 s,
    // was over by the time a click in its second half arrived: 0.28-0.37 s).
    const s = await waitFor(
      page,
      (s) => s.steps >= 1 && s.parts % H_BATCH >= 1 && s.parts % H_BATCH <= H_BATCH - 4,
      'the middle of a step',
    );
    const t0 = Date.now();
    await page.click('#btn-pause');
    const p = await waitFor(page, (s) => s.status === 'paused', 'the pause');
    const ms = Date.now() - t0;
    assert(
      p.steps === s.steps,
      `paused at step ${p.steps}; the click came during step ${s.steps + 1}`,
    );
    assert(p.parts % H_BATCH !== 0, `the step in flight was finished (${p.parts} row calls)`);
    await page.click('#btn-stop');
    const f = await waitFor(page, (s) => s.status === 'idle' && s.finished >= 1, 'the stop');
    assert(f.steps === s.steps, `stopped at step ${f.steps}`);
    await page
      .locator('#train-card')
      .screenshot({ path: path.join(outDir, 'workers-H-paused.png') })
      .catch(() => {});
    return (
      `clicked after ${s.parts % H_BATCH} of ${H_BATCH} row calls of step ${s.steps + 1}; ` +
      `paused at step ${p.steps} ${ms} ms after the click (a whole step took ` +
      `${Math.round(s.msPerStep)} ms)`
    );
  } finally {
    await close();
  }
}

const plain = await plainServer(process.argv[3]);
try {
  const A = await run('A-whole', isolatedBase, 'workers=1&micro=0');
  await check('A: whole steps on one engine', () => {
    assert(A.state.workers.n === 1 && A.state.engines === 1, `A ran on ${A.state.engines} engines`);
    assert(!A.state.parts, `A took ${A.state.parts} parts`);
    return `${A.losses.size} loss readings`;
  });
  const B = await run('B-micro', isolatedBase, 'workers=1&micro=3');
  await check('B: micro-batches of 3 rows equal whole steps', () => {
    // An epoch's last batch may be short (the served corpus: 24, 24, 12 rows), so at least 2 calls a step.
    assert(
      B.state.parts >= 2 * STEPS,
      `B took ${B.state.parts} engine calls for rows, expected ≥ ${2 * STEPS}`,
    );
    return compare(A, B, 'B vs A', TOL);
  });
  const C = await run('C-two', isolatedBase, 'workers=2');
  await check('C: two engines (isolated) equal one', () => {
    assert(
      C.state.workers.n === 2 && C.state.engines === 2,
      `C ran on ${C.state.engines} engines of ${C.state.workers.n}`,
    );
    assert(C.device.isolated === true, 'the page is not cross-origin isolated behind serve.py');
    assert(
      /2 engines/.test(C.device.line) &&
        /cross-origin isolated/.test(C.device.line) &&
        !/not cross-origin/.test(C.device.line),
      `Device card: ${C.device.line}`,
    );
    assert(C.device.select === '2', `the Workers selector shows ${C.device.select}`);
    // The Train card's device line counts the engines too (one engine: no count).
    assert(
      / in each of 2 engines · /.test(C.device.train) && !/engines/.test(A.device.train),
      `Train card: “${C.device.train}”, one engine: “${A.device.train}”`,
    );
    return compare(A, C, 'C vs A', TOL);
  });
  const D = await run('D-two-again', isolatedBase, 'workers=2');
  await check('D: two engines again, bit for bit', () => compare(C, D, 'D vs C', 0));
  const E = await run('E-not-isolated', plain.base, 'workers=2');
  await check('E: two engines without isolation, bit for bit', () => {
    assert(E.device.isolated === false, 'the page is cross-origin isolated without COEP');
    assert(/not cross-origin isolated/.test(E.device.line), `Device card: ${E.device.line}`);
    return compare(C, E, 'E vs C', 0);
  });
  await check('H: Pause in the middle of a step drops it', pauseMidStep);
  const F = await run('F-resumed', isolatedBase, 'workers=2', { pause: true });
  await check('F: two engines, paused, reloaded, resumed: bit for bit', () =>
    compare(C, F, 'F vs C', 0),
  );
} finally {
  plain.stop();
}
process.exit(summary(t0));
