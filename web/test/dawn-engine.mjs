// The page's engine in Node on Dawn (the npm package `webgpu`, the WebGPU implementation inside
// Chrome), for web/test/dawn.mjs: web/engine-worker.js itself is imported into this process with
// the few globals a module Web Worker has and Node 20 lacks, so every call goes through the worker's
// own message handler to the same wasm build (web/pkg) the page loads; nothing here is a second
// path into the module.
//
// What Node needs that a worker has:
//   navigator.gpu        Dawn's create([]) (Node 20 has no global navigator)
//   WorkerGlobalScope    wgpu's WebGPU backend finds navigator.gpu through the global's `Window` or
//                        `WorkerGlobalScope` (wgpu's src/backend/webgpu.rs, get_browser_gpu_property)
//   self, location       engine-worker.js reads self.location.href (the ?simd= choice)
//   postMessage/onmessage  the worker's channel, answered here
//   fetch of file: URLs  the module's init fetches attnlab_bg.wasm next to attnlab.js; here that is
//                        the .wasm file's bytes
//   the GPU* classes     engine-worker.js patches GPUAdapter.prototype.requestDevice (subgroups)
//
// Instrumentation, at the WebGPU API (what Dawn is asked to do, whatever the engine's own counters
// say): dispatches, submits, buffers created (count and bytes), bytes written by writeBuffer, and
// the readbacks (mapAsync) the engine makes. With `timestamps`, where the adapter has
// 'timestamp-query', every compute pass the engine begins gets timestamp writes added, resolved
// before its encoder finishes and read after its submit: the GPU's own time per pass, summed per
// step. The engine's calls are unchanged; only the passes carry two more writes.

import { readFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';
import { connect, missing } from '../engine.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const webDir = path.resolve(here, '..');

// The counters. `marks` holds one entry per readback the engine makes (its step ends read the loss
// back), each a copy of the counters at that moment, so a call's steps are the spans between marks.
export const counters = {
  dispatches: 0,
  submits: 0,
  passes: 0,
  buffers: 0,
  bufferBytes: 0,
  written: 0,
  readbacks: 0,
  gpuNs: 0,
  timedPasses: 0,
  untimedPasses: 0,
};
export const marks = [];
const snapshot = () => ({ ...counters });

// One query set per command encoder, with room for this many passes; later passes go untimed.
const PASSES_PER_ENCODER = 256;

// Patch Dawn's classes before the engine loads. `timestamps`: add the feature and the writes.
function instrument(globals, { timestamps }) {
  const { GPUAdapter, GPUDevice, GPUQueue, GPUCommandEncoder, GPUComputePassEncoder, GPUBuffer } =
    globals;
  const orig = {
    requestDevice: GPUAdapter.prototype.requestDevice,
    createBuffer: GPUDevice.prototype.createBuffer,
    createCommandEncoder: GPUDevice.prototype.createCommandEncoder,
    submit: GPUQueue.prototype.submit,
    writeBuffer: GPUQueue.prototype.writeBuffer,
    beginComputePass: GPUCommandEncoder.prototype.beginComputePass,
    finish: GPUCommandEncoder.prototype.finish,
    dispatch: GPUComputePassEncoder.prototype.dispatchWorkgroups,
    dispatchIndirect: GPUComputePassEncoder.prototype.dispatchWorkgroupsIndirect,
    mapAsync: GPUBuffer.prototype.mapAsync,
  };
  const timed = new WeakMap(); // device -> true when its passes are timed
  const encoders = new WeakMap(); // encoder -> {device, set, n}
  const buffers = new WeakMap(); // command buffer -> {set, resolve, read, n}
  const pending = [];
  GPUAdapter.prototype.requestDevice = async function (desc = {}) {
    const features = [...(desc.requiredFeatures || [])];
    const want = timestamps && this.features.has('timestamp-query');
    if (want && !features.includes('timestamp-query')) features.push('timestamp-query');
    const device = await orig.requestDevice.call(this, { ...desc, requiredFeatures: features });
    if (want && device.features.has('timestamp-query')) timed.set(device, true);
    return device;
  };
  GPUDevice.prototype.createBuffer = function (desc) {
    counters.buffers += 1;
    counters.bufferBytes += Number(desc.size) || 0;
    return orig.createBuffer.call(this, desc);
  };
  GPUDevice.prototype.createCommandEncoder = function (...args) {
    const enc = orig.createCommandEncoder.apply(this, args);
    if (timed.get(this)) encoders.set(enc, { device: this, set: null, n: 0 });
    return enc;
  };
  GPUCommandEncoder.prototype.beginComputePass = function (desc) {
    counters.passes += 1;
    const e = encoders.get(this);
    if (!e || (desc && desc.timestampWrites)) return orig.beginComputePass.call(this, desc);
    if (e.n >= PASSES_PER_ENCODER) {
      counters.untimedPasses += 1;
      return orig.beginComputePass.call(this, desc);
    }
    if (!e.set)
      e.set = e.device.createQuerySet({ type: 'timestamp', count: 2 * PASSES_PER_ENCODER });
    const at = 2 * e.n++;
    const timestampWrites = {
      querySet: e.set,
      beginningOfPassWriteIndex: at,
      endOfPassWriteIndex: at + 1,
    };
    return orig.beginComputePass.call(this, { ...(desc || {}), timestampWrites });
  };
  GPUCommandEncoder.prototype.finish = function (...args) {
    const e = encoders.get(this);
    if (!e || !e.n) return orig.finish.apply(this, args);
    const bytes = 16 * e.n;
    const U = globals.GPUBufferUsage;
    const resolve = orig.createBuffer.call(e.device, {
      size: bytes,
      usage: U.QUERY_RESOLVE | U.COPY_SRC,
    });
    const read = orig.createBuffer.call(e.device, { size: bytes, usage: U.MAP_READ | U.COPY_DST });
    this.resolveQuerySet(e.set, 0, 2 * e.n, resolve, 0);
    this.copyBufferToBuffer(resolve, 0, read, 0, bytes);
    const cb = orig.finish.apply(this, args);
    buffers.set(cb, { set: e.set, resolve, read, n: e.n });
    return cb;
  };
  GPUQueue.prototype.submit = function (cbs) {
    counters.submits += 1;
    const r = orig.submit.call(this, cbs);
    for (const cb of cbs) {
      const t = buffers.get(cb);
      if (!t) continue;
      const step = marks.length; // the readback this work counts toward
      pending.push(
        orig.mapAsync.call(t.read, globals.GPUMapMode.READ).then(
          () => {
            const ns = new BigUint64Array(t.read.getMappedRange());
            let sum = 0;
            for (let i = 0; i < t.n; i++) sum += Number(ns[2 * i + 1] - ns[2 * i]);
            t.read.unmap();
            for (const b of [t.read, t.resolve, t.set]) b.destroy();
            counters.timedPasses += t.n;
            gpuByMark[step] = (gpuByMark[step] || 0) + sum;
          },
          (e) => {
            timestampErrors.push(String((e && e.message) || e));
          },
        ),
      );
    }
    return r;
  };
  // writeBuffer(buffer, offset, data, dataOffset?, size?): dataOffset and size count elements of a
  // typed array, bytes of an ArrayBuffer.
  GPUQueue.prototype.writeBuffer = function (buffer, offset, data, ...rest) {
    const [dataOffset = 0, size] = rest;
    const unit = data.BYTES_PER_ELEMENT || 1;
    counters.written += size !== undefined ? size * unit : data.byteLength - dataOffset * unit;
    return orig.writeBuffer.call(this, buffer, offset, data, ...rest);
  };
  GPUComputePassEncoder.prototype.dispatchWorkgroups = function (...args) {
    counters.dispatches += 1;
    return orig.dispatch.apply(this, args);
  };
  GPUComputePassEncoder.prototype.dispatchWorkgroupsIndirect = function (...args) {
    counters.dispatches += 1;
    return orig.dispatchIndirect.apply(this, args);
  };
  GPUBuffer.prototype.mapAsync = function (...args) {
    counters.readbacks += 1;
    marks.push(snapshot());
    return orig.mapAsync.apply(this, args);
  };
  // Every timestamp read so far (the GPU time of work submitted before now).
  settleTimestamps = async () => {
    while (pending.length) await pending.shift();
  };
}

// GPU nanoseconds of the work submitted before each readback: gpuByMark[k] is the work between
// readback k − 1 and readback k (index 0: before the first).
const gpuByMark = [];
export const timestampErrors = [];
let settleTimestamps = async () => {};

// Per-step counts of the spans between readbacks `from` (exclusive) and `to` (inclusive): the
// median span, and each field as a number per step. The spans must be alike (a step each).
export async function perStep(from, to) {
  await settleTimestamps();
  const spans = [];
  for (let k = from + 1; k <= to; k++) {
    const a = marks[k - 1];
    const b = marks[k];
    spans.push({
      dispatches: b.dispatches - a.dispatches,
      submits: b.submits - a.submits,
      passes: b.passes - a.passes,
      buffers: b.buffers - a.buffers,
      bufferBytes: b.bufferBytes - a.bufferBytes,
      written: b.written - a.written,
      gpuMs: gpuByMark[k] === undefined ? null : gpuByMark[k] / 1e6,
    });
  }
  const med = (f) => {
    const v = spans
      .map(f)
      .filter((x) => x !== null)
      .sort((x, y) => x - y);
    return v.length ? v[Math.floor((v.length - 1) / 2)] : null;
  };
  const keys = ['dispatches', 'submits', 'passes', 'buffers', 'bufferBytes', 'written', 'gpuMs'];
  return { spans: spans.length, ...Object.fromEntries(keys.map((k) => [k, med((s) => s[k])])) };
}

// Start the engine: Dawn's `gpu` as navigator.gpu, web/engine-worker.js imported with the worker's
// globals. Resolves to {engine, build}: engine is the page's client (web/engine.js) of it, whose
// calls reject with the Engine's own messages, as on the page.
export async function startEngine(gpu, globals, { timestamps = true } = {}) {
  Object.assign(globalThis, globals);
  instrument(globals, { timestamps });
  Object.defineProperty(globalThis, 'navigator', {
    value: { gpu, hardwareConcurrency: 1, userAgent: `Node.js ${process.version} (Dawn)` },
    configurable: true,
    writable: true,
  });
  globalThis.WorkerGlobalScope = class WorkerGlobalScope {};
  globalThis.self = globalThis;
  const worker = pathToFileURL(path.join(webDir, 'engine-worker.js'));
  globalThis.location = { href: worker.href };
  let loaded = null;
  const realFetch = globalThis.fetch;
  globalThis.fetch = async (what, opts) => {
    const url = new URL(String((what && what.url) || what));
    if (url.protocol !== 'file:') return realFetch(what, opts);
    loaded = fileURLToPath(url);
    const bytes = await readFile(loaded);
    return new Response(bytes, { headers: { 'content-type': 'application/wasm' } });
  };
  let ready;
  const first = new Promise((resolve) => {
    ready = resolve;
  });
  // The page's own client (web/engine.js) over the worker's channel: its calls go to the worker's
  // message handler, the worker's answers come back to it.
  const { client, receive } = connect((m) => globalThis.onmessage({ data: m }));
  globalThis.postMessage = (m) => {
    if (m.type === 'ready' || m.type === 'failed') ready(m);
    else receive(m);
  };
  await import(worker.href);
  const m = await first;
  if (m.type === 'failed')
    throw new Error(`the engine (web/engine-worker.js) did not load: ${m.error}`);
  const why = missing(m.methods);
  if (why) throw new Error(why);
  return {
    engine: client,
    build: loaded ? path.relative(webDir, path.dirname(loaded)) : '?',
  };
}
