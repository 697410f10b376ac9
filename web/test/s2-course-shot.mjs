// Not in the suite: S2a–S2c with the course model on the course files (served with
// `scripts/serve.py --data DIR`, DIR holding the course's wiki.txt, birth_places_train.tsv and
// birth_dev.tsv): loads the course model from the Models card, checks that S2a asks the course's dev
// people with it, and takes S2a's picture at 1280 and 390 px (web/test/out/s2-course-*.png; they show
// the course's text, so they stay out of the repository). Runs on ATTNLAB_BACKEND (webgpu or cpu).
// Usage: node web/test/s2-course-shot.mjs [base URL of a server started with --data]
import path from 'node:path';
import { openBrowser, pageUrl } from './browser.mjs';
import { cardShot, checks, outDir as testOut } from './harness.mjs';

const base = process.argv[2] || 'http://127.0.0.1:8080/';
const TIMEOUT = 900000;
const { check, failures } = checks();
const { ctx, close } = await openBrowser('s2-course', { width: 1280, height: 800 });
try {
  const page = ctx.pages()[0] || (await ctx.newPage());
  page.on('pageerror', (e) => failures.push(`page error: ${e.message}`));
  await page.goto(pageUrl(base));
  await page.waitForFunction(
    () =>
      window.__page &&
      window.__page.ready &&
      window.__page.course &&
      window.__page.course.facts &&
      window.__page.dataSource === 'served',
    null,
    { timeout: TIMEOUT },
  );
  await page.click('#load-course');
  await page.waitForFunction(
    () => ['loaded', 'failed'].includes(window.__page.course.state),
    null,
    { timeout: TIMEOUT },
  );
  const t0 = Date.now();
  await page.goto(`${pageUrl(base)}#s2a`);
  await page.waitForFunction(
    () => {
      const r = window.__demos && window.__demos.results.s2a;
      return r && (r.c || r.error);
    },
    null,
    { timeout: TIMEOUT, polling: 1000 },
  );
  const r = await page.evaluate(() => window.__demos.results.s2a);
  check(
    r.c && !r.models.data.builtin && r.c.total > 0,
    `S2a with the course model: ${r.c ? `${r.c.with_correct} of ${r.c.total} right` : r.error} ` +
      `(${((Date.now() - t0) / 1000).toFixed(0)} s)`,
  );
  await page.waitForFunction(
    () => document.getElementById('s2a').getAttribute('aria-busy') === 'false',
    null,
    { timeout: TIMEOUT },
  );
  const out = testOut();
  await cardShot(page, '#s2a', path.join(out, 's2-course-s2a.png'));
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(800);
  await cardShot(page, '#s2a', path.join(out, 's2-course-s2a-390.png'));
} finally {
  await close();
}
console.log(failures.length ? `${failures.length} FAILED` : 'S2a with the course model: done');
process.exit(failures.length ? 1 : 0);
