// The Train, Evaluate, Ask and Models cards, started by app.js: data (built-in corpus, served folder, files), the run
// controls, live progress, models (download/upload as the CLI's safetensors), evaluation and Ask. All device work
// (WebGPU or the CPU backend) goes through the wasm exports `page_*` (src/wasm/train.rs), one call at a time (job()).
// A run is driven in chunks of a few steps (about half a second each), so the page stays responsive and Pause is
// simply "no next chunk". The run's exact training state is saved to IndexedDB (web/page/store.js) after a
// chunk when saving is cheap, on pagehide and when the page is hidden, at Pause and on errors, so a
// reload (or a lost device) resumes about where the run was. The cards tell each other what changed
// through web/page/events.js ('models', 'data', 'failed'), not by importing each other's redraws.
// A model ships with the page (web/models/builtin-vanilla.safetensors and its facts in
// builtin-vanilla.json): when this browser has no vanilla model of its own, it is loaded at once, so
// Ask answers on the first visit, and also while a saved run waits to be resumed.
// Test hooks: window.__page (state, losses, results, errors, longTasks, shipped, destroyDevice()).
import * as store from './page/store.js';
import { $, P, S, job, setStatus } from './page/core.js';
import { errText, esc, showBox } from './page/ui.js';
import { applyPreset, showSizing, wireForm } from './page/form.js';
import { measure } from './page/measure.js';
import {
  fetchServed,
  prepareData,
  restoreFiles,
  useEmbedded,
  useServed,
  wireData,
} from './page/data.js';
import { loadShipped, readShippedFacts, showShipped } from './page/shipped.js';
import { offerSaved, redrawChart, savedStatus, wireTraining } from './page/train.js';
import { restoreModels, wireModels } from './page/models.js';
import { wireOnDemand } from './page/ondemand.js';
import { wireAsk } from './page/ask.js';
import { wireEval } from './page/eval.js';
import { on } from './page/events.js';
import { keepFocus } from './page/focus.js';

// Start

// The CPU backend as it runs: its description, and how many engines train each step when more
// than one (the Device card's line, web/app.js, and the Train card's below).
export const cpuEngines = (d, engines) =>
  `${d.describe}${engines > 1 ? ` in each of ${engines} engines` : ''}`;

// `engines`: how many CPU engines train each step (the Device card's count).
export function deviceLine(d, browserInfo, engines = 1) {
  const mib = (n) => `${Math.round(n / 1048576)} MiB`;
  const size = (n) => (n >= 2 ** 30 ? `${+(n / 2 ** 30).toFixed(1)} GiB` : mib(n));
  if (d.kind === 'cpu') {
    return (
      `Device: ${cpuEngines(d, engines)} · largest tensor ${size(d.max_tensor_bytes)}` +
      `${d.budget_bytes ? `, ${size(d.budget_bytes)} for a whole run` : ''} · ${d.reason}`
    );
  }
  const a = d.adapter;
  const L = a.limits;
  const b = browserInfo
    ? [browserInfo.vendor, browserInfo.architecture].filter(Boolean).join(' / ')
    : '';
  return (
    `GPU: ${a.name}` +
    `${b ? ` (${b}${browserInfo.isFallbackAdapter ? ', software fallback' : ''})` : ''}` +
    `${a.backend === 'BrowserWebGpu' ? '' : ` · ${a.backend}`} · ` +
    `limits: storage binding ${mib(L.max_storage_buffer_binding_size)}, buffer ${mib(L.max_buffer_size)}, ` +
    `${L.max_compute_invocations_per_workgroup} ` +
    `invocations/workgroup, ${L.max_storage_buffers_per_shader_stage} storage buffers/stage`
  );
}

// Called by app.js when there is no usable WebGPU: say so where the controls are.
export function pageUnavailable(message) {
  S.status = 'unavailable';
  S.error = message;
  S.ready = true;
  $('train-status').textContent = message;
  $('gpu-line').textContent = 'Device: none';
  $('data-summary').textContent = 'Training needs the wasm module (see the note at the top).';
}

export async function startPage(w, device, browserInfo, workers) {
  P.engine = w;
  S.backend = device.kind;
  // A software WebGPU adapter (no GPU): the presets' notes point to the CPU backend.
  S.softwareAdapter = device.kind !== 'cpu' && !!(device.adapter && device.adapter.software);
  // How many engines a CPU-backend run trains on (web/page/steps.js, web/helpers.js).
  P.workers = workers || null;
  S.workers = P.workers;
  if (device.kind === 'cpu') {
    P.chunkMs = 100;
  }
  const showLine = () => {
    $('gpu-line').textContent = deviceLine(device, browserInfo, P.workers ? P.workers.n : 1);
  };
  showLine();
  on('engines', showLine); // fewer engines than asked: the line says how many run
  P.presets = await P.engine.presets();
  // The presets' forms, read once (the form switches between them without waiting for the engine).
  P.presetForms = {};
  for (const name of ['quick', 'middle', 'full']) {
    for (const scratch of [true, false])
      P.presetForms[`${name}:${scratch}`] = await P.engine.preset_form(name, scratch);
  }
  P.deviceKey =
    `${device.kind}:${device.kind === 'cpu' ? device.describe : device.adapter.name}:` +
    `${browserInfo ? [browserInfo.vendor, browserInfo.architecture].join('/') : ''}`;
  applyPreset('quick');
  wireData();
  wireForm();
  wireTraining();
  wireModels();
  wireEval();
  wireAsk();
  keepFocus();
  wireOnDemand();
  // The demos' E8/E9 read the same registry (src/wasm/models.rs): they only redraw, nothing is
  // copied or uploaded again.
  on('models', () => {
    if (window.attnlabDemos) window.attnlabDemos.modelsChanged();
  });
  window.addEventListener('unhandledrejection', (e) => {
    S.error = errText(e.reason);
  });
  // Test hook: destroy the GPU device between two GPU calls (as a driver reset would take it away).
  S.destroyDevice = () => job('destroy', () => P.engine.debug_destroy_device());
  try {
    P.served = await fetchServed();
    await prepareData();
    if (P.served) useServed();
    else useEmbedded();
    await restoreFiles(); // the student's own files of a last visit, over those
  } catch (e) {
    showBox('data-error', `<p>${esc(errText(e))}</p>`);
  }
  const had = await restoreModels();
  const rec = await offerSaved();
  // No vanilla model of this browser's own (a first visit, or a saved run not finished yet): the
  // shipped model, so Ask answers while the run waits (resuming it does not need it).
  if (!had.includes('vanilla')) {
    await loadShipped(false);
  } else if (S.shipped.state === 'none') {
    S.shipped.state = 'skipped';
    try {
      S.shipped.facts = await readShippedFacts();
    } catch (e) {
      S.shipped.factsError = errText(e);
    }
    showShipped();
  }
  const asks =
    S.shipped.state === 'loaded'
      ? ' The shipped model answers in Ask above; a run’s model replaces it (“Keep for ' +
        'comparison” in the Models card keeps it beside).'
      : '';
  setStatus('idle', `${savedStatus(rec)}${asks}`);
  redrawChart();
  // The device's step times, measured the first time the Train card comes into view (or a run
  // starts), then kept in this browser: the presets' times and the quick preset's size follow.
  new IntersectionObserver((entries, obs) => {
    if (!entries.some((e) => e.isIntersecting)) return;
    obs.disconnect();
    measure(P.deviceKey).then(showSizing, () => {});
  }).observe($('train-card'));
  S.ready = true;
}
