// Screenshots for looking at the page (not a test; nothing is asserted): a first visit, Ask, a
// short run, Evaluate and the demos, at 1280×800 and at 390 px, with WebGPU (SwiftShader here) and
// without it (the CPU backend). Written to web/test/out/shots/; the README's come from here.
// Usage: node web/test/shots.mjs [base URL, default http://127.0.0.1:8080/] [webgpu|nogpu|both]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openBrowser } from './browser.mjs';

const base = process.argv[2] || 'http://127.0.0.1:8080/';
const which = process.argv[3] || 'both';
const out = path.join(path.dirname(fileURLToPath(import.meta.url)), 'out', 'shots');
fs.mkdirSync(out, { recursive: true });

async function session(mode, viewport) {
  const webgpu = mode === 'webgpu';
  const tag = `${mode}-${viewport.width}`;
  const { ctx, close } = await openBrowser(`shots-${tag}`, viewport, { webgpu });
  const page = ctx.pages()[0] || (await ctx.newPage());
  const shot = async (name, sel) => {
    const file = path.join(out, `${tag}-${name}.png`);
    if (sel) await page.locator(sel).screenshot({ path: file });
    else await page.screenshot({ path: file });
    console.log(file);
  };
  const top = async (sel) => {
    await page.evaluate(
      (s) =>
        window.scrollTo(
          0,
          document.querySelector(s).getBoundingClientRect().top + window.scrollY - 8,
        ),
      sel,
    );
    await page.waitForTimeout(300);
  };
  try {
    await page.goto(new URL(`index.html${webgpu ? '?backend=webgpu' : ''}`, base).href);
    await page.waitForFunction(
      () => window.__page && window.__page.ready && window.__demos && window.__demos.ready,
      null,
      { timeout: 240000 },
    );
    await page.click('#use-embedded');
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.waitForTimeout(300);
    await shot('first-visit');
    await page.click('#ask-examples button[data-ask]');
    await page.waitForFunction(() => window.__page.ask || window.__page.askError, null, {
      timeout: 120000,
    });
    await top('#ask-card');
    await shot('ask');
    // Evaluate: 8 dev questions of the built-in corpus with the shipped model.
    await page.fill('#eval-max', '8');
    await page.click('#btn-eval');
    await page.waitForFunction(() => window.__page.evalReport || window.__page.evalError, null, {
      timeout: 240000,
    });
    await shot('evaluate', '#eval-card');
    // A run: the quick preset as sized here, stopped after a few chunks.
    await top('#train-card');
    await page.waitForFunction(() => window.__page.quick, null, { timeout: 240000 });
    await page.selectOption('#preset', 'quick');
    await page.click('#btn-pretrain');
    await page.waitForFunction(
      () => window.__page.status === 'running' && window.__page.steps >= 6,
      null,
      { timeout: 240000 },
    );
    await shot('run', '#train-card');
    await page.click('#btn-stop');
    await page.waitForFunction(() => window.__page.status === 'idle', null, { timeout: 240000 });
    await top('#demos');
    await shot('demos');
    for (const id of ['e1', 'e7', 'e9']) await shot(`demo-${id}`, `#${id}`);
  } finally {
    await close();
  }
}

for (const mode of which === 'both' ? ['nogpu', 'webgpu'] : [which]) {
  for (const viewport of [
    { width: 1280, height: 800 },
    { width: 390, height: 844 },
  ])
    await session(mode, viewport);
}
