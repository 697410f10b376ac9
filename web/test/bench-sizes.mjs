// The page's training step on the CPU backend (run it with ATTNLAB_BACKEND=cpu: the browser starts
// without WebGPU) for several model sizes, through the engine's time_step (16 full rows of 127, 3 steps after a first
// one; each size twice): what a smaller middle preset would cost in the page (results/middle-preset/). Not part of the
// test suite: it is a measurement. SIZES='[[layers,heads,width],...]' picks the sizes.
// Usage: ATTNLAB_BACKEND=cpu node web/test/bench-sizes.mjs BASE_URL
import { openBrowser, pageUrl } from './browser.mjs';
const base = process.argv[2];
const { ctx, close } = await openBrowser('sizes', { width: 1280, height: 900 }, { webgpu: false });
const page = ctx.pages()[0] || (await ctx.newPage());
page.on('pageerror', (e) => console.log(`page error: ${e}`));
await page.goto(pageUrl(base, process.env.Q || ''));
await page.waitForFunction(() => window.__page && window.__page.ready, null, { timeout: 300000 });
const sizes = JSON.parse(process.env.SIZES || '[[4,8,128],[4,4,64],[2,8,128],[2,4,64],[3,4,96]]');
for (let rep = 0; rep < 2; rep++)
  for (const [l, h, e] of sizes) {
    const r = await page.evaluate(
      async ([l, h, e]) => {
        const { P, job } = await import('./web/page/core.js');
        return job('measure', () => P.engine.time_step('vanilla', l, h, e, 100, 16, 3));
      },
      [l, h, e],
    );
    console.log(
      `L${l} H${h} W${e}: params ${r.params}, best ${r.best_ms.toFixed(0)} ms, ` +
        `mean ${r.ms_per_step.toFixed(0)} ms for 16 x 127`,
    );
  }
await close();
