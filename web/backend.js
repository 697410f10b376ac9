// The page's engine, shared by every card (app.js, app-train.js, page/bench.js) and the demos
// (demos.js): the one wasm module, the one device and the one queue of device work (job). The module
// runs in one module Web Worker (web/engine-worker.js), so training, evaluation and the demos'
// kernels never block the page's thread; here, on the page's side, are the engine's client
// (web/engine.js), the queue and the device choice. The worker opens the device for the user's
// choice through the Engine's open_device (src/wasm/mod.rs):
//   auto    a hardware WebGPU adapter if the browser has one, else the CPU backend (f32 kernels,
//           wasm SIMD128, one thread); a software fallback adapter (SwiftShader) is slower than the
//           CPU backend, so auto does not take it
//   webgpu  any WebGPU adapter, the software fallback included
//   cpu     the CPU backend
// The choice comes from ?backend=auto|webgpu|cpu in the address (tests, shared links), else from
// localStorage (the Device card's Backend selector and its Apply button), else auto. Applying stores it
// and reloads the page, so every tensor, model and run starts on the new device (a saved run resumes
// from IndexedDB).

import { startEngine } from './engine.js';

export const KEY = 'attnlab-backend';
export const CHOICES = ['auto', 'webgpu', 'cpu'];
// How many engines train on the CPU backend (web/helpers.js): ?workers=N in the address, else the
// Device card's Workers selector (kept in localStorage), else auto.
export const WORKERS_KEY = 'attnlab-workers';
export const MAX_WORKERS = 8;

let ready = null;

// The user's choice and where it came from ('address', 'saved', 'default').
export function currentChoice() {
  const q = new URLSearchParams(location.search).get('backend');
  if (CHOICES.includes(q)) return { choice: q, from: 'address' };
  let saved = null;
  try {
    saved = localStorage.getItem(KEY);
  } catch {
    /* storage can be off */
  }
  if (CHOICES.includes(saved)) return { choice: saved, from: 'saved' };
  return { choice: 'auto', from: 'default' };
}

// How many engines a run on the CPU backend uses, and why: {n, choice ('auto' or a number), from
// ('address', 'saved', 'default'), cores, isolated, why}. Auto: one fewer than the cores the
// browser reports (navigator.hardwareConcurrency), leaving one to the page's own thread and the
// browser (with every core busy training, the page's tasks stretched past 200 ms on this 2-core
// machine: web/test/page.mjs), at least 1 and at most MAX_WORKERS (each engine holds a copy of the
// model and the run's data; past 8 the gradients' exchange grows while each engine's rows shrink).
// WebGPU runs one engine: its device is one.
export function workerPlan(kind) {
  const cores = Math.max(1, navigator.hardwareConcurrency || 1);
  const isolated = self.crossOriginIsolated === true;
  const valid = (v) => /^[0-9]+$/.test(String(v)) && +v >= 1 && +v <= MAX_WORKERS;
  let choice = 'auto';
  let from = 'default';
  const q = new URLSearchParams(location.search).get('workers');
  let saved = null;
  try {
    saved = localStorage.getItem(WORKERS_KEY);
  } catch {
    /* storage can be off */
  }
  if (valid(q)) {
    choice = +q;
    from = 'address';
  } else if (valid(saved)) {
    choice = +saved;
    from = 'saved';
  }
  const auto = Math.max(1, Math.min(MAX_WORKERS, cores - 1));
  const base = { choice, from, cores, isolated };
  if (kind !== 'cpu')
    return { ...base, n: 1, why: 'WebGPU trains on its one device, in one engine' };
  const n = choice === 'auto' ? auto : choice;
  const how =
    choice === 'auto'
      ? `auto: the browser reports ${cores} core${cores === 1 ? '' : 's'}` +
        (cores > 1 ? ', one left to the page' : '') +
        (cores === 2
          ? '; 2 under Workers uses both, faster only when both are free, and the page then ' +
            'answers more slowly'
          : '')
      : `you chose ${n} ` +
        (from === 'address' ? 'with ?workers= in the address' : 'in the Workers selector');
  const share =
    n === 1
      ? ''
      : isolated
        ? '; the page is cross-origin isolated, so the engines pass weights and gradients ' +
          'through shared memory'
        : '; the page is not cross-origin isolated (its server sends no COOP/COEP headers), so ' +
          'weights and gradients are copied between the engines (slower)';
  return { ...base, n, why: `${how}${share}` };
}

// What the browser itself says about WebGPU: {api, adapter, info, fallback, why}.
async function probeWebGPU() {
  if (!navigator.gpu)
    return {
      api: false,
      adapter: false,
      info: null,
      fallback: false,
      why: 'navigator.gpu is missing',
    };
  try {
    const a = await navigator.gpu.requestAdapter();
    if (!a)
      return {
        api: true,
        adapter: false,
        info: null,
        fallback: false,
        why: 'requestAdapter() returned no adapter',
      };
    const info = a.info || null;
    return {
      api: true,
      adapter: true,
      info,
      fallback: !!(info && info.isFallbackAdapter),
      why: '',
    };
  } catch (e) {
    return {
      api: true,
      adapter: false,
      info: null,
      fallback: false,
      why: `requestAdapter() failed: ${(e && e.message) || e}`,
    };
  }
}

// Which wasm build the CPU backend runs, from the device's description: "wasm relaxed SIMD" or
// "wasm SIMD128" (web/engine-worker.js picks the build; src/cpu/mod.rs names it).
export const simdOf = (describe) => ((describe || '').match(/wasm [^,)]+/) || ['wasm SIMD'])[0];

// Start the engine and open the device once: resolves to {engine, device, probe, choice, from,
// workers}, where engine is the engine's client (web/engine.js: one method per Engine method, each
// returning a promise) and device is the wasm side's description {kind: 'gpu'|'cpu', choice,
// describe, reason, threads, max_tensor_bytes, budget_bytes, adapter}, and workers is workerPlan's
// answer for it. Rejects only when the engine itself does not load.
export function loadDevice() {
  if (!ready) {
    ready = (async () => {
      const [engine, probe] = await Promise.all([startEngine(), probeWebGPU()]);
      const { choice, from } = currentChoice();
      const device = await engine.open_device(choice);
      return { engine, device, probe, choice, from, workers: workerPlan(device.kind) };
    })();
  }
  return ready;
}

// The one queue of device work: training chunks, evaluation, questions, the benchmark and the demos
// run one engine call at a time, in the order asked (the device has one recorder; a demo waits for
// at most one training chunk). `what` names the call while it runs (running(), which tags long tasks).
let queue = Promise.resolve();
let current = '';

// Continue in a new task (a macrotask boundary). A message to a channel, not setTimeout(0): a
// background tab runs timers at most once a second, and after five minutes hidden once a minute,
// which would all but stop a run left training in another tab; channel messages are not held back.
const channel = new MessageChannel();
const waiting = [];
channel.port1.onmessage = () => {
  const r = waiting.shift();
  if (r) r();
};
export const nextTask = () =>
  new Promise((r) => {
    waiting.push(r);
    channel.port2.postMessage(0);
  });

// The last calls, newest last ({what, at, ms}: ms null while it runs): what held the engine when
// the page stopped answering (a browser test prints them when a step fails).
const recent = [];
export const recentJobs = () =>
  recent.map((j) => ({
    ...j,
    running: j.ms === null,
    ms: j.ms ?? Math.round(performance.now() - j.at),
  }));

export function job(what, f) {
  const g = async () => {
    // A macrotask boundary before every call: wasm-bindgen futures and IndexedDB callbacks run as
    // microtasks, so without it a click → restore → start → first training step chain ran as
    // one 110–250 ms task on a software adapter.
    await nextTask();
    current = what;
    const j = { what, at: Math.round(performance.now()), ms: null };
    recent.push(j);
    if (recent.length > 40) recent.shift();
    try {
      return await f();
    } finally {
      current = '';
      j.ms = Math.round(performance.now() - j.at);
    }
  };
  const p = queue.then(g, g);
  queue = p.catch(() => {});
  return p;
}

// The name of the call running now ('' between calls).
export const running = () => current;

// Store the Device card's choices (backend: 'auto' | 'webgpu' | 'cpu'; workers: 'auto' or
// 1…MAX_WORKERS; either may be absent) and reload once, so every tensor, model and run starts on the
// new device. The address keeps its other parameters: its ?backend= follows the choice (an address
// that named one would otherwise override it), its ?workers= goes (it would override the stored one).
export function applyDevice({ backend, workers }) {
  const url = new URL(location.href);
  try {
    if (CHOICES.includes(backend)) localStorage.setItem(KEY, backend);
    if (workers !== undefined) localStorage.setItem(WORKERS_KEY, String(workers));
  } catch {
    /* without storage only the address can choose */
  }
  if (CHOICES.includes(backend) && url.searchParams.has('backend')) {
    url.searchParams.delete('backend');
    if (backend !== 'auto') url.searchParams.set('backend', backend);
  }
  if (workers !== undefined) url.searchParams.delete('workers');
  // Same address (a #demo fragment included): reload; a changed query string navigates anyway.
  if (url.href === location.href) location.reload();
  else location.replace(url.href);
}
