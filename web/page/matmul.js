// The Device card's matmul line (WebGPU only): which GPU matmul kernel runs ('tiled' through
// workgroup memory, 'register-blocked' without it, or the vec4 kernels 'vec4-4x4' and 'vec4-8x4'
// without it; the engine names them, MatmulKernel in src/gpu/mod.rs), and how it was chosen. On a
// hardware adapter all are timed once at the GPT's shapes (src/bench/matmul.rs tune_matmul, through the
// engine's queue) and the fastest is kept in this browser (localStorage, per adapter), so later
// visits apply it without timing again. On a software adapter the adapter type's rule stands
// (register-blocked for CPU-type adapters, measured 4.7× faster than tiled on lavapipe) unless the
// user asks for the timing. The button times them again.
// State for tests: window.__matmul = {kernel, how, kernels, ms, at, busy, error}.
import { job } from '../backend.js';

const $ = (id) => document.getElementById(id);
const M = (window.__matmul = {
  kernel: null,
  how: null,
  kernels: [],
  ms: [],
  at: null,
  busy: false,
  error: null,
});
let engine = null; // the engine's client (web/engine.js)

const keyOf = (a) => `attnlab-matmul:${a.backend}|${a.name}|${a.driver}`;

function read(key) {
  try {
    const v = JSON.parse(localStorage.getItem(key));
    return v && typeof v.kernel === 'string' && Array.isArray(v.ms) && Array.isArray(v.kernels)
      ? v
      : null;
  } catch {
    return null;
  }
}

function write(key, v) {
  try {
    localStorage.setItem(key, JSON.stringify(v));
  } catch {
    /* storage can be off */
  }
}

function show() {
  const times =
    M.ms.length && M.ms.length === M.kernels.length
      ? `: ${M.kernels.map((k, i) => `${k} ${M.ms[i].toFixed(1)} ms`).join(', ')} for the GPT's products`
      : '';
  const how =
    {
      timed: `timed on this device just now${times}`,
      kept:
        'kept in this browser, timed on this device on ' +
        `${M.at ? new Date(M.at).toLocaleString() : 'an earlier visit'}${times}`,
      default: 'the rule for this adapter type, not timed here',
    }[M.how] || M.how;
  $('matmul-line').textContent = M.busy
    ? 'Matmul kernel: timing the kernels…'
    : `Matmul kernel: ${M.kernel} — ${how}.${M.error ? ` Timing failed: ${M.error}` : ''}`;
  $('matmul-time').disabled = M.busy;
  $('matmul-time').textContent = M.ms.length ? 'Time the kernels again' : 'Time the kernels';
}

async function tune(key) {
  M.busy = true;
  M.error = null;
  show();
  try {
    const c = await job('tune matmul', () => engine.tune_matmul());
    Object.assign(M, {
      kernel: c.kernel,
      how: 'timed',
      kernels: c.kernels,
      ms: c.ms,
      at: Date.now(),
    });
    write(key, { kernel: c.kernel, kernels: c.kernels, ms: c.ms, at: M.at });
  } catch (e) {
    M.error = String((e && e.message) || e);
  } finally {
    M.busy = false;
    show();
  }
}

// After the device is open: apply a kept choice, or time them all on a hardware adapter. A kept
// name the engine refuses (kept by an older version, say) is dropped and the default stands.
export async function startMatmul(client, device) {
  if (device.kind === 'cpu' || !device.adapter) return;
  engine = client;
  const key = keyOf(device.adapter);
  $('matmul').hidden = false;
  $('matmul-time').addEventListener('click', () => tune(key));
  let kept = read(key);
  try {
    let c = null;
    if (kept) {
      c = await job('set matmul', () => engine.set_matmul(kept.kernel)).catch(() => null);
      if (!c) kept = null;
    }
    if (!c) c = await job('matmul choice', () => engine.matmul_choice());
    Object.assign(
      M,
      kept
        ? { kernel: c.kernel, how: 'kept', kernels: kept.kernels, ms: kept.ms, at: kept.at }
        : { kernel: c.kernel, how: c.how, kernels: c.kernels, ms: [] },
    );
  } catch (e) {
    M.error = String((e && e.message) || e);
  }
  show();
  if (!kept && !device.adapter.software) await tune(key);
}
