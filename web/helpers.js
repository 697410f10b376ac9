// The CPU backend's helper engines: a run on the CPU backend can train on N engines (the page's own,
// web/backend.js, and N − 1 helpers, each another module Web Worker with its own instance of the
// wasm module, its own CPU device and its own session of the same run). Each step the page's engine
// hands out its weights, every helper computes the gradients of its part of the batch
// (step_part in src/wasm/steps.rs), and the page's engine adds them in row order and updates
// (web/page/steps.js). When the page is cross-origin isolated (scripts/serve.py sends COOP and
// COEP), the weights and gradients pass through SharedArrayBuffers: the engine writes a result
// into one, and the page hands a view of it to the next engine without copying; otherwise they
// are ArrayBuffers, moved where they can be and copied where they must.
// Helpers start when a run or an evaluation first needs them and stay for the page's life; they
// hold nothing the page's engine does not also hold (a run is started on them from the page's
// engine's exact state, an evaluation's model is a copy of the page's: web/page/eval.js).
// (A helper engine is called `helper` here, as the page's is `engine` elsewhere: web/test/calls.mjs
// checks that each method called on one of them is a method of web/engine.js's client.)
import { startEngine } from './engine.js';

const engines = [];
// The shared buffers by name (page's weights, each helper's gradients), grown as needed.
const buffers = new Map();
// The helpers' calls not yet answered (a step dropped by Pause leaves them running): the next
// step waits for them, so no two calls' buffers overlap.
let inflight = Promise.resolve();

export const isolated = () =>
  self.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function';

// A shared buffer of at least `floats` f32 for `name` (isolated pages only), else undefined.
export function shared(name, floats) {
  if (!isolated()) return undefined;
  const have = buffers.get(name);
  if (have && have.byteLength >= floats * 4) return have;
  const b = new SharedArrayBuffer(floats * 4);
  buffers.set(name, b);
  return b;
}

// Why a helper did not start ('' while none failed): a helper that fails to start is not tried
// again until a reload, and the page runs on the engines that did start (web/page/steps.js fewer
// says so in the Device card).
export let failure = '';

// The first n helpers, started (each opens the CPU backend) as needed; fewer when one did not
// start (`failure` says why). Calls are chained, so two callers never start the same helper twice.
let starting = Promise.resolve();
export function helpers(n) {
  starting = starting
    .catch(() => {})
    .then(async () => {
      const more = [];
      for (let i = engines.length; i < n && !failure; i++) {
        more.push(
          (async () => {
            const helper = await startEngine();
            await helper.open_device('cpu');
            return helper;
          })(),
        );
      }
      for (const got of await Promise.allSettled(more)) {
        if (got.status === 'fulfilled') engines.push(got.value);
        else failure ||= (got.reason && got.reason.message) || String(got.reason);
      }
      return engines.slice(0, n);
    });
  return starting;
}

// Start the run on n helpers from the page's engine's exact training state (bytes): the same
// spec and data as the page's engine got, so every engine holds the same session; on the
// helpers already started (web/page/steps.js started).
export async function startRuns(n, r, state) {
  await inflight;
  const hs = await helpers(n);
  await Promise.all(
    hs.map((helper) => helper.start(r.spec, r.wikiName, r.wiki, r.tsvName, r.tsv, state)),
  );
}

// Helper i's part of a step: its gradients for rows [first, end) with the page's engine's weights.
// Resolves to {grads: Float32Array, loss}.
export function part(i, weights, steps, first, end) {
  const helper = engines[i];
  const into = shared(`grads${i}`, weights.length);
  return helper.with({ into }).step_part(weights, steps, first, end);
}

// Remember the calls of a step, so the next one starts after them.
export function track(calls) {
  inflight = Promise.allSettled(calls);
}

export const settled = () => inflight;

// An evaluation on the helpers `hs` (web/page/steps.js started): each gets a copy of the page's
// engine's model (its checkpoint bytes, model_bytes) as its variant's model and begins the
// same evaluation of the same file (eval_begin's name, text and max). Resolves to {ready:
// the helpers that hold it, in order; why: '' or why one could not take it (it is left out, and
// the evaluation runs on fewer engines)}. Evaluations touch none of a step's buffers, so they
// neither wait for a step's calls nor hold the next step back.
export async function evalBegin(hs, bytes, name, text, max) {
  const got = await Promise.allSettled(
    hs.map(async (helper) => {
      const m = await helper.load_model(bytes, 'a copy of the page engine’s model');
      await helper.eval_begin(m.slot, name, text, max);
      return helper;
    }),
  );
  const ready = got.filter((g) => g.status === 'fulfilled').map((g) => g.value);
  const no = got.find((g) => g.status === 'rejected');
  return { ready, why: no ? (no.reason && no.reason.message) || String(no.reason) : '' };
}

// Questions [first, end) of the evaluation begun on `helper` (evalBegin): eval_part's block.
export const evalPart = (helper, first, end) => helper.eval_part(first, end);
