// The quick preset timed as a student runs it (not a test; nothing is asserted): a fresh profile
// loads the page, waits for the preset's label, runs Pretrain and then Finetune with the preset's
// settings, and prints the label's times beside the wall-clock times of the two runs, and the
// losses. On ATTNLAB_BACKEND (webgpu: SwiftShader here; cpu: the CPU backend).
// Usage: [ATTNLAB_BACKEND=cpu] node web/test/quick-time.mjs [base URL, default http://127.0.0.1:8080/]
import { openBrowser, pageUrl } from './browser.mjs';

const base = process.argv[2] || 'http://127.0.0.1:8080/';
const backend = process.env.ATTNLAB_BACKEND || 'webgpu';
const TIMEOUT = 30 * 60 * 1000;

const { ctx, close } = await openBrowser(`quick-time-${backend}`, { width: 1280, height: 900 });
try {
  const page = ctx.pages()[0] || (await ctx.newPage());
  page.on('pageerror', (e) => console.log(`page error: ${e}`));
  const t0 = Date.now();
  await page.goto(pageUrl(base));
  await page.waitForFunction(() => window.__page && window.__page.ready, null, {
    timeout: TIMEOUT,
  });
  // The presets are measured once the Train card is in view, as a student scrolls to it.
  await page.locator('#train-card').scrollIntoViewIfNeeded();
  await page.waitForFunction(() => window.__page.presetLabels && window.__page.fit, null, {
    timeout: TIMEOUT,
  });
  const label = await page.evaluate(() => window.__page.presetLabels.quick);
  await page.selectOption('#preset', 'quick');
  const note = await page.textContent('#preset-note');
  console.log(
    `${backend}: label ready ${((Date.now() - t0) / 1000).toFixed(1)} s after loading: ${label}`,
  );
  console.log(`note: ${note}`);
  // The measurement the label comes from, and the quick preset's estimated step.
  const m = await page.evaluate(async () => {
    const { S } = await import('./web/page/core.js');
    const { quickFor } = await import('./web/page/sizing.js');
    const q = quickFor(S.sizing);
    const f = (x) =>
      `${x.rows} rows ${(x.best_ms ?? x.ms_per_step).toFixed(0)}/${x.ms_per_step.toFixed(0)} ms`;
    return (
      `tiny ${f(S.sizing.small)}, ${f(S.sizing.large)} (best/mean); quick: batch ` +
      `${q.pre_batch}, estimated ${q.msPerStep.toFixed(0)} ms a pretraining step, ` +
      `${((1000 * q.ftS) / Math.max(1, q.ftSteps)).toFixed(0)} ms a finetuning step`
    );
  });
  console.log(`measured: ${m}`);
  let prevChunks = 0;
  const run = async (button, kind) => {
    const before = await page.evaluate(() => window.__page.finished || 0);
    const t = Date.now();
    await page.click(button);
    await page.waitForFunction(
      (n) => (window.__page.finished || 0) > n || window.__page.error,
      before,
      { timeout: TIMEOUT, polling: 500 },
    );
    const s = await page.evaluate(() => ({
      steps: window.__page.steps,
      error: window.__page.error,
      losses: (window.__page.losses || []).map((l) => l[1]),
      stepMs: window.__page.stepMs.slice(),
      saves: window.__page.saves,
      saveMs: window.__page.saveMs,
      chunks: window.__page.chunks,
    }));
    const secs = (Date.now() - t) / 1000;
    const l = s.losses;
    const top = Math.max(...l);
    const lossText = l.length
      ? `${l[0].toFixed(3)} → ${l[l.length - 1].toFixed(3)}, highest ${top.toFixed(3)} at step ${l.indexOf(top) + 1}`
      : '—';
    console.log(
      `${kind}: ${secs.toFixed(1)} s for ${s.steps} steps ` +
        `(${((1000 * secs) / Math.max(1, s.steps)).toFixed(0)} ms a ` +
        `step)${s.error ? `, error: ${s.error}` : ''}; loss ` +
        lossText,
    );
    const seq = s.stepMs.slice(-(s.chunks - prevChunks));
    const med = (a) => {
      const b = a.slice().sort((x, y) => x - y);
      return b.length ? b[b.length >> 1].toFixed(0) : '—';
    };
    const third = Math.floor(seq.length / 3);
    console.log(
      `  the engine's chunks (ms a step), median: all ${med(seq)}, first third ` +
        `${med(seq.slice(0, third))}, last third ${med(seq.slice(-third))} (${seq.length} ` +
        `chunks); saves so far ${s.saves}, the last ${s.saveMs} ms`,
    );
    prevChunks = s.chunks;
    return secs;
  };
  const pre = await run('#btn-pretrain', 'pretrain');
  const ft = await run('#btn-finetune', 'finetune');
  console.log(`total ${(pre + ft).toFixed(1)} s of training against the label above`);
} finally {
  await close();
}
