// The browser the page tests drive: Debian's Chromium (or CHROMIUM=/path/to/chrome), headless, in a
// fresh profile folder that is removed again on close.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const BROWSERS = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/snap/bin/chromium',
  '/usr/bin/google-chrome',
];

// The page's address with the backend the test runs on: ?backend=webgpu by default (headless
// Chromium's only adapter is SwiftShader, a software fallback that the page's "auto" would pass
// over for the CPU backend); ATTNLAB_BACKEND=cpu or auto runs the same test on another backend.
// ATTNLAB_QUERY adds to the address (e.g. workers=1: the CPU backend on one engine).
export function pageUrl(base, query = '') {
  const backend = process.env.ATTNLAB_BACKEND || 'webgpu';
  const q = [query, process.env.ATTNLAB_QUERY].filter(Boolean).join('&');
  return new URL(`index.html?backend=${backend}${q ? `&${q}` : ''}`, base).href;
}

// The device measurement a page on SwiftShader makes before its first run (web/page/sizing.js:
// about 50 s there, 5 s on the CPU backend) is kept in its browser; a fresh profile takes it
// again. Where ATTNLAB_MEASURED names a folder (scripts/test.sh sets one per run), the first
// WebGPU test that measures leaves its measurement there and later WebGPU tests start with it, as a
// returning visitor's browser would. The page checks that it is this device's. Tests of the
// measurement itself (student.mjs), the CPU backend's and any run without the folder measure afresh.
const SIZING_KEY = 'attnlab-sizing';
function measuredFile(webgpu) {
  const dir = process.env.ATTNLAB_MEASURED;
  const backend = process.env.ATTNLAB_BACKEND || 'webgpu';
  return dir && webgpu && backend === 'webgpu' ? path.join(dir, 'sizing-webgpu.json') : '';
}

async function keepMeasurement(ctx, file) {
  if (!file || fs.existsSync(file)) return;
  try {
    for (const page of ctx.pages()) {
      const value = await page.evaluate((k) => localStorage.getItem(k), SIZING_KEY);
      if (!value || !/"device":"gpu:/.test(value)) continue;
      fs.writeFileSync(`${file}.tmp`, value);
      fs.renameSync(`${file}.tmp`, file);
      return;
    }
  } catch {
    /* a closed or crashed page keeps nothing */
  }
}

// `name` tags the temporary profile folder; returns the context and a close() that also removes it.
// webgpu: false starts Chromium without --enable-unsafe-webgpu, so the page finds no adapter.
// keep: an existing profile folder to open again (its stored models and runs), kept on close.
// measured: false makes the page measure the device itself even where a measurement is kept.
// serviceWorkers: 'block' starts a browser in which the page cannot register a service worker.
export async function openBrowser(
  name,
  viewport,
  { webgpu = true, keep = '', measured = true, serviceWorkers = 'allow' } = {},
) {
  const profile = keep || fs.mkdtempSync(path.join(os.tmpdir(), `attnlab-${name}-`));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || BROWSERS.find((b) => fs.existsSync(b)) || BROWSERS[0],
    headless: true,
    viewport,
    serviceWorkers,
    // --enable-unsafe-webgpu: without it headless Chromium blocklists the CPU (SwiftShader) adapter.
    args: [
      '--no-sandbox',
      ...(webgpu ? ['--enable-unsafe-webgpu'] : []),
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
  const file = measured ? measuredFile(webgpu) : '';
  if (file && fs.existsSync(file)) {
    // Before the page's own scripts, on every load: a page that stored its own keeps it.
    const value = fs.readFileSync(file, 'utf8');
    await ctx.addInitScript(
      ([k, v]) => {
        try {
          if (!localStorage.getItem(k)) localStorage.setItem(k, v);
        } catch {
          /* a page without storage */
        }
      },
      [SIZING_KEY, value],
    );
  }
  const close = async () => {
    await keepMeasurement(ctx, file);
    await ctx.close();
    if (!keep) fs.rmSync(profile, { recursive: true, force: true });
  };
  return { ctx, close, profile };
}
