// The browser the page tests drive: Debian's Chromium (or CHROMIUM=/path/to/chrome), headless, in a
// fresh profile folder that is removed again on close.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const BROWSERS = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/snap/bin/chromium', '/usr/bin/google-chrome'];

// The page's address with the backend the test runs on: ?backend=webgpu by default (headless
// Chromium's only adapter is SwiftShader, a software fallback that the page's "auto" would pass
// over for the CPU backend); ATTNLAB_BACKEND=cpu or auto runs the same test on another backend.
// ATTNLAB_QUERY adds to the address (e.g. workers=1: the CPU backend on one engine).
export function pageUrl(base, query = '') {
  const backend = process.env.ATTNLAB_BACKEND || 'webgpu';
  const q = [query, process.env.ATTNLAB_QUERY].filter(Boolean).join('&');
  return new URL(`index.html?backend=${backend}${q ? `&${q}` : ''}`, base).href;
}

// `name` tags the temporary profile folder; returns the context and a close() that also removes it.
// webgpu: false starts Chromium without --enable-unsafe-webgpu, so the page finds no adapter.
// keep: an existing profile folder to open again (its stored models and runs), kept on close.
export async function openBrowser(name, viewport, { webgpu = true, keep = '' } = {}) {
  const profile = keep || fs.mkdtempSync(path.join(os.tmpdir(), `attnlab-${name}-`));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || BROWSERS.find((b) => fs.existsSync(b)) || BROWSERS[0],
    headless: true,
    viewport,
    // --enable-unsafe-webgpu: without it headless Chromium blocklists the CPU (SwiftShader) adapter.
    args: ['--no-sandbox', ...(webgpu ? ['--enable-unsafe-webgpu'] : []), '--disable-background-networking',
           '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const close = async () => {
    await ctx.close();
    if (!keep) fs.rmSync(profile, { recursive: true, force: true });
  };
  return { ctx, close, profile };
}
