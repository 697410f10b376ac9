// Where the page's training step spends its time: the middle preset (or ?preset=quick) on the
// built-in corpus, Pretrain, then V8's sampling profiler attached to the engine's Web Worker for
// SECONDS (default 30), and the functions with the most self time printed (wasm functions by their
// Rust names). Not part of the test suite: a measurement for making the CPU backend faster.
// Usage: [ATTNLAB_BACKEND=cpu] [PRESET=middle] [Q=workers=1] node web/test/profile-step.mjs BASE_URL [SECONDS]
import { openBrowser, pageUrl } from './browser.mjs';

const base = process.argv[2];
const secs = Number(process.argv[3] || 30);
const preset = process.env.PRESET || 'middle';
const { ctx, close } = await openBrowser(
  'profile-step',
  { width: 1280, height: 900 },
  { webgpu: process.env.ATTNLAB_BACKEND !== 'cpu' },
);
const page = ctx.pages()[0] || (await ctx.newPage());
page.on('pageerror', (e) => console.log(`page error: ${e}`));
await page.goto(pageUrl(base, process.env.Q || 'workers=1'));
await page.waitForFunction(() => window.__page && window.__page.ready, null, { timeout: 300000 });
await page.locator('#train-card').scrollIntoViewIfNeeded();
await page.waitForFunction(() => window.__page.presetLabels && window.__page.fit, null, {
  timeout: 300000,
});
await page.click('#use-embedded');
await page.selectOption('#preset', preset);
await page.waitForTimeout(1500);
await page.click('#btn-pretrain');
await page.waitForFunction(
  () => window.__page.status === 'running' && window.__page.steps >= 2,
  null,
  { timeout: 300000 },
);

// The workers are the page target's children: attach to each (non-flat sessions, so this CDP
// session does not disturb Playwright's own) and profile every one that is an engine.
const cdp = await ctx.newCDPSession(page);
const sessions = [];
let nextId = 1;
const pending = new Map();
cdp.on('Target.attachedToTarget', (e) => {
  if (e.targetInfo.type === 'worker') sessions.push({ id: e.sessionId, url: e.targetInfo.url });
});
cdp.on('Target.receivedMessageFromTarget', (e) => {
  const m = JSON.parse(e.message);
  if (m.id && pending.has(m.id)) {
    pending.get(m.id)(m);
    pending.delete(m.id);
  }
});
const send = (sessionId, method, params = {}) =>
  new Promise((resolve) => {
    const id = nextId++;
    pending.set(id, resolve);
    cdp.send('Target.sendMessageToTarget', {
      sessionId,
      message: JSON.stringify({ id, method, params }),
    });
  });
await cdp.send('Target.setAutoAttach', {
  autoAttach: true,
  waitForDebuggerOnStart: false,
  flatten: false,
});
await page.waitForTimeout(1000);
console.log('workers:', sessions.map((s) => s.url).join(', '));
const s0 = await page.evaluate(() => window.__page.steps);
for (const s of sessions) {
  await send(s.id, 'Profiler.enable');
  await send(s.id, 'Profiler.setSamplingInterval', { interval: 200 });
  await send(s.id, 'Profiler.start');
}
const t0 = Date.now();
await page.waitForTimeout(secs * 1000);
const s1 = await page.evaluate(() => window.__page.steps);
console.log(`${s1 - s0} steps in ${((Date.now() - t0) / 1000).toFixed(1)} s while profiling`);
for (const s of sessions) {
  const r = await send(s.id, 'Profiler.stop');
  const prof = r.result && r.result.profile;
  if (!prof) {
    console.log(`${s.url}: no profile (${JSON.stringify(r.error || r).slice(0, 200)})`);
    continue;
  }
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const dt = prof.timeDeltas;
  prof.samples.forEach((id, i) => {
    const n = byId.get(id);
    const name = n.callFrame.functionName || `(${n.callFrame.url.split('/').pop()})`;
    self.set(name, (self.get(name) || 0) + (dt[i + 1] || 0));
  });
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  if (total < 1e6) continue; // an idle worker
  console.log(`\n${s.url}: ${(total / 1e6).toFixed(1)} s sampled; self time by function:`);
  [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, Number(process.env.TOP || 40))
    .forEach(([name, us]) => {
      console.log(
        `${((100 * us) / total).toFixed(1).padStart(6)} %  ${(us / 1e6).toFixed(2).padStart(7)} ` +
          `s  ${name.slice(0, 150)}`,
      );
    });
}
await page.click('#btn-stop');
await close();
