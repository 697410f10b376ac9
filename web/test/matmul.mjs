// Browser test of the Device card's matmul line (web/page/matmul.js, src/wasm/bench.rs):
//   - on the software adapter (SwiftShader) the adapter type's rule stands, untimed, and says so;
//   - "Time the kernels" times every kernel the engine names (tiled, register-blocked, vec4-4x4,
//     vec4-8x4) through the engine's queue, keeps the fastest (the smallest of the times shown) and
//     stores it for this adapter in the browser;
//   - after a reload the kept kernel is applied without timing again, and the line says when it
//     was timed; the kernel checks pass with it (the products it picks are still right);
//   - on the CPU backend (ATTNLAB_BACKEND=cpu) the line is not shown.
// Usage: node web/test/matmul.mjs [base URL]
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openBrowser, pageUrl } from './browser.mjs';
import { cardShot, checks, outDir as testOut } from './harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const base = process.argv[2] || 'http://127.0.0.1:8080/';
const url = pageUrl(base);
const cpu = process.env.ATTNLAB_BACKEND === 'cpu';
const outDir = testOut();
const TIMEOUT = 240000;
const { check, failures } = checks();

const { ctx, close } = await openBrowser('matmul', { width: 1280, height: 900 });
try {
  const page = ctx.pages()[0] || (await ctx.newPage());
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(url);
  await page.waitForFunction(() => window.__device && window.__device.ready, null, {
    timeout: TIMEOUT,
  });
  const kind = await page.evaluate(() => window.__device.kind);
  if (cpu || kind === 'cpu') {
    check(
      await page.locator('#matmul').isHidden(),
      `the CPU backend shows no matmul line (device ${kind})`,
    );
  } else {
    await page.waitForFunction(() => window.__matmul.kernel, null, { timeout: TIMEOUT });
    let m = await page.evaluate(() => window.__matmul);
    const line = () => page.locator('#matmul-line').textContent();
    check(
      m.how === 'default' && m.ms.length === 0 && /not timed here/.test(await line()),
      `software adapter: the rule stands, untimed: "${await line()}"`,
    );
    await page.click('#matmul-time');
    await page.waitForFunction(
      () => window.__matmul.how === 'timed' && !window.__matmul.busy,
      null,
      { timeout: TIMEOUT },
    );
    m = await page.evaluate(() => window.__matmul);
    const fastest = m.kernels[m.ms.indexOf(Math.min(...m.ms))];
    check(
      m.kernels.length === 4 &&
        m.ms.length === 4 &&
        m.ms.every((x) => x > 0) &&
        m.kernel === fastest,
      `timed: ${m.kernels.map((k, i) => `${k} ${m.ms[i].toFixed(1)}`).join(', ')} ms, kept ` +
        `${m.kernel}: "${await line()}"`,
    );
    const kept = await page.evaluate(() =>
      Object.keys(localStorage)
        .filter((k) => k.startsWith('attnlab-matmul:'))
        .map((k) => JSON.parse(localStorage.getItem(k))),
    );
    check(
      kept.length === 1 && kept[0].kernel === m.kernel,
      `stored in the browser for this adapter: ${JSON.stringify(kept)}`,
    );
    await cardShot(page, '#device-card', path.join(outDir, 'matmul-device-card.png'));
    await page.reload();
    await page.waitForFunction(() => window.__matmul && window.__matmul.kernel, null, {
      timeout: TIMEOUT,
    });
    const again = await page.evaluate(() => window.__matmul);
    check(
      again.how === 'kept' &&
        again.kernel === m.kernel &&
        /kept in this browser/.test(await line()),
      `after a reload the kept kernel is applied, not timed again: "${await line()}"`,
    );
    await page.click('#checks-card summary').catch(() => {});
    await page.click('#run');
    await page.waitForFunction(() => window.__checks.done || window.__checks.error, null, {
      timeout: TIMEOUT,
    });
    const c = await page.evaluate(() => window.__checks);
    check(
      !c.error && c.failed === 0 && c.passed > 0,
      `the kernel checks pass with the kept kernel (${c.passed} passed, ${c.failed} ` +
        `failed${c.error ? `, ${c.error}` : ''})`,
    );
  }
  check(errors.length === 0, `no page errors${errors.length ? `: ${errors.join('; ')}` : ''}`);
} finally {
  await close();
}
console.log(
  failures.length ? `RESULT: ${failures.length} FAILED` : 'RESULT: ALL MATMUL CHECKS PASSED',
);
process.exit(failures.length ? 1 : 0);
