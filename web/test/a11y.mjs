// Accessibility: axe-core (web/node_modules/axe-core, run inside the page) on the whole page at
// 1280 px and at 390 px, after the shipped model has answered a question and every demo has drawn,
// and with the model table, the evaluation report and the demos' CPU columns shown. Fails on any
// critical or serious violation (moderate and minor ones are printed). The backend is
// ATTNLAB_BACKEND's (webgpu by default, see browser.mjs).
// Usage: node web/test/a11y.mjs [base URL, default http://127.0.0.1:8080/]
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { openBrowser, pageUrl } from './browser.mjs';

const base = process.argv[2] || 'http://127.0.0.1:8080/';
const require = createRequire(import.meta.url);
const axeSource = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

let failed = 0;
const check = (ok, what) => {
  console.log(`${ok ? 'PASS' : 'FAIL'}  ${what}`);
  if (!ok) failed += 1;
};

// The violations of one axe run, as lines "impact rule: help (n nodes: selectors)".
async function audit(page) {
  await page.evaluate(axeSource);
  const res = await page.evaluate(async () => {
    // Colour contrast of text drawn over canvases and gradients cannot be computed; axe reports
    // those as "incomplete", not as violations.
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 6), count: v.nodes.length }));
  });
  return res;
}

async function session(viewport) {
  const tag = `${viewport.width} px`;
  const { ctx, close } = await openBrowser(`a11y-${viewport.width}`, viewport);
  const page = ctx.pages()[0] || (await ctx.newPage());
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  try {
    await page.goto(pageUrl(base));
    await page.waitForFunction(() => window.__page && window.__page.ready && window.__demos && window.__demos.ready, null, { timeout: 240000 });
    // The shipped model answers an example question (the attention map and its head thumbnails show).
    await page.click('#ask-examples button[data-ask]');
    await page.waitForFunction(() => window.__page.ask || window.__page.askError, null, { timeout: 120000 });
    // Every demo's CPU column on (more tables), then a short evaluation (the report and its table).
    await page.$$eval('.demo-cpu input', (xs) => xs.forEach((x) => { if (!x.checked) x.click(); }));
    await page.fill('#eval-max', '4');
    await page.click('#btn-eval');
    await page.waitForFunction(() => window.__page.evalReport || window.__page.evalError, null, { timeout: 240000 });
    await page.waitForTimeout(500);
    const found = await audit(page);
    const bad = found.filter((v) => v.impact === 'critical' || v.impact === 'serious');
    for (const v of found) console.log(`      ${v.impact} ${v.id}: ${v.help} (${v.count}: ${v.nodes.join(', ')})`);
    check(bad.length === 0, `${tag}: no critical or serious axe violation (${bad.map((v) => `${v.id} ×${v.count}`).join(', ') || 'none'}; ${found.length - bad.length} moderate or minor)`);
    check(errors.length === 0, `${tag}: no page errors (${errors.join('; ') || 'none'})`);
  } finally {
    await close();
  }
}

const t0 = Date.now();
await session({ width: 1280, height: 800 });
await session({ width: 390, height: 844 });
console.log(failed ? `RESULT: ${failed} ACCESSIBILITY CHECK(S) FAILED` : `RESULT: ALL ACCESSIBILITY CHECKS PASSED in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
process.exit(failed ? 1 : 0);
