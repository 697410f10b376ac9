// Browser test: open the page in headless Chromium with ?checks=1, wait for the kernel checks,
// print every row, save a screenshot, and exit 1 if any check failed, none ran, or the page errored.
// Usage: node web/test/checks.mjs [base URL, default http://127.0.0.1:8080/]
// CHROMIUM=/path/to/chrome picks the browser (web/test/browser.mjs).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openBrowser, pageUrl } from './browser.mjs';

const base = process.argv[2] || 'http://127.0.0.1:8080/';
const url = pageUrl(base, 'checks=1');
const outDir = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  'out',
  ...(process.env.ATTNLAB_BACKEND && process.env.ATTNLAB_BACKEND !== 'webgpu'
    ? [process.env.ATTNLAB_BACKEND]
    : []),
);
const shot = path.join(outDir, 'checks.png');
const TIMEOUT_MS = 15 * 60 * 1000; // SwiftShader runs the kernels on the CPU at ~1 GFLOP/s

async function run() {
  fs.mkdirSync(outDir, { recursive: true });
  const { ctx, close } = await openBrowser('checks', { width: 1000, height: 800 });
  try {
    const page = ctx.pages()[0] || (await ctx.newPage());
    page.on('console', (m) => console.log(`[page ${m.type()}] ${m.text()}`));
    page.on('pageerror', (e) => console.log(`[page error] ${e.message}`));
    console.log(`opening ${url}`);
    const t0 = Date.now();
    await page.goto(url);
    // The page publishes window.__checks at once; if it never does, its script did not run at all.
    await page
      .waitForFunction(() => window.__checks, null, { timeout: 60000 })
      .catch(() => {
        throw new Error('the page never set window.__checks (did web/app.js load?)');
      });
    await page.waitForFunction(() => window.__checks && window.__checks.done === true, null, {
      timeout: TIMEOUT_MS,
      polling: 500,
    });
    const res = await page.evaluate(() => window.__checks);
    const adapter = await page.evaluate(() => {
      const d = window.__device || {};
      const limits = [...document.querySelectorAll('#gpu-info dt')].map(
        (dt) => `${dt.textContent}: ${dt.nextElementSibling.textContent}`,
      );
      return [`${d.describe || '?'} (${d.reason || '?'})`, ...limits].join(' | ');
    });
    await page.screenshot({ path: shot, fullPage: true });
    console.log(`adapter: ${adapter}`);
    // On the CPU backend the wasm build in use is the one asked for: ?simd=128 the SIMD128 one,
    // otherwise relaxed SIMD (Chromium offers it), so each run checks the kernels it means to.
    if (process.env.ATTNLAB_BACKEND === 'cpu') {
      const want = /simd=128/.test(process.env.ATTNLAB_QUERY || '')
        ? 'wasm SIMD128'
        : 'wasm relaxed SIMD';
      if (!adapter.includes(want)) return fail(`the CPU backend runs “${adapter}”, not ${want}`);
    }
    for (const r of res.rows) {
      const verdict = r.passed ? 'PASS' : 'FAIL';
      console.log(
        `${verdict}  ${r.op.padEnd(14)} ${r.case.padEnd(40)} err ${r.max_err.toExponential(2)}  ` +
          `tol ${r.tol.toExponential(0)}`,
      );
    }
    console.log(
      `${res.passed} of ${res.rows.length} passed in ${((Date.now() - t0) / 1000).toFixed(1)} s; screenshot: ${shot}`,
    );
    if (res.error) return fail(`page error: ${res.error}`);
    if (res.rows.length === 0) return fail('no checks ran');
    if (res.failed > 0) return fail(`${res.failed} check(s) failed`);
    // The fused attention trains the GPT, so its kernels must be among the checks.
    if (!res.rows.some((r) => r.op === 'attention'))
      return fail('the attention checks did not run');
    // Where the WebGPU adapter offers subgroups (SwiftShader does), the row kernels' subgroup
    // builds must have run and passed beside the workgroup-tree builds.
    const subgroups = await page.evaluate(
      async () =>
        window.__device &&
        window.__device.kind !== 'cpu' &&
        !!navigator.gpu &&
        !!(await navigator.gpu.requestAdapter())?.features.has('subgroups'),
    );
    const families = ['softmax', 'layernorm', 'cross_entropy'];
    const ran = (mark) =>
      families.filter((f) => res.rows.some((r) => r.op === f && r.case.endsWith(mark)));
    if (subgroups) {
      if (ran(' [subgroups]').length !== 3 || ran(' [tree]').length !== 3) {
        return fail(
          `the adapter offers subgroups, but the row kernels' subgroup checks ran for ` +
            `${ran(' [subgroups]')} and the tree checks for ${ran(' [tree]')}`,
        );
      }
      console.log(
        `subgroups: the adapter offers them; ` +
          `${res.rows.filter((r) => r.case.endsWith(' [subgroups]')).length} subgroup ` +
          `row-kernel checks passed`,
      );
    } else {
      console.log('subgroups: not offered here (or the CPU backend); the row kernels ran once');
    }
    console.log('RESULT: ALL CHECKS PASSED');
    return 0;
  } finally {
    await close();
  }
}

function fail(msg) {
  console.error(`RESULT: FAILED: ${msg}`);
  return 1;
}

let code = 1;
try {
  code = await run();
} catch (e) {
  console.error(`RESULT: FAILED: ${e.message || e}`);
}
// Exit explicitly: a pending timer (the wait above) would otherwise keep node alive.
process.exit(code);
