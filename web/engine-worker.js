// The page's engine (a module Web Worker, started by web/backend.js): the one instance of the wasm
// module, the one device and every model and run live here, so a training chunk, an evaluation or
// a demo's computation never blocks the page's thread. The page calls the module's exports by name:
//   {id, fn, args}           → {id, ok: true, value} or {id, error: message}
//   an argument {progress: k} becomes a function that posts {id, progress: k, args} (the page calls
//   its k-th callback with them: page_bench's (text))
// and the first message says which exports there are: {exports: [names]} (or {error} when the module
// did not load). Calls are served in arrival order; the page's one job queue (job in backend.js)
// keeps device work to one call at a time.
import init, * as wasm from './pkg/attnlab.js';

const NOT_CALLABLE = new Set(['default', 'initSync']);

let memory = null;
// Byte results (fresh copies out of the module's memory) move instead of being copied again: a
// checkpoint can be megabytes.
const transfers = (v) => (ArrayBuffer.isView(v) && v.buffer instanceof ArrayBuffer && v.buffer !== memory.buffer ? [v.buffer] : []);

const message = (e) => String((e && e.message) || e);

async function serve(e) {
  const { id, fn, args } = e.data;
  try {
    const f = NOT_CALLABLE.has(fn) ? null : wasm[fn];
    if (typeof f !== 'function') throw new Error(`the engine has no function ${fn}`);
    const call = args.map((a) => (a && typeof a === 'object' && 'progress' in a && Object.keys(a).length === 1
      ? (...p) => self.postMessage({ id, progress: a.progress, args: p })
      : a));
    const value = await f(...call);
    self.postMessage({ id, ok: true, value }, transfers(value));
  } catch (err) {
    self.postMessage({ id, error: message(err) });
  }
}

try {
  ({ memory } = await init());
  self.onmessage = serve;
  self.postMessage({ exports: Object.keys(wasm).filter((k) => !NOT_CALLABLE.has(k) && typeof wasm[k] === 'function') });
} catch (err) {
  self.postMessage({ error: message(err) });
}
