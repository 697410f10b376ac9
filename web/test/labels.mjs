// The presets' labels over fresh loads (not a test; nothing is asserted): N fresh browser
// profiles (no kept measurement) each load the page, wait for the labels and print the middle and
// full presets' labels with the measured steps they come from (time_step's mean and best ms
// for the middle model's 8 rows and the assignment's 2), so the labels' spread from load to load
// can be read beside the measurement's own. On ATTNLAB_BACKEND (webgpu: SwiftShader here; cpu).
// Usage: [ATTNLAB_BACKEND=cpu] [Q=workers=2] [N=6] node web/test/labels.mjs BASE_URL
import { openBrowser, pageUrl } from './browser.mjs';

const base = process.argv[2] || 'http://127.0.0.1:8080/';
const n = Number(process.env.N || 6);
for (let i = 0; i < n; i++) {
  const { ctx, close } = await openBrowser(
    'labels',
    { width: 1280, height: 900 },
    { webgpu: process.env.ATTNLAB_BACKEND !== 'cpu', measured: false },
  );
  const page = ctx.pages()[0] || (await ctx.newPage());
  await page.goto(pageUrl(base, process.env.Q || ''));
  await page.waitForFunction(() => window.__page && window.__page.ready, null, { timeout: 600000 });
  // The page measures the device when the Train card comes into view.
  await page.locator('#train-card').scrollIntoViewIfNeeded();
  await page.waitForFunction(() => window.__page.presetLabels && window.__page.sizing, null, {
    timeout: 600000,
  });
  const z = await page.evaluate(() => ({
    labels: window.__page.presetLabels,
    sizing: window.__page.sizing,
  }));
  const ms = (m) => `${m.ms_per_step.toFixed(0)}/${(m.best_ms ?? m.ms_per_step).toFixed(0)}`;
  const r = {
    middle: z.labels.middle,
    full: z.labels.full,
    mid: ms(z.sizing.mid),
    assignment: ms(z.sizing.full),
  };
  console.log(
    `load ${i + 1}: ${r.middle} | ${r.full} | middle 8 rows ${r.mid} ms, assignment 2 rows ` +
      `${r.assignment} ms (mean/best)`,
  );
  await close();
}
