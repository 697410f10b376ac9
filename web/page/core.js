// The training page's shared core: the test hook window.__page (S), the shared mutable state (P),
// the loaded data files, the engine's one queue of wasm calls (job, from web/backend.js) and the
// run state's buttons (setStatus).
import { job, nextTask, running } from '../backend.js';

export { job, running };
export const $ = (id) => document.getElementById(id);
// The run's state is saved after a chunk when saving is cheap next to training: at most every
// SAVE_MIN_MS, and otherwise once the time since the last save is SAVE_COST_RATIO times what the
// last save took (so saving costs at most about 1/SAVE_COST_RATIO of the run), and at least every
// SAVE_EVERY_MS; and on pagehide and when the page is hidden (web/page/train.js).
export const SAVE_EVERY_MS = 30000;
export const SAVE_MIN_MS = 1000;
export const SAVE_COST_RATIO = 10;
// Training chunks last about this long. The engine runs them in its worker (web/backend.js), so the
// page never waits for one; a demo's update does (the one queue), so on the CPU backend they are
// kept short.

// The page's shared mutable state: the engine (the wasm module's exports, web/backend.js), the
// presets and their forms, the run in progress, the served data folder and the built-in corpus
// (read once), the training chunk length.
export const P = {
  engine: null, // the engine's client (web/engine.js)
  presets: null,
  presetForms: null,
  run: null,
  served: null,
  embedded: null,
  embeddedInfo: null,
  chunkMs: 400,
  workers: null,
};

export const S = (window.__page = {
  ready: false,
  status: 'starting',
  kind: null,
  variant: null,
  steps: 0,
  total: 0,
  losses: [],
  chunks: 0,
  saves: 0,
  saveMs: null,
  savedStep: null,
  resumedFrom: null,
  finished: 0,
  error: null,
  deviceLost: null,
  dataSource: null,
  dataError: null,
  modelError: null,
  models: [],
  evalReport: null,
  evalError: null,
  ask: null,
  askError: null,
  longTasks: [],
  msPerStep: null,
  backend: null,
  workers: null,
  parts: 0, // engine calls of steps taken in parts (web/page/steps.js)
  engines: 1, // engines that shared the last step
  stepMs: [], // the last training chunks' times per step, ms
  // The shipped model: state 'none' | 'loading' | 'loaded' (it is the vanilla model now) |
  // 'replaced' (a model trained or loaded here took its place) | 'skipped' (this browser has its own
  // model or a saved run) | 'unavailable' (its files are missing or broken; note says why).
  shipped: { state: 'none', facts: null, note: null, label: null },
  history: [],
  chartSeries: [],
  sizing: null,
  started: null, // what start returned for the latest run
});

export const data = { wiki: null, train: null, dev: null, test: null };

// For the Benchmark card (web/page/bench.js): its device call waits its turn in the same queue, and
// it only starts when no training run is going (status idle or paused).
export const gpuJob = (what, f) => job(what, f);
export const trainingStatus = () => S.status;

export const tick = nextTask;

if ('PerformanceObserver' in window) {
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries())
        S.longTasks.push({
          start: Math.round(e.startTime),
          ms: Math.round(e.duration),
          during: running() ? `${running()} (${S.kind || ''} step ${S.steps})` : '',
        });
    }).observe({ type: 'longtask', buffered: true });
  } catch {
    /* longtask is not supported everywhere */
  }
}

export function setStatus(status, text) {
  S.status = status;
  // Other cards (the Benchmark) follow the training state through this event.
  window.dispatchEvent(new CustomEvent('attnlab-status', { detail: status }));
  if (text !== undefined) $('train-status').textContent = text;
  const running = status === 'running';
  const busy = running || status === 'pausing' || status === 'stopping' || status === 'starting';
  $('btn-pretrain').disabled = busy || status === 'paused' || !P.engine;
  $('btn-finetune').disabled = busy || status === 'paused' || !P.engine;
  $('btn-pause').disabled = !running;
  // Resume also continues a run saved in this browser (the banner at the top offers it too: a
  // reload that restores the scroll position can leave the banner out of sight).
  $('btn-resume').disabled = !(
    status === 'paused' ||
    (status === 'idle' && !$('resume-banner').hidden && !$('resume-saved').hidden)
  );
  $('btn-stop').disabled = !(running || status === 'paused');
  for (const b of ['btn-eval', 'btn-ask']) $(b).disabled = !P.engine || S.models.length === 0;
}
