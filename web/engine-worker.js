// The page's engine (a module Web Worker, started by web/engine.js): the one instance of the wasm
// module and its one `Engine` (src/wasm/engine.rs), which holds the device and every model and
// run, so a training chunk, an evaluation or a demo's computation never blocks the page's thread.
// The messages (each with a `type`; web/engine.js is the only sender):
//   page → engine   {type: 'call', id, method, args, into}  method: one of the Engine's methods;
//                                                      into (optional): a SharedArrayBuffer that
//                                                      receives the result's Float32Array (below)
//   engine → page   {type: 'ready', methods: [names]}   once, when the module is loaded
//                   {type: 'failed', error}             instead, when it did not load
//                   {type: 'result', id, value}
//                   {type: 'error', id, error}          the method's own message
//                   {type: 'progress', id, k, args}     an argument {progress: k} became a function
//                                                      posting this (bench's progress text)
// The engine serves ONE call at a time, by construction: a call that arrives while another runs
// (awaiting the device between two of its steps) waits in `waiting` until that one has returned,
// so no two calls' device work ever interleaves, whoever on the page sent them.

// Two builds of the module (scripts/build-web.sh): web/pkg with SIMD128, and web/pkg-relaxed, the
// same with relaxed SIMD, whose fused multiply-add the CPU backend's matmuls use (1.2–1.5× their
// SIMD128 speed here, the step a fifth to a quarter faster: BENCHMARKS.md). The relaxed one is
// loaded where the browser validates a relaxed-SIMD instruction (Chrome 114+, Firefox 146+; not
// Safari), unless the page's address asks for ?simd=128 (web/engine.js passes it on), or it is
// missing.
// The probe: a function of three v128 that returns f32x4.relaxed_madd of them.
const RELAXED_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 8, 1, 96, 3, 123, 123, 123, 1, 123, 3, 2, 1, 0, 10, 13, 1, 11, 0,
  32, 0, 32, 1, 32, 2, 253, 133, 2, 11,
]);
const relaxed =
  new URL(self.location.href).searchParams.get('simd') !== '128' &&
  WebAssembly.validate(RELAXED_PROBE);

async function load() {
  if (relaxed) {
    try {
      return await import('./pkg-relaxed/attnlab.js');
    } catch {
      /* not built: the SIMD128 one */
    }
  }
  return import('./pkg/attnlab.js');
}

// The Engine's own methods: the prototype's functions but the constructor and `free` (which
// would drop the engine); wasm-bindgen's internals start with `__`.
const methodsOf = (proto) =>
  Object.getOwnPropertyNames(proto).filter(
    (k) =>
      typeof proto[k] === 'function' && k !== 'constructor' && k !== 'free' && !k.startsWith('__'),
  );

// wgpu's WebGPU backend cannot ask the browser for the 'subgroups' feature (its feature list has no
// such entry), so the engine asks for it here whenever the adapter offers it, and says whether the
// device got it in globalThis.__attnlabSubgroups, which src/gpu/mod.rs reads as it opens the
// device: the row kernels (softmax, layernorm, cross-entropy) then reduce with subgroup operations.
if (self.GPUAdapter) {
  const requestDevice = GPUAdapter.prototype.requestDevice;
  GPUAdapter.prototype.requestDevice = async function (desc = {}) {
    const features = [...(desc.requiredFeatures || [])];
    if (this.features.has('subgroups') && !features.includes('subgroups'))
      features.push('subgroups');
    const device = await requestDevice.call(this, { ...desc, requiredFeatures: features });
    self.__attnlabSubgroups = device.features.has('subgroups');
    return device;
  };
}

let memory = null;
// Byte results (fresh copies out of the module's memory) move instead of being copied again: a
// checkpoint can be megabytes; so do the typed arrays of a result object (a step's gradients).
const movable = (v) =>
  ArrayBuffer.isView(v) && v.buffer instanceof ArrayBuffer && v.buffer !== memory.buffer;
const transfers = (v) =>
  movable(v)
    ? [v.buffer]
    : v && typeof v === 'object'
      ? Object.values(v)
          .filter(movable)
          .map((a) => a.buffer)
      : [];

// With `into` (the page is cross-origin isolated: web/helpers.js), the result's Float32Array (the
// result itself or one of its fields) is copied into that shared buffer and replaced by a view of
// it, which the page hands to another engine without a copy.
function share(v, into) {
  const put = (a) => {
    const view = new Float32Array(into, 0, a.length);
    view.set(a);
    return view;
  };
  if (v instanceof Float32Array) return put(v);
  if (v && typeof v === 'object') {
    for (const [k, a] of Object.entries(v))
      if (a instanceof Float32Array) return { ...v, [k]: put(a) };
  }
  return v;
}

const message = (e) => String((e && e.message) || e);

async function serve({ id, method, args, into }) {
  try {
    if (!methods.includes(method)) throw new Error(`the engine has no method ${method}`);
    const call = args.map((a) =>
      a && typeof a === 'object' && 'progress' in a && Object.keys(a).length === 1
        ? (...p) => self.postMessage({ type: 'progress', id, k: a.progress, args: p })
        : a,
    );
    let value = await engine[method](...call);
    if (into) value = share(value, into);
    self.postMessage({ type: 'result', id, value }, transfers(value));
  } catch (err) {
    self.postMessage({ type: 'error', id, error: message(err) });
  }
}

// The calls not yet served, in arrival order, and whether one is being served now.
const waiting = [];
let serving = false;

async function drain() {
  if (serving) return;
  serving = true;
  while (waiting.length) await serve(waiting.shift());
  serving = false;
}

let engine = null;
let methods = [];
try {
  const build = await load();
  ({ memory } = await build.default());
  engine = new build.Engine();
  methods = methodsOf(build.Engine.prototype);
  self.onmessage = ({ data: m }) => {
    if (m && m.type === 'call') {
      waiting.push(m);
      drain();
    }
  };
  self.postMessage({ type: 'ready', methods });
} catch (err) {
  self.postMessage({ type: 'failed', error: message(err) });
}
