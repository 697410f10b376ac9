// The middle preset's pace in the page (BENCHMARKS.md, "The middle preset's step"): choose it on the
// built-in corpus (its birth notes), Pretrain, count the steps over SECONDS (default 90), print
// the seconds a step and the pretraining's minutes at that pace, and Stop. Q adds to the address
// (micro=0: whole steps; workers=2: two engines); FORM sets fields of the form after the preset is
// chosen (FORM=pre_batch=16,dropout=0). Not part of the test suite: it is a measurement.
// Usage: [ATTNLAB_BACKEND=cpu] [Q=workers=2] [FORM=field=value,...] node web/test/bench-middle.mjs BASE_URL [SECONDS]
import { openBrowser, pageUrl } from './browser.mjs';
const base = process.argv[2];
const secs = Number(process.argv[3] || 90);
const { ctx, close } = await openBrowser(
  'bench-middle',
  { width: 1280, height: 900 },
  { webgpu: process.env.ATTNLAB_BACKEND !== 'cpu' },
);
const page = ctx.pages()[0] || (await ctx.newPage());
page.on('pageerror', (e) => console.log(`page error: ${e}`));
await page.goto(pageUrl(base, process.env.Q || ''));
await page.waitForFunction(() => window.__page && window.__page.ready, null, { timeout: 300000 });
await page.locator('#train-card').scrollIntoViewIfNeeded();
await page.waitForFunction(() => window.__page.presetLabels && window.__page.fit, null, {
  timeout: 300000,
});
await page.click('#use-embedded');
await page.selectOption('#preset', 'middle');
await page.waitForTimeout(1500);
for (const kv of (process.env.FORM || '').split(',').filter(Boolean)) {
  const [k, v] = kv.split('=');
  await page.fill(`#h-${k}`, v);
  await page.dispatchEvent(`#h-${k}`, 'change');
}
console.log('label:', await page.evaluate(() => window.__page.presetLabels.middle));
console.log('note:', await page.textContent('#preset-note'));
await page.screenshot({ path: 'web/test/out/bench-middle-train.png', fullPage: false });
await page.locator('#data-card').screenshot({ path: 'web/test/out/bench-middle-data.png' });
await page.locator('#train-card').screenshot({ path: 'web/test/out/bench-middle-traincard.png' });
await page.click('#btn-pretrain');
await page.waitForFunction(
  () => window.__page.status === 'running' && window.__page.steps >= 2,
  null,
  { timeout: 300000 },
);
const t0 = Date.now();
const s0 = await page.evaluate(() => window.__page.steps);
await page.waitForTimeout(secs * 1000);
const info = await page.evaluate(() => ({
  started: window.__page.started,
  workers: window.__page.workers,
  backend: window.__page.backend,
  isolated: self.crossOriginIsolated,
}));
console.log(JSON.stringify(info));
const s1 = await page.evaluate(() => ({
  steps: window.__page.steps,
  total: window.__page.total,
  ms: window.__page.msPerStep,
  status: document.getElementById('status') && document.getElementById('status').textContent,
}));
const dt = (Date.now() - t0) / 1000;
console.log(
  `steps ${s0} -> ${s1.steps} of ${s1.total} in ${dt.toFixed(1)} s: ` +
    `${(dt / (s1.steps - s0)).toFixed(3)} s/step -> ` +
    `${((s1.total * dt) / (s1.steps - s0) / 60).toFixed(1)} min for the pretraining; msPerStep ` +
    `${s1.ms}`,
);
await page.locator('#train-card').screenshot({ path: 'web/test/out/bench-middle-running.png' });
await page.click('#btn-stop');
await close();
