// The page as a static site (scripts/site.sh), served by `python3 -m http.server` from a parent
// folder, so the site lives under a sub-path (/sub/) and no server sends COOP/COEP:
// A. First visit: the service worker makes the page cross-origin isolated (one reload), two CPU
//    engines share memory, Ask answers, and the page says it is offline-ready. What the browser
//    downloaded before Ask answered is counted from the server's log (the first visit's budget).
// B. Offline: the server is stopped; a reload still answers Ask and draws a demo.
// C. A corrupt cache entry (the wasm build cut short in the cache) is found by its hash and fetched
//    again, never run: Ask answers and the cached copy is whole again.
// D. A new build (one file changed, sealed again by scripts/site_manifest.py) replaces the cache on
//    the next visit: the new file is served and the old cache is gone.
//   node web/test/site.mjs            (builds the site itself: SITE_SKIP_SETUP=1 scripts/site.sh)
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openBrowser } from './browser.mjs';
import { assert, steps } from './harness.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const TIMEOUT = 180000;
const BUDGET_SITE = 40e6;
const BUDGET_FIRST = 10e6;
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'attnlab-site-'));
const site = path.join(work, 'sub');
execFileSync(path.join(root, 'scripts', 'site.sh'), [site], {
  env: { ...process.env, SITE_SKIP_SETUP: '1' },
  stdio: ['ignore', 'inherit', 'inherit'],
});

const sizeOf = (rel) => {
  try {
    return fs.statSync(path.join(site, rel)).size;
  } catch {
    return 0;
  }
};
const siteBytes = (dir = site) =>
  fs
    .readdirSync(dir, { withFileTypes: true })
    .reduce(
      (n, e) =>
        n +
        (e.isDirectory()
          ? siteBytes(path.join(dir, e.name))
          : fs.statSync(path.join(dir, e.name)).size),
      0,
    );

// The static server and the paths it answered with 200, in order.
let server = null;
const served = [];
function startServer(port) {
  server = spawn(
    'python3',
    ['-m', 'http.server', String(port), '--bind', '127.0.0.1', '--directory', work],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  server.stderr.setEncoding('utf8');
  server.stderr.on('data', (chunk) => {
    for (const m of chunk.matchAll(/"GET ([^ ?]+)[^"]*" 200/g))
      served.push(decodeURIComponent(m[1]));
  });
}
async function waitForServer(url) {
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not answer`);
}
function stopServer() {
  if (server) {
    server.kill('SIGTERM');
    server = null;
  }
}
const port = Number(
  execFileSync('python3', [
    '-c',
    'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])',
  ])
    .toString()
    .trim(),
);
const base = `http://127.0.0.1:${port}/sub/`;
const url = `${base}index.html?backend=cpu&workers=2`;

const { ctx, close } = await openBrowser('site', { width: 1280, height: 800 }, { webgpu: false });
const page = ctx.pages()[0] || (await ctx.newPage());
const siteState = () => page.evaluate(() => window.__site || null);
async function ask() {
  await page.waitForFunction(() => !document.getElementById('btn-ask').disabled, null, {
    timeout: TIMEOUT,
  });
  await page.evaluate(() => {
    if (window.__page) {
      window.__page.ask = null;
      window.__page.askError = null;
    }
  });
  await page.click('#btn-ask');
  await page.waitForFunction(
    () => window.__page && (window.__page.ask || window.__page.askError),
    null,
    { timeout: TIMEOUT },
  );
  return page.evaluate(() =>
    window.__page.ask
      ? { prediction: window.__page.ask.vanilla.prediction }
      : { error: window.__page.askError },
  );
}
const cacheNames = () =>
  page.evaluate(async () => (await caches.keys()).filter((k) => k.startsWith('attnlab-')));

const { step, main } = steps({
  label: 'site',
  dir: work,
  page: () => page,
  what: 'STATIC SITE STEPS',
});
const STEPS = [
  [
    'the site fits its budget and names every file it needs',
    async () => {
      const total = siteBytes();
      const sw = fs.readFileSync(path.join(site, 'sw.js'), 'utf8');
      assert(
        total <= BUDGET_SITE,
        `the site is ${(total / 1e6).toFixed(1)} MB (budget ${BUDGET_SITE / 1e6} MB)`,
      );
      assert(
        !/https?:\/\//.test(
          fs
            .readFileSync(path.join(site, 'index.html'), 'utf8')
            .replace(/http:\/\/www\.w3\.org[^"]*/g, ''),
        ),
        'index.html names another origin',
      );
      assert(
        /"web\/pkg-relaxed\/attnlab_bg.wasm": "[0-9a-f]{64}"/.test(sw),
        "sw.js lacks the wasm build's hash",
      );
      console.log(
        `   the site: ${(total / 1e6).toFixed(1)} MB in ` +
          `${JSON.parse(fs.readFileSync(path.join(site, 'web', 'site.json'))).files} files`,
      );
    },
  ],
  [
    'first visit: isolated by its service worker, two engines sharing memory, Ask answers, offline-ready',
    async () => {
      startServer(port);
      await waitForServer(base);
      await page.goto(url);
      await page.waitForFunction(
        () => self.crossOriginIsolated && window.__site && window.__site.state !== 'registering',
        null,
        { timeout: TIMEOUT },
      );
      const a = await ask();
      const before = served.slice();
      assert(!a.error, `Ask failed: ${a.error}`);
      const bytes = before.reduce(
        (n, p) => n + sizeOf(p.replace(/^\/sub\//, '').replace(/^$/, 'index.html') || 'index.html'),
        0,
      );
      console.log(
        `   first visit before Ask answered: ${before.length} files, ` +
          `${(bytes / 1e6).toFixed(2)} MB (budget ${BUDGET_FIRST / 1e6} MB); answer ` +
          `${a.prediction}`,
      );
      assert(
        bytes <= BUDGET_FIRST,
        `the first visit downloaded ${(bytes / 1e6).toFixed(2)} MB before Ask answered`,
      );
      await page.waitForFunction(
        () => window.__site && window.__site.state === 'offline-ready',
        null,
        { timeout: TIMEOUT },
      );
      const note = await page.textContent('#site-status');
      assert(
        /Offline-ready/.test(note) && /cross-origin isolated through its service worker/.test(note),
        `the Device card says “${note}”`,
      );
      await page.waitForFunction(
        () =>
          /2 engines|engines: 2|2 of 2/.test(
            document.getElementById('device-workers').textContent +
              document.getElementById('device-line').textContent,
          ),
        null,
        { timeout: TIMEOUT },
      );
      const workers = await page.textContent('#device-workers');
      assert(
        /shared memory/.test(workers),
        `the Device card's engines line does not say shared memory: “${workers}”`,
      );
    },
  ],
  [
    'offline: the server stopped, a reload answers Ask and draws a demo',
    async () => {
      stopServer();
      await new Promise((r) => setTimeout(r, 300));
      await page.reload();
      const a = await ask();
      assert(!a.error, `Ask failed offline: ${a.error}`);
      await page.evaluate(() => document.getElementById('demos').scrollIntoView());
      await page.waitForFunction(
        () => window.__demos && window.__demos.ready && (window.__demos.runs.e1 || 0) >= 1,
        null,
        { timeout: TIMEOUT },
      );
      const err = await page.evaluate(() => window.__demos.error || '');
      assert(!err, `the demos failed offline: ${err}`);
    },
  ],
  [
    'a truncated wasm file in the cache is fetched again, never run',
    async () => {
      startServer(port);
      await waitForServer(base);
      const cut = await page.evaluate(async (u) => {
        const name = (await caches.keys()).find((k) => k.startsWith('attnlab-'));
        const cache = await caches.open(name);
        const whole = await (await cache.match(u)).arrayBuffer();
        await cache.put(
          u,
          new Response(whole.slice(0, 1000), { headers: { 'Content-Type': 'application/wasm' } }),
        );
        return whole.byteLength;
      }, `${base}web/pkg-relaxed/attnlab_bg.wasm`);
      await page.reload();
      const a = await ask();
      assert(!a.error, `Ask failed after the cache was cut: ${a.error}`);
      const now = await page.evaluate(async (u) => {
        const name = (await caches.keys()).find((k) => k.startsWith('attnlab-'));
        return (await (await (await caches.open(name)).match(u)).arrayBuffer()).byteLength;
      }, `${base}web/pkg-relaxed/attnlab_bg.wasm`);
      assert(
        now === cut,
        `the cached wasm is ${now} bytes after the reload, not the build's ${cut}`,
      );
    },
  ],
  [
    'a new build replaces the cache once on the next visit',
    async () => {
      const old = (await cacheNames())[0];
      fs.appendFileSync(path.join(site, 'web', 'style.css'), '\n/* the second build */\n');
      execFileSync('python3', [
        path.join(root, 'scripts', 'site_manifest.py'),
        site,
        path.join(root, 'web', 'sw.js'),
        'web/pkg/attnlab_bg.wasm',
        'web/pkg-relaxed/attnlab_bg.wasm',
        'web/models/course-vanilla.safetensors',
        'web/models/builtin-synthesizer.safetensors',
        'web/models/builtin-nopretrain.safetensors',
        'web/models/vit-digits.safetensors',
      ]);
      const version = JSON.parse(fs.readFileSync(path.join(site, 'web', 'site.json'))).version;
      await page.reload();
      // The browser looks for a new sw.js on the navigation; the new worker fills its cache, then
      // deletes the old one.
      const t0 = Date.now();
      let names = await cacheNames();
      while (
        !(names.length === 1 && names[0] === `attnlab-${version}`) &&
        Date.now() - t0 < TIMEOUT
      ) {
        await new Promise((r) => setTimeout(r, 250));
        names = await cacheNames();
      }
      const workers = await page.evaluate(async () => {
        const r = await navigator.serviceWorker.getRegistration();
        const w = (x) => (x ? x.state : 'none');
        return r
          ? `installing ${w(r.installing)}, waiting ${w(r.waiting)}, active ${w(r.active)}`
          : 'no registration';
      });
      assert(
        names.includes(`attnlab-${version}`) && !names.includes(old),
        `caches ${(Date.now() - t0) / 1000} s after the visit: ${names.join(', ')} (workers: ${workers})`,
      );
      await page.reload();
      await page.waitForFunction(
        () => window.__site && window.__site.state === 'offline-ready',
        null,
        { timeout: TIMEOUT },
      );
      const css = await page.evaluate(async () => (await fetch('web/style.css')).text());
      const dbg = await page.evaluate(async () => ({
        ctl: navigator.serviceWorker.controller && navigator.serviceWorker.controller.scriptURL,
        keys: await caches.keys(),
        site: window.__site,
      }));
      assert(
        css.includes('the second build'),
        `the changed file is not the one served (${JSON.stringify(dbg)}; ends ${JSON.stringify(css.slice(-60))})`,
      );
      names = await cacheNames();
      assert(
        names.length === 1 && names[0] === `attnlab-${version}`,
        `caches after the new build: ${names.join(', ')}`,
      );
      assert(
        (await siteState()).version === version,
        `the page reports version ${(await siteState()).version}, not ${version}`,
      );
    },
  ],
  [
    'without service workers: a working page, not isolated, with a plain note',
    async () => {
      const other = await openBrowser(
        'site-nosw',
        { width: 1280, height: 800 },
        { webgpu: false, serviceWorkers: 'block' },
      );
      try {
        const p = other.ctx.pages()[0] || (await other.ctx.newPage());
        await p.goto(url);
        await p.waitForFunction(
          () => window.__site && ['failed', 'unsupported'].includes(window.__site.state),
          null,
          { timeout: TIMEOUT },
        );
        const note = await p.textContent('#site-status');
        assert(
          /the page works/.test(note) && /copy data/.test(note),
          `the Device card says “${note}”`,
        );
        assert(
          !(await p.evaluate(() => self.crossOriginIsolated)),
          'the page is isolated without its worker',
        );
        await p.waitForFunction(() => !document.getElementById('btn-ask').disabled, null, {
          timeout: TIMEOUT,
        });
        await p.click('#btn-ask');
        await p.waitForFunction(
          () => window.__page && (window.__page.ask || window.__page.askError),
          null,
          { timeout: TIMEOUT },
        );
        const err = await p.evaluate(() => window.__page.askError || '');
        assert(!err, `Ask failed without a service worker: ${err}`);
      } finally {
        await other.close();
      }
    },
  ],
];
await main(async () => {
  try {
    for (const [name, f] of STEPS) await step(name, f);
  } finally {
    stopServer();
    await close();
  }
  fs.rmSync(work, { recursive: true, force: true });
  return 0;
});
