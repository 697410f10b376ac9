// The README's screenshot of a first visit without WebGPU: a fresh profile, the shipped model loaded
// by itself, Ask pressed once (the box holds a name of the built-in dev set), the Ask card at the top
// of a 1280×800 viewport. Serve without --data so the page uses the built-in corpus.
// Usage: node web/test/first-visit-shot.mjs [base URL, default http://127.0.0.1:8080/]
//   [out, default docs/page-first-visit.png]
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openBrowser } from './browser.mjs';

const base = process.argv[2] || 'http://127.0.0.1:8080/';
const out =
  process.argv[3] ||
  path.join(
    path.dirname(fileURLToPath(import.meta.url)),
    '..',
    '..',
    'docs',
    'page-first-visit.png',
  );
const { ctx, close } = await openBrowser(
  'first-visit',
  { width: 1280, height: 800 },
  { webgpu: false },
);
try {
  const page = ctx.pages()[0] || (await ctx.newPage());
  await page.goto(new URL('index.html', base).href);
  await page.waitForFunction(() => window.__page && window.__page.ready, null, { timeout: 120000 });
  const shipped = await page.evaluate(() => window.__page.shipped);
  if (shipped.state !== 'loaded')
    throw new Error(`the shipped model is ${shipped.state}: ${shipped.note}`);
  await page.click('#btn-ask');
  await page.waitForFunction(() => window.__page.ask || window.__page.askError, null, {
    timeout: 120000,
  });
  const a = await page.evaluate(() => window.__page.ask && window.__page.ask.vanilla);
  if (!a) throw new Error(`Ask failed: ${await page.evaluate(() => window.__page.askError)}`);
  await page.evaluate(() =>
    window.scrollTo(
      0,
      document.getElementById('ask-card').getBoundingClientRect().top + window.scrollY - 12,
    ),
  );
  await page.waitForTimeout(300);
  await page.screenshot({ path: out });
  console.log(`${out}: “${a.question}” → “${a.prediction}” (${shipped.label})`);
} finally {
  await close();
}
