// The page's entry: open the device (web/backend.js: WebGPU, or the CPU backend without it), fill
// the Device card (backend, why, and the adapter's limits on WebGPU) with its Backend selector,
// start the Train, Evaluate, Ask and Models cards (web/app-train.js) and the Benchmark card (web/page/bench.js), and
// keep the kernel-checks card (run on demand, or at once with ?checks=1).
// State for automated tests lives in window.__checks = {done, passed, failed, rows, error} and
// window.__device = {ready, kind, choice, describe, reason, webgpu, error}.
// A missing wasm build shows a message instead of silently stopping this script. The checks go
// through the engine's one queue (job) like every device call, and their button is off while a
// training run is going (the training card's 'attnlab-status' event), so they never come between
// a run's chunks.
import { cpuEngines, startPage, pageUnavailable } from './app-train.js';
import { startBench, benchUnavailable } from './page/bench.js';
import { startMatmul } from './page/matmul.js';
import { MAX_WORKERS, applyDevice, job, loadDevice, simdOf } from './backend.js';
import { esc as escapeHtml } from './page/ui.js';
import { on } from './page/events.js';

let engine = null;
let checking = false;
let training = false;
// The training card's states in which a run holds the device (web/page/core.js setStatus).
const TRAINING = ['starting', 'running', 'pausing', 'stopping'];
const checksButton = () => {
  $('run').disabled = !engine || checking || training;
};

const $ = (id) => document.getElementById(id);
const state = (window.__checks = { done: false, passed: 0, failed: 0, rows: [], error: null });
const dev = (window.__device = {
  ready: false,
  kind: null,
  choice: null,
  describe: null,
  reason: null,
  webgpu: null,
  workers: null,
  error: null,
});

const HELP =
  `
  <details><summary>Where WebGPU works</summary>
  <ul>
    <li>Chrome or Edge 113+ (WebGPU is on by default on Windows, macOS and ChromeOS)</li>
    <li>Firefox 141+ on Windows</li>
    <li>Safari 26+</li>
    <li>On Linux: start Chrome/Chromium with <code>--enable-unsafe-webgpu</code>
      (and <code>--enable-features=Vulkan</code> where needed), or turn on ` +
  `<code>chrome://flags/#enable-unsafe-webgpu</code>
      and <code>chrome://flags/#enable-vulkan</code></li>
  </ul></details>`;

function showNotice(html, isError) {
  const n = $('nogpu');
  n.innerHTML = html;
  n.className = isError ? 'notice error' : 'notice info';
  n.hidden = false;
}

function fail(message) {
  state.error = message;
  state.done = true;
  $('summary').textContent = 'Error';
  $('summary').className = 'summary bad';
}

function bytes(n) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1 && n % 1024 === 0) {
    n /= 1024;
    i++;
  }
  return `${n} ${units[i]}`;
}

// The adapter's limits (WebGPU only), from the wasm side's summary plus what the browser reports.
function showAdapter(a, browserInfo) {
  const L = a.limits;
  const rows = [
    ['name', a.name],
    ['backend', a.backend],
    ['type', a.device_type],
    ['driver', a.driver || '—'],
  ];
  if (browserInfo) {
    const parts = [browserInfo.vendor, browserInfo.architecture, browserInfo.description].filter(
      Boolean,
    );
    if (parts.length)
      rows.push([
        'browser says',
        parts.join(' / ') + (browserInfo.isFallbackAdapter ? ' (fallback adapter)' : ''),
      ]);
  }
  rows.push(
    ['max storage buffer binding', bytes(L.max_storage_buffer_binding_size)],
    ['max buffer size', bytes(L.max_buffer_size)],
    ['workgroup storage', bytes(L.max_compute_workgroup_storage_size)],
    ['invocations / workgroup', L.max_compute_invocations_per_workgroup],
    ['workgroups / dimension', L.max_compute_workgroups_per_dimension],
    ['storage buffers / stage', L.max_storage_buffers_per_shader_stage],
  );
  $('gpu-info').innerHTML = rows.map(([k, v]) => `<dt>${k}</dt><dd>${escapeHtml(v)}</dd>`).join('');
  $('gpu-details').hidden = false;
}

// The Device card's Workers line and selector: how many engines train on the CPU backend and why
// (web/backend.js workerPlan; web/helpers.js).
function showWorkers(d, w) {
  const sel = $('workers');
  const most = Math.max(MAX_WORKERS, w.n);
  // More engines than cores are offered (a browser may report fewer than there are), marked.
  const note = (i) =>
    i === w.cores
      ? ' (the cores reported)'
      : i > w.cores
        ? ' (more than the cores reported: slower)'
        : '';
  for (let i = 1; i <= most; i++) sel.add(new Option(`${i}${note(i)}`, String(i)));
  sel.value = String(w.choice);
  sel.disabled = d.kind !== 'cpu';
  showEngines(d, w);
  // Fewer engines than asked (a helper did not start: web/page/steps.js fewer): said here.
  on('engines', (now) => showEngines(d, now));
}

// The Device card's engine lines: how many engines run, and how many were asked when fewer run.
function showEngines(d, w) {
  if (d.kind === 'cpu') $('device-line').textContent = `Running on the ${cpuEngines(d, w.n)}`;
  const el = $('device-workers');
  el.textContent =
    d.kind !== 'cpu'
      ? `Workers: 1 (${w.why}).`
      : w.asked > w.n
        ? `Workers: ${w.asked} engines asked, ${w.n} running: ${w.error} (${w.why}).`
        : w.n === 1
          ? `Workers: 1 engine trains each step (${w.why}).`
          : `Workers: ${w.n} engines train each step and share each evaluation's questions (${w.why}).`;
  el.hidden = false;
}

// The Device card: what runs, why, and the selector (WebGPU offered only when the browser has an adapter).
function showDevice(d, probe) {
  const sel = $('backend');
  const gpuOpt = sel.querySelector('option[value=webgpu]');
  if (!probe.adapter) {
    gpuOpt.disabled = true;
    gpuOpt.textContent = 'WebGPU (none in this browser)';
  } else if (probe.fallback) {
    gpuOpt.textContent = 'WebGPU (a software fallback: slower than the CPU)';
  }
  // The CPU option names the build this browser runs (relaxed SIMD or SIMD128), as the status does.
  if (d.kind === 'cpu')
    sel.querySelector('option[value=cpu]').textContent = `CPU (${simdOf(d.describe)})`;
  sel.value = d.choice;
  sel.disabled = false;
  if (d.kind === 'cpu') {
    $('device-line').textContent = `Running on the ${d.describe}`;
  } else {
    // Browsers often give the adapter no name ("WebGPU adapter"); their vendor/architecture then says more.
    const i = probe.info;
    const named =
      d.adapter.name !== 'WebGPU adapter'
        ? d.adapter.name
        : (i && [i.vendor, i.architecture].filter(Boolean).join(' / ')) || d.adapter.name;
    $('device-line').textContent =
      `Running on WebGPU: ${named}${d.adapter.software ? ' (software fallback adapter)' : ''}`;
  }
  $('device-reason').textContent = `Why: ${d.reason}.`;
  if (d.kind === 'cpu') {
    const budget = d.budget_bytes
      ? ` A training run may use up to ${bytes(d.budget_bytes)} of the module's memory; a ` +
        `larger model or batch is refused before it starts, with the estimate.`
      : '';
    $('device-note').textContent =
      `Each engine is a Web Worker with one thread of ${simdOf(d.describe)} and its own copy ` +
      `of the model, so the page answers during training; with more than one (Workers), each ` +
      `takes part of every step's batch and the gradients are added in one fixed order (the ` +
      `same numbers for the same count), and each answers a share of an evaluation's questions ` +
      `(the same predictions as one engine). A large step is taken in parts of a few tenths of ` +
      `a second, so Pause, Stop and a demo's update wait for one part, not a whole ` +
      `step.${budget}`;
    $('device-note').hidden = false;
    $('gpu-details').hidden = true;
  } else {
    $('device-note').hidden = true;
    showAdapter(d.adapter, probe.info);
  }
  $('checks-what').textContent =
    d.kind === 'cpu'
      ? `Each op's CPU-backend kernels (f32, ${simdOf(d.describe)}) against a plain f64 ` +
        `reference on seeded inputs. Error is max |kernel − reference| / (1 + |reference|).`
      : "Each op's WebGPU kernels against a plain f64 CPU reference on seeded inputs. Error is " +
        'max |gpu − cpu| / (1 + |cpu|).';
}

// The Device card's Apply button: a choice in Backend or Workers takes effect only when applied,
// since it reloads the page (arrowing through a selector's options, or a click by mistake, reloads
// nothing). It is offered while a choice differs from what runs, and held back while a training run
// holds the device: a reload then would cut the run off at its last save.
function wireApply(d, w) {
  const backend = $('backend');
  const workers = $('workers');
  const apply = $('device-apply');
  const note = $('device-apply-note');
  const changed = () => ({
    backend: backend.value !== d.choice ? backend.value : undefined,
    workers: !workers.disabled && workers.value !== String(w.choice) ? workers.value : undefined,
  });
  const show = () => {
    const c = changed();
    const pending = c.backend !== undefined || c.workers !== undefined;
    apply.hidden = !pending;
    note.hidden = !pending;
    apply.disabled = training;
    note.textContent = training
      ? 'Pause or stop the training run first: applying reloads the page, which would cut the run off at its last save.'
      : "Applying reloads the page. Your data files, each variant's current model and a paused " +
        'run come back; the models kept for comparison, the evaluations and the answers shown do ' +
        'not.';
  };
  for (const sel of [backend, workers]) sel.addEventListener('change', show);
  window.addEventListener('attnlab-status', show);
  apply.addEventListener('click', () => {
    if (training) return;
    const c = changed();
    apply.disabled = backend.disabled = workers.disabled = true;
    $('device-line').textContent = 'Applying… (the page reloads)';
    applyDevice(c);
  });
}

function showRows(rows) {
  const body = $('checks').querySelector('tbody');
  body.innerHTML = rows
    .map(
      (r) => `
    <tr class="${r.passed ? '' : 'failed'}">
      <td>${escapeHtml(r.op)}</td><td>${escapeHtml(r.case)}</td>
      <td class="num">${r.max_err.toExponential(2)}</td><td class="num">${r.tol.toExponential(0)}</td>
      <td class="${r.passed ? 'ok' : 'bad'}">${r.passed ? '✓ pass' : '✗ FAIL'}</td>
    </tr>`,
    )
    .join('');
  $('checks').hidden = false;
}

async function runChecks() {
  if (checking || training) return;
  const summary = $('summary');
  checking = true;
  checksButton();
  Object.assign(state, { done: false, passed: 0, failed: 0, rows: [], error: null });
  summary.className = 'summary';
  summary.textContent = dev.kind === 'cpu' ? 'Running…' : 'Running… (software GPUs take a while)';
  const t0 = performance.now();
  try {
    const rows = await job('checks', () => engine.run_checks());
    const passed = rows.filter((r) => r.passed).length;
    Object.assign(state, { rows, passed, failed: rows.length - passed });
    showRows(rows);
    const secs = ((performance.now() - t0) / 1000).toFixed(1);
    summary.textContent =
      `${passed} of ${rows.length} passed (${secs} ` +
      `s, ${dev.kind === 'cpu' ? 'CPU backend' : 'WebGPU'})`;
    summary.className = rows.length > 0 && passed === rows.length ? 'summary ok' : 'summary bad';
    state.done = true;
  } catch (e) {
    showNotice(
      `<p><strong>The checks stopped with an error:</strong> ${escapeHtml(e.message || e)}</p>`,
      true,
    );
    fail(String(e.message || e));
  } finally {
    checking = false;
    checksButton();
  }
}

async function main() {
  let got;
  try {
    got = await loadDevice();
  } catch (e) {
    const msg = String((e && e.message) || e);
    showNotice(
      `<p><strong>Could not load web/pkg/attnlab.js:</strong> ${escapeHtml(msg)}. Build it ` +
        `with <code>scripts/build-web.sh</code> (or run <code>scripts/serve.sh</code>).</p>`,
      true,
    );
    pageUnavailable('The wasm module did not load; see the note at the top.');
    benchUnavailable('The wasm module did not load; see the note at the top.');
    $('device-line').textContent = 'No device: the wasm module did not load.';
    Object.assign(dev, { ready: true, error: msg });
    fail(msg);
    return;
  }
  engine = got.engine;
  const d = got.device;
  Object.assign(dev, {
    ready: true,
    kind: d.kind,
    choice: d.choice,
    describe: d.describe,
    reason: d.reason,
    webgpu: got.probe,
    workers: got.workers,
  });
  showDevice(d, got.probe);
  showWorkers(d, got.workers);
  if (d.kind === 'cpu' && !got.probe.adapter) {
    showNotice(
      `<p>No WebGPU here (${escapeHtml(got.probe.why)}): running on ` +
        `the ${escapeHtml(d.describe)}. Everything works; training is slower than on a ` +
        `GPU.</p>${HELP}`,
      false,
    );
  }
  window.addEventListener('attnlab-status', (e) => {
    training = TRAINING.includes(e.detail);
    checksButton();
  });
  wireApply(d, got.workers);
  checksButton();
  $('run').addEventListener('click', runChecks);
  if (new URLSearchParams(location.search).get('checks') === '1') {
    $('checks-card').open = true;
    runChecks();
  }
  startPage(engine, d, got.probe.info, got.workers);
  startBench(engine, d, got.probe.info);
  startMatmul(engine, d);
}

main();
