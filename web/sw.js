// The static site's service worker (scripts/site.sh copies it to the site's root as sw.js, with
// SITE filled in: the build's version and every file's SHA-256). It does two things for a site
// served by any static host:
// - Cross-origin isolation without server headers: every same-origin response it answers carries
//   COOP and COEP, so the page (after one reload on the first visit, web/site.js) may share memory
//   between its CPU engines, as it does behind scripts/serve.py, which sends the headers itself.
// - Offline use: the site's files are kept in a cache named after the build's version. A new
//   deployment installs a new worker that fills a new cache and then deletes every older one, so
//   files of two builds never mix. Every cached file is checked against its hash before it is
//   answered; a missing, truncated or stale one is fetched again, never run. Optional files (the
//   course model, the shipped synthesizer) are cached the first time the page asks for them.
/* global SITE */
const SITE = /* SITE */ { version: 'dev', files: {}, optional: [] };
const CACHE = `attnlab-${SITE.version}`;
const PREFIX = 'attnlab-';
const ROOT = new URL('./', self.location.href).href;
const ISOLATION = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

// The site-relative path of a same-origin URL inside the site ('' is index.html), or null.
function sitePath(url) {
  const u = new URL(url);
  const root = new URL(ROOT);
  if (u.origin !== root.origin || !u.pathname.startsWith(root.pathname)) return null;
  const p = decodeURIComponent(u.pathname.slice(root.pathname.length));
  return p === '' ? 'index.html' : p;
}

async function sha256(buffer) {
  const d = new Uint8Array(await crypto.subtle.digest('SHA-256', buffer));
  return Array.from(d, (b) => b.toString(16).padStart(2, '0')).join('');
}

// The response with the isolation headers, its body read whole first: a streamed body that the
// page stops reading (a reload mid-download) would keep this worker's event open, and a new
// deployment's worker waits for every open event of the old one before it takes over.
async function isolated(response) {
  const headers = new Headers(response.headers);
  for (const [k, v] of Object.entries(ISOLATION)) headers.set(k, v);
  const body = await response.arrayBuffer();
  return new Response(body, { status: response.status, statusText: response.statusText, headers });
}

// The file at `path` as this build has it: from the cache when its bytes hash to the build's
// value, else from the network (checked the same way, then cached). null when neither has it.
async function verified(cache, path) {
  const want = SITE.files[path];
  const url = ROOT + path;
  const kept = await cache.match(url);
  if (kept) {
    const body = await kept.clone().arrayBuffer();
    if ((await sha256(body)) === want) return kept;
    await cache.delete(url);
  }
  // The browser's HTTP cache first (revalidated: the page's own first load has usually just
  // fetched the file), then the server itself when that copy is not this build's.
  for (const mode of ['no-cache', 'reload']) {
    const fresh = await fetch(url, { cache: mode });
    if (!fresh.ok) throw new Error(`${path}: the server answered ${fresh.status}`);
    if ((await sha256(await fresh.clone().arrayBuffer())) !== want) continue;
    await cache.put(url, fresh.clone());
    return fresh;
  }
  throw new Error(`${path}: its bytes are not this build's (another deployment is being served?)`);
}

self.addEventListener('install', (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      const needed = Object.keys(SITE.files).filter((p) => !SITE.optional.includes(p));
      for (const path of needed) await verified(cache, path);
      await self.skipWaiting();
    })(),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) {
        if (name.startsWith(PREFIX) && name !== CACHE) await caches.delete(name);
      }
      await self.clients.claim();
    })(),
  );
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET') return;
  const path = sitePath(request.url);
  if (path === null) return; // another origin: the page asks none; the browser's own rules apply
  event.respondWith(
    (async () => {
      if (path in SITE.files) {
        try {
          return await isolated(await verified(await caches.open(CACHE), path));
        } catch (e) {
          return new Response(`attnlab could not load ${path}: ${e.message}`, {
            status: 503,
            headers: { ...ISOLATION, 'Content-Type': 'text/plain' },
          });
        }
      }
      // Not part of the build (e.g. data/ from a server started with --data): the network, isolated.
      try {
        return await isolated(await fetch(request));
      } catch (e) {
        return new Response(`offline: ${path} is not part of the cached site`, {
          status: 503,
          headers: { ...ISOLATION, 'Content-Type': 'text/plain' },
        });
      }
    })(),
  );
});

// The page asks which version this worker serves and whether its cache is complete.
self.addEventListener('message', (event) => {
  if (!event.data || event.data.type !== 'status') return;
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      const needed = Object.keys(SITE.files).filter((p) => !SITE.optional.includes(p));
      let missing = 0;
      for (const p of needed) if (!(await cache.match(ROOT + p))) missing += 1;
      event.source.postMessage({
        type: 'status',
        version: SITE.version,
        files: needed.length,
        missing,
      });
    })(),
  );
});
