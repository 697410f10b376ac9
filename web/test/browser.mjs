// The browser the page tests drive: Debian's Chromium (or CHROMIUM=/path/to/chrome), headless, in a
// fresh profile folder that is removed again on close; or, where ATTNLAB_BROWSER_WS names a browser
// that web/test/run.mjs started (launchShared), a fresh context of that one browser.
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

// The device measurement a page on SwiftShader makes before its first run (web/page/measure.js:
// about 50 s there, 5 s on the CPU backend) is kept in its browser; a fresh profile takes it
// again. Where ATTNLAB_MEASURED names a folder (scripts/test.sh sets one per run), the first
// WebGPU test that measures leaves its measurement there and later WebGPU tests start with it, as a
// returning visitor's browser would. The page checks that it is this device's. Tests of the
// measurement itself (student.mjs, measured: false) measure afresh, and leave theirs there when
// none is yet; the CPU backend's tests and any run without the folder measure afresh.
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

// Chromium's settings, for a test's own browser and for the shared one.
// --enable-unsafe-webgpu: without it headless Chromium blocklists the CPU (SwiftShader) adapter.
function launchOptions(webgpu) {
  return {
    executablePath: process.env.CHROMIUM || BROWSERS.find((b) => fs.existsSync(b)) || BROWSERS[0],
    headless: true,
    args: [
      '--no-sandbox',
      ...(webgpu ? ['--enable-unsafe-webgpu'] : []),
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  };
}

// One browser for many tests (web/test/run.mjs): returns its address, for ATTNLAB_BROWSER_WS, and
// close(). Each openBrowser of a test given the address opens a fresh context in it (its own
// storage, as a fresh profile has) and closes that context, not the browser.
export async function launchShared() {
  const server = await chromium.launchServer(launchOptions(true));
  return { wsEndpoint: server.wsEndpoint(), close: () => server.close() };
}

// `name` tags the temporary profile folder; returns the context and a close() that also removes it.
// webgpu: false starts Chromium without --enable-unsafe-webgpu, so the page finds no adapter.
// keep: an existing profile folder to open again (its stored models and runs), kept on close.
// Either of webgpu: false and keep launches a browser of the test's own even where one is shared.
// A shared browser's context has no profile folder (`profile` is '') and keeps no download's file
// (Download.path() throws): run.mjs gives a test that reads one a browser of its own.
// measured: false makes the page measure the device itself even where a measurement is kept.
// serviceWorkers: 'block' starts a browser in which the page cannot register a service worker.
export async function openBrowser(
  name,
  viewport,
  { webgpu = true, keep = '', measured = true, serviceWorkers = 'allow' } = {},
) {
  // The shared browser has WebGPU and no kept profile: a test without either launches its own.
  const shared = process.env.ATTNLAB_BROWSER_WS && webgpu && !keep;
  const profile = shared ? '' : keep || fs.mkdtempSync(path.join(os.tmpdir(), `attnlab-${name}-`));
  let browser = null;
  if (shared) {
    try {
      browser = await chromium.connect(process.env.ATTNLAB_BROWSER_WS, { timeout: 30000 });
    } catch (e) {
      throw new Error(
        `the shared browser at ATTNLAB_BROWSER_WS=${process.env.ATTNLAB_BROWSER_WS} did not answer ` +
          `(${e.message.split('\n')[0]}); run the test through web/test/run.mjs or unset the variable`,
      );
    }
  }
  const ctx = shared
    ? await browser.newContext({ viewport, serviceWorkers })
    : await chromium.launchPersistentContext(profile, {
        ...launchOptions(webgpu),
        viewport,
        serviceWorkers,
      });
  const file = measuredFile(webgpu);
  if (measured && file && fs.existsSync(file)) {
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
    if (browser) await browser.close();
    else if (!keep) fs.rmSync(profile, { recursive: true, force: true });
  };
  return { ctx, close, profile };
}
