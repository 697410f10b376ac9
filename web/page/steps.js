// One training step in parts (the engine's step_* methods, src/wasm/steps.rs), for the two
// cases where a step is more than one engine call:
//   - a large step on one engine: micro-batches of `micro_rows` rows (start says how many;
//     about 0.4 s each), each its own call in the page's queue, so Pause, Stop and a demo wait for
//     one micro-batch, not a whole step;
//   - the CPU backend on N engines (web/helpers.js): the page's engine takes the first part of the
//     batch (in micro-batches too), each helper one more part at the same time; their gradients
//     are added on the page's engine in row order (one fixed order: the same N gives the same
//     numbers every time), then one update.
// Pause or Stop in the middle drops the step (the weights change only at its end), so the run
// stays exactly where it was and Resume takes the same step again.
import { P, S, job } from './core.js';
import { emit } from './events.js';
import * as helpers from '../helpers.js';

// Whether a run on this device takes its steps in parts, and on how many engines. The rows per
// micro-batch come from start (a function of the model, batch and device, so a run is cut the
// same way every time); ?micro=R in the address sets them (the tests: R = 0 for whole steps).
// A step shares at most `max_engines` (start's: a small step gains nothing from more).
export const engines = () => (S.backend === 'cpu' && P.workers ? P.workers.n : 1);
const stepEngines = () => Math.min(engines(), (S.started && S.started.max_engines) || 1);
export function microRows(started) {
  const q = new URLSearchParams(location.search).get('micro');
  if (q !== null && /^[0-9]+$/.test(q)) return +q || null;
  return (started && started.micro_rows) || null;
}
export const inParts = (started) => stepEngines() > 1 || !!microRows(started);

// Fewer engines run than were asked for (a helper did not start, or could not start the run):
// the page goes on with `running`, and the Device card says so with the reason ('engines').
export async function fewer(running, why) {
  const asked = P.workers.asked || P.workers.n;
  P.workers = { ...P.workers, n: running, asked, error: why };
  S.workers = P.workers;
  await emit('engines', P.workers);
}

// The helpers for `n` engines in all (web/helpers.js), started as needed; when some do not start,
// the page goes on with fewer (above). Resolves to the helpers running, at most n − 1.
export async function started(n) {
  const hs = await helpers.helpers(n - 1);
  if (hs.length < n - 1)
    await fewer(hs.length + 1, `a helper engine did not start: ${helpers.failure}`);
  return hs;
}

// Start the run's session on the helpers, from the page's engine's state. Goes on with the
// engines that hold it (one when a helper cannot start the run), and says why (fewer).
export async function startHelpers(r) {
  if (stepEngines() <= 1) return;
  try {
    await started(stepEngines());
    if (stepEngines() <= 1) return;
    const state = await job('run_state', () => P.engine.run_state());
    await helpers.startRuns(stepEngines() - 1, r, state);
  } catch (e) {
    await fewer(
      1,
      `the helper engines could not start the run (${(e && e.message) || e}); training on one engine`,
    );
  }
}

// Take one step. `halt()` says whether Pause or Stop was asked for. Resolves to train's chunk
// ({reports, steps, total_steps, done, lr}) or null when the step was dropped.
export async function step(halt) {
  const n = stepEngines();
  S.engines = n;
  const micro = microRows(S.started);
  const W = n > 1 ? helpers.shared('weights', S.started.params) : undefined;
  await helpers.settled();
  const b = await job('train', () => P.engine.with({ into: W }).step_begin(n));
  if (!b) return null;
  const calls = b.parts
    .slice(1)
    .map(([first, end], i) => helpers.part(i, b.weights, b.steps, first, end));
  helpers.track(calls);
  const drop = async () => {
    await job('train', () => P.engine.step_drop());
    return null;
  };
  const [, end0] = b.parts[0];
  let done = b.parts[0][0];
  while (done < end0) {
    if (halt()) return drop();
    const rows = micro ? Math.min(micro, end0 - done) : end0 - done;
    done = await job('train', () => P.engine.step_rows(rows));
    S.parts += 1;
  }
  const got = await Promise.all(calls);
  if (halt()) return drop();
  for (let i = 0; i < got.length; i++) {
    const [first, end] = b.parts[i + 1];
    const g = got[i].grads;
    // Moved, not copied, when it is a plain ArrayBuffer (a view of a shared buffer needs neither).
    const transfer = g.buffer instanceof ArrayBuffer ? [g.buffer] : [];
    await job('train', () => P.engine.with({ transfer }).step_add(g, got[i].loss, first, end));
  }
  return job('train', () => P.engine.step_end());
}
