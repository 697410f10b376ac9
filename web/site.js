// The page as a static site (scripts/site.sh): registers the site's service worker (web/sw.js), which
// makes the page cross-origin isolated without server headers and keeps the site for offline use,
// and says in the Device card what it gives. scripts/site.sh marks the site's index.html with a
// <meta name="attnlab-site"> tag; a page served by scripts/serve.py has none and registers no
// worker: that server sends the isolation headers itself.
const note = () => document.getElementById('site-status');
const RELOADED = 'attnlab-site-reloaded';

function say(text) {
  const el = note();
  if (!el) return;
  el.textContent = text;
  el.hidden = false;
}

// The worker's answer to {type: 'status'}: its version and how many of its files are cached.
function askStatus(worker) {
  return new Promise((resolve) => {
    const onMessage = (e) => {
      if (!e.data || e.data.type !== 'status') return;
      navigator.serviceWorker.removeEventListener('message', onMessage);
      resolve(e.data);
    };
    navigator.serviceWorker.addEventListener('message', onMessage);
    worker.postMessage({ type: 'status' });
    setTimeout(() => resolve(null), 5000);
  });
}

async function start() {
  if (!document.querySelector('meta[name="attnlab-site"]')) return;
  let site;
  try {
    const r = await fetch('web/site.json', { cache: 'no-store' });
    if (!r.ok) return; // a site without its web/site.json: the page goes on as it is
    site = await r.json();
  } catch {
    // Offline with no worker in control, or no site.json: the page goes on as it is.
    return;
  }
  window.__site = { version: site.version, state: 'registering' };
  if (!('serviceWorker' in navigator)) {
    window.__site.state = 'unsupported';
    say(
      'Offline use and shared memory need service workers, which this browser does not offer here: ' +
        'the page works, and its CPU engines copy data between them.',
    );
    return;
  }
  // A registration that neither succeeds nor fails (a browser or an extension that blocks it
  // quietly) counts as failed after a while; the page itself never waits for it.
  const late = (what) =>
    new Promise((_, reject) =>
      setTimeout(() => reject(new Error(`${what} did not finish in 20 s`)), 20000),
    );
  let ready;
  try {
    await Promise.race([
      navigator.serviceWorker.register('sw.js', { scope: './' }),
      late('the registration'),
    ]);
    ready = await Promise.race([navigator.serviceWorker.ready, late("the worker's start")]);
  } catch (e) {
    window.__site.state = 'failed';
    say(
      `The site's service worker could not start (${(e && e.message) || e}): the page works, but not ` +
        'offline, and its CPU engines copy data between them.',
    );
    return;
  }
  // The first visit: the page was loaded before its worker could add the isolation headers. Reload
  // once, so that it is cross-origin isolated from now on (a second reload is never attempted).
  if (!self.crossOriginIsolated) {
    if (!sessionStorage.getItem(RELOADED)) {
      sessionStorage.setItem(RELOADED, '1');
      if (!navigator.serviceWorker.controller) {
        await new Promise((resolve) => {
          navigator.serviceWorker.addEventListener('controllerchange', resolve, { once: true });
          setTimeout(resolve, 10000);
        });
      }
      location.reload();
      return;
    }
  }
  sessionStorage.removeItem(RELOADED);
  const status = await askStatus(navigator.serviceWorker.controller || ready.active);
  const iso = self.crossOriginIsolated
    ? 'cross-origin isolated through its service worker'
    : 'not cross-origin isolated (the CPU engines copy data between them)';
  if (status && status.missing === 0) {
    window.__site = {
      version: status.version,
      state: 'offline-ready',
      isolated: self.crossOriginIsolated,
    };
    say(
      `Offline-ready: this page (build ${status.version}) is kept in this browser and works without a network; ${iso}.`,
    );
  } else {
    window.__site = { version: site.version, state: 'caching', isolated: self.crossOriginIsolated };
    say(`This page is ${iso}; it is not yet kept for offline use.`);
  }
}

start();
