// The page's one door to an engine: the only code that posts to an engine's worker
// (web/engine-worker.js, which holds one wasm `Engine`, src/wasm/engine.rs). startEngine() starts
// a worker and resolves to a client: one method per method of the Engine (METHODS), each posting
// {type: 'call', id, method, args, into} and resolving to what the Engine's method returned
// (structured-cloned), or rejecting with an Error carrying its own message. A function argument (a
// progress callback) stays here and is called with what the worker's stand-in for it was given.
// `client.with({into, transfer})` is the same client with two options for its calls: `into` a
// SharedArrayBuffer for the result's Float32Array (web/engine-worker.js), `transfer` the
// ArrayBuffers of the arguments to move rather than copy (the caller loses them).
// The worker serves one call at a time; web/backend.js's job() orders the page's device work.
//
// The names in METHODS are checked against wasm-bindgen's web/pkg/attnlab.d.ts by the type check
// (`cd web && npx tsc -p tsconfig.json`, in scripts/test.sh): a method renamed or dropped in Rust,
// a name here that is no method, or a method not listed here fails it; web/test/calls.mjs checks
// that every `engine.NAME(…)` on the page is one of them.

/** @typedef {import('./pkg/attnlab.js').Engine} Engine */
/** @typedef {Exclude<Extract<keyof Engine, string>, 'free'>} Method */
/**
 * A method as the page calls it: the Engine's parameters, its result through a promise.
 * @template {Method} K
 * @typedef {(...args: Parameters<Engine[K]>) => Promise<Awaited<ReturnType<Engine[K]>>>} Call
 */
/** @typedef {{into?: SharedArrayBuffer, transfer?: Transferable[]}} CallOptions */
/** @typedef {(typeof METHODS)[number]} Listed */
/** @typedef {{[K in Listed]: Call<K>} & {with: (opts: CallOptions) => Client}} Client */

export const METHODS = /** @type {const} */ ([
  // The device (src/wasm/mod.rs, train.rs)
  'open_device',
  'run_checks',
  'debug_engine',
  'debug_destroy_device',
  'device_lost',
  'reset_device',
  // Data, the form and presets (inputs.rs, spec.rs)
  'default_corpus',
  'check_corpus',
  'check_tsv',
  'read_form',
  'preset_form',
  'presets',
  // Sizing and benchmarks (measure.rs, bench.rs)
  'time_step',
  'fit',
  'packed_fill',
  'time_run',
  'bench',
  'matmul_choice',
  'tune_matmul',
  'set_matmul',
  // Training (train.rs, steps.rs)
  'start',
  'train',
  'run_state',
  'finish',
  'drop_run',
  'step_begin',
  'step_rows',
  'step_add',
  'step_end',
  'step_drop',
  'step_part',
  // Models, evaluation and questions (models.rs, ask.rs, eval_split.rs)
  'models',
  'load_model',
  'model_bytes',
  'keep_model',
  'forget_kept',
  'eval_begin',
  'eval_next',
  'eval_limit',
  'eval_report',
  'eval_part',
  'eval_add',
  'ask',
  // The demos (demos.rs)
  'demo_copying',
  'demo_average',
  'demo_noise',
  'demo_separate',
  'demo_temperature',
  'demo_mask',
  'demo_train_toy',
  'demo_heads',
  'demo_synth_vs_dot',
  'demo_imitate',
  'demo_set_model',
  'demo_clear_model',
  'demo_models',
  'demo_model_maps',
  // Section 2 (section2.rs)
  's2_set_data',
  's2_models',
  's2_load',
  's2_compare',
  's2_confidence',
  's2_evidence',
  's2_recall',
  's2_unseen',
  // The ViT card (vit.rs)
  'vit_new',
  'vit_load',
  'vit_train',
  'vit_evaluate',
  'vit_predict',
  'vit_positions',
  'vit_sample',
  'vit_digits_checksum',
  'vit_save',
]);

// The type check's two directions: every name listed is a method, every method is listed (the
// error names the methods missing here).
/** @type {readonly Method[]} */
const everyNameAMethod = METHODS;
/** @type {[Exclude<Method, Listed>] extends [never] ? 'all' : Exclude<Method, Listed>} */
const everyMethodListed = 'all';
(void everyNameAMethod, everyMethodListed);

/**
 * The client over a way to send calls (`post`), with `opts` for each call.
 * @param {(method: Method, args: unknown[], opts: CallOptions) => Promise<any>} post
 * @param {CallOptions} [opts]
 * @returns {Client}
 */
function clientOf(post, opts = {}) {
  /** @type {Record<string, unknown>} */
  const c = Object.fromEntries(
    METHODS.map((m) => [m, (/** @type {unknown[]} */ ...args) => post(m, args, opts)]),
  );
  c.with = (/** @type {CallOptions} */ o) => clientOf(post, o);
  return /** @type {Client} */ (Object.freeze(c));
}

/**
 * An engine's client over a channel: `send` posts a message to the engine; the engine's answers go
 * to `receive`; `stop(why)` rejects every call not yet answered.
 * @param {(m: object, transfer: Transferable[]) => void} send
 */
export function connect(send) {
  /** @type {Map<number, {resolve: (v: any) => void, reject: (e: Error) => void,
   *   callbacks: Function[]}>} */
  const calls = new Map();
  let next = 1;
  /** @type {(method: Method, args: unknown[], opts: CallOptions) => Promise<any>} */
  const post = (method, args, { into, transfer } = {}) =>
    new Promise((resolve, reject) => {
      const id = next++;
      /** @type {Function[]} */
      const callbacks = [];
      const sent = args.map((a) =>
        typeof a === 'function' ? { progress: callbacks.push(a) - 1 } : a,
      );
      calls.set(id, { resolve, reject, callbacks });
      send({ type: 'call', id, method, args: sent, into }, transfer || []);
    });
  /** @param {{type: string, id: number, value?: unknown, error?: string, k?: number,
   *   args?: unknown[]}} m */
  const receive = (m) => {
    const c = calls.get(m.id);
    if (!c) return;
    if (m.type === 'progress') {
      c.callbacks[m.k ?? 0](...(m.args || []));
      return;
    }
    calls.delete(m.id);
    if (m.type === 'result') c.resolve(m.value);
    else c.reject(new Error(m.error));
  };
  /** @param {string} why */
  const stop = (why) => {
    for (const c of calls.values()) c.reject(new Error(`the engine stopped: ${why}`));
    calls.clear();
  };
  return { client: clientOf(post), receive, stop };
}

/**
 * Why an engine that says it is ready cannot serve this client: '' when it has every method.
 * @param {string[]} methods what the worker's Engine has
 */
export function missing(methods) {
  const absent = METHODS.filter((m) => !methods.includes(m));
  return absent.length
    ? `the engine (web/pkg) lacks ${absent.join(', ')}: it is older than web/engine.js; ` +
        'rebuild it with scripts/build-web.sh'
    : '';
}

/**
 * Start an engine in a new module Web Worker; resolves to its client once the wasm module is
 * loaded, or rejects with why it did not load.
 * @returns {Promise<Client>}
 */
export function startEngine() {
  // ?simd=128 on the page's address loads the SIMD128 build even where relaxed SIMD is offered.
  const simd = new URLSearchParams(self.location.search).get('simd') === '128' ? '?simd=128' : '';
  const worker = new Worker(new URL(`./engine-worker.js${simd}`, import.meta.url), {
    type: 'module',
  });
  const { client, receive, stop } = connect((m, transfer) => worker.postMessage(m, transfer));
  return new Promise((resolve, reject) => {
    /** @param {string} why */
    const fail = (why) => {
      reject(new Error(why));
      stop(why);
    };
    // The script or the module did not load (the event carries no reason for a module worker).
    worker.onerror = (e) => {
      e.preventDefault();
      fail(e.message || 'the engine (web/engine-worker.js with web/pkg/attnlab.js) did not load');
    };
    worker.onmessage = ({ data: m }) => {
      if (m.type === 'ready') {
        const why = missing(m.methods);
        if (why) fail(why);
        else resolve(client);
      } else if (m.type === 'failed') fail(m.error);
      else receive(m);
    };
  });
}
