// The browser the page tests drive: Debian's Chromium (or CHROMIUM=/path/to/chrome), headless, in a
// fresh profile folder that is removed again on close.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const BROWSERS = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/snap/bin/chromium', '/usr/bin/google-chrome'];

// `name` tags the temporary profile folder; returns the context and a close() that also removes it.
export async function openBrowser(name, viewport) {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), `attnlab-${name}-`));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || BROWSERS.find((b) => fs.existsSync(b)) || BROWSERS[0],
    headless: true,
    viewport,
    // --enable-unsafe-webgpu: without it headless Chromium blocklists the CPU (SwiftShader) adapter.
    args: ['--no-sandbox', '--enable-unsafe-webgpu', '--disable-background-networking',
           '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const close = async () => {
    await ctx.close();
    fs.rmSync(profile, { recursive: true, force: true });
  };
  return { ctx, close };
}
