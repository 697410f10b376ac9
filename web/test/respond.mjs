// A measurement (not a pass/fail test): how the page answers while the engine works, on the CPU
// backend (Chromium without WebGPU). Prints
//   - a demo's response (E2's slider moved → its new numbers), idle and during a quick-preset run,
//   - the longest main-thread task (and a demo's response) during an evaluation of the built-in
//     dev set with the shipped model, and from pressing Pretrain (the quick preset) to Stop.
// Usage: node web/test/respond.mjs URL   (scripts/serve.py without --data, so the built-in corpus)
import { openBrowser } from './browser.mjs';

const base = process.argv[2] || 'http://127.0.0.1:8080/';
const RESPONSES = 8;
const { ctx, close } = await openBrowser(
  'respond',
  { width: 1280, height: 900 },
  { webgpu: false },
);
try {
  const page = await ctx.newPage();
  await page.addInitScript(() => {
    window.__lt = [];
    new PerformanceObserver((l) => {
      for (const e of l.getEntries()) window.__lt.push([e.startTime, e.duration]);
    }).observe({ type: 'longtask', buffered: true });
  });
  await page.goto(new URL('index.html?backend=cpu', base).href);
  await page.waitForFunction(
    () => window.__page && window.__page.ready && window.__demos && window.__demos.ready,
    null,
    { timeout: 300000 },
  );
  const now = () => page.evaluate(() => performance.now());
  const longest = (from, to) =>
    page.evaluate(
      ([a, b]) => Math.max(0, ...window.__lt.filter(([s]) => s >= a && s <= b).map(([, d]) => d)),
      [from, to],
    );
  // Move E2's slider and wait for the demo's new result, timed from here: the call waits for the
  // page's thread like an input event does, and the page polls the result by timers, so a blocked
  // page counts in full.
  const demo = async (k) => {
    const t0 = Date.now();
    await page.evaluate(async (k) => {
      const el = document.getElementById('e2-s');
      const before = window.__demos.runs.e2 || 0;
      el.value = String(5 + (k % 10));
      el.dispatchEvent(new Event('input'));
      while ((window.__demos.runs.e2 || 0) <= before) await new Promise((r) => setTimeout(r, 5));
    }, k);
    return Date.now() - t0;
  };
  const stats = (xs) =>
    `median ${xs
      .slice()
      .sort((a, b) => a - b)
      [xs.length >> 1].toFixed(0)} ms, max ${Math.max(...xs).toFixed(0)} ms (${xs.length} moves)`;

  const idle = [];
  for (let k = 0; k < RESPONSES; k++) idle.push(await demo(k));
  console.log(`demo response, idle: ${stats(idle)}`);

  await page.selectOption('#eval-file', 'dev');
  await page.fill('#eval-max', '');
  await page.evaluate(() => {
    window.__page.evalReport = null;
    window.__page.evalError = null;
  });
  const t3 = await now();
  // Evaluate is pressed (and "Evaluate all" on the estimate's box, if it asks) from inside the page,
  // and a demo is moved 1 s later: its answer is timed from when the move was due, so a page
  // blocked meanwhile counts in full.
  await page.evaluate(() => {
    window.__probe = null;
    const due = performance.now() + 1000;
    setTimeout(async () => {
      const before = window.__demos.runs.e2 || 0;
      const el = document.getElementById('e2-s');
      el.value = '12';
      el.dispatchEvent(new Event('input'));
      while ((window.__demos.runs.e2 || 0) <= before) await new Promise((r) => setTimeout(r, 5));
      window.__probe = performance.now() - due;
    }, 1000);
    const confirm = setInterval(() => {
      const all = document.querySelector('#eval-confirm button[data-eval]:not([data-eval="0"])');
      if (all && !document.getElementById('eval-confirm').hidden) all.click();
      if (window.__page.evalReport || window.__page.evalError) clearInterval(confirm);
    }, 20);
    document.getElementById('btn-eval').click();
  });
  await page.waitForFunction(() => window.__page.evalReport || window.__page.evalError, null, {
    timeout: 600000,
  });
  const t4 = await now();
  await page.waitForFunction(() => window.__probe !== null, null, { timeout: 600000 });
  const during = await page.evaluate(() => Math.round(window.__probe));
  const rep = await page.evaluate(
    () => window.__page.evalReport && { n: window.__page.evalReport.rows.length },
  );
  console.log(
    `evaluation of ${rep ? rep.n : '?'} questions in ${((t4 - t3) / 1000).toFixed(1)} s: ` +
      `longest main-thread task ${(await longest(t3, t4)).toFixed(0)} ms; a demo moved 1 s into ` +
      `it answered after ${during} ms`,
  );

  await page.fill('#h-max_steps', '100000');
  const t0 = await now();
  await page.click('#btn-pretrain');
  await page.waitForFunction(
    () => window.__page.status === 'running' && window.__page.steps >= 1,
    null,
    { timeout: 300000 },
  );
  const t1 = await now();
  const busy = [];
  for (let k = 0; k < RESPONSES; k++) {
    busy.push(await demo(k));
    await page.waitForTimeout(100 + Math.round(Math.random() * 700));
  }
  const steps = await page.evaluate(() => window.__page.steps);
  await page.click('#btn-stop');
  await page.waitForFunction(() => window.__page.status === 'idle', null, { timeout: 300000 });
  const t2 = await now();
  const ms = await page.evaluate(() => window.__page.msPerStep);
  console.log(
    `demo response while training: ${stats(busy)}; ${steps} steps at ${ms.toFixed(0)} ms a step`,
  );
  console.log(
    `longest main-thread task from Pretrain to Stop: ${(await longest(t0, t2)).toFixed(0)} ms ` +
      `(after the first step: ${(await longest(t1, t2)).toFixed(0)} ms)`,
  );
} finally {
  await close();
}
