// The Benchmark card: runs the wasm export bench (src/wasm/bench.rs -> attnlab::bench, the same
// workloads as the native `bench` binary) and shows GFLOP/s per matrix product and ms/step and
// tokens/s per attention variant. The call goes through the engine's one job queue (web/backend.js),
// and the button is only on while no training run is going, so the timings never share the device
// with other work of this page.
// Test hook: window.__bench = {ready, running, done, result, error, inputError, adapter}.
import { gpuJob, trainingStatus } from './core.js';

const $ = (id) => document.getElementById(id);
import { esc } from './ui.js';
const errText = (e) => String((e && e.message) || e);

// The ranges bench accepts (src/wasm/bench.rs MAX_ROWS, MAX_REPEATS).
const LIMITS = { rows: [1, 64], repeats: [1, 20] };

const B = (window.__bench = {
  ready: false,
  running: false,
  done: false,
  result: null,
  error: null,
  inputError: null,
  adapter: null,
});

let engine = null;
let kind = null; // 'gpu' or 'cpu' (the CPU backend records no dispatches)

function showError(html) {
  const el = $('bench-error');
  if (html) {
    el.innerHTML = html;
    el.hidden = false;
  } else {
    el.hidden = true;
    el.innerHTML = '';
  }
}

// A whole number in [lo, hi] from an input's text, or an error message naming the field.
function readInt(id, name) {
  const [lo, hi] = LIMITS[name];
  const text = $(id).value.trim();
  if (!/^\d+$/.test(text))
    return {
      error: `${name} must be a whole number from ${lo} to ${hi}${text ? `, not “${text}”` : ''}`,
    };
  const v = Number(text);
  if (v < lo || v > hi) return { error: `${name} must be from ${lo} to ${hi}, not ${v}` };
  return { value: v };
}

const idle = () => ['idle', 'paused'].includes(trainingStatus());

function refreshButton() {
  $('btn-bench').disabled = !engine || B.running || !idle();
}

const fmtNum = (x, digits) =>
  Number.isFinite(x)
    ? x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : String(x);

function showResult(r) {
  $('bench-matmul').querySelector('tbody').innerHTML = r.matmul
    .map(
      (m) =>
        `
    <tr><td>${esc(m.name)}</td><td class="num">${fmtNum(m.gflop, 3)}</td><td ` +
        `class="num">${fmtNum(m.ms, 1)}</td><td class="num">${fmtNum(m.gflops, 2)}</td></tr>`,
    )
    .join('');
  $('bench-steps').querySelector('tbody').innerHTML = r.steps
    .map(
      (s) =>
        `
    <tr><td>${esc(s.variant)}</td><td class="num">${s.rows} × ${s.t}</td><td ` +
        `class="num">${fmtNum(s.ms_per_step, 1)}</td><td ` +
        `class="num">${fmtNum(s.tokens_per_s, 0)}</td><td ` +
        `class="num">${kind === 'cpu' ? '—' : s.dispatches_per_step}</td><td ` +
        `class="num">${fmtNum(s.peak_mib, 2)}</td></tr>`,
    )
    .join('');
  $('bench-matmul').hidden = false;
  $('bench-steps').hidden = false;
}

async function runBench() {
  if (B.running) return;
  showError(null);
  B.inputError = null;
  const rows = readInt('bench-rows', 'rows');
  const repeats = readInt('bench-repeats', 'repeats');
  const bad = [rows.error, repeats.error].filter(Boolean);
  if (bad.length) {
    B.inputError = bad.join('; ');
    showError(`<p>${esc(B.inputError)}.</p>`);
    $('bench-status').textContent = 'Nothing ran: fix the input above.';
    // The last run's tables would read as this input's results.
    $('bench-matmul').hidden = true;
    $('bench-steps').hidden = true;
    return;
  }
  if (!idle()) {
    B.inputError = 'a training run is going';
    showError(
      '<p>A training run is going; pause or stop it first, so that the benchmark has the device to itself.</p>',
    );
    return;
  }
  const quick = $('bench-size').value === 'quick';
  Object.assign(B, { running: true, done: false, result: null, error: null });
  refreshButton();
  const t0 = performance.now();
  $('bench-status').textContent =
    `Running: ${rows.value} rows, ${repeats.value} ` +
    `repeat${repeats.value === 1 ? '' : 's'}, ${quick ? 'quick' : 'full'} matmul sizes…`;
  try {
    const call = () =>
      engine.bench(rows.value, repeats.value, quick, (what) => {
        $('bench-status').textContent =
          `Running ${what}… (${((performance.now() - t0) / 1000).toFixed(0)} s so far)`;
      });
    // The engine's one queue (web/backend.js) holds the demos' calls too: none lands inside the
    // timed loops.
    const r = await gpuJob('bench', call);
    B.result = r;
    showResult(r);
    $('bench-status').textContent =
      `Done in ${r.seconds.toFixed(1)} s (${rows.value} rows, ${repeats.value} ` +
      `repeat${repeats.value === 1 ? '' : 's'} after a warm-up, ${quick ? 'quick' : 'full'} ` +
      `matmul sizes).`;
    const repeatsHow =
      kind === 'cpu'
        ? 'run back to back on the engine’s thread, a Web Worker ' +
          '(no dispatches: the CPU backend runs each op as it is called)'
        : 'recorded back to back and waited for once';
    $('bench-note').innerHTML =
      `Wall clock (<code>performance.now()</code>) ` +
      `on ${B.adapter ? `the WebGPU adapter ${esc(B.adapter)}` : esc(r.adapter)}: one warm-up, ` +
      `then the repeats ${repeatsHow}. ` +
      `Same workloads as the command line's ` +
      `<code>bench ${quick ? '--quick ' : ''}--repeats ${repeats.value}</code> and <code>bench ` +
      `--step ${rows.value} --repeats ${repeats.value}</code>.`;
  } catch (e) {
    B.error = errText(e);
    showError(`<p><strong>The benchmark stopped:</strong> ${esc(B.error)}</p>`);
    $('bench-status').textContent = 'Stopped with an error.';
  } finally {
    B.running = false;
    B.done = true;
    refreshButton();
  }
}

// Called by app.js when the wasm module did not load.
export function benchUnavailable(message) {
  $('bench-status').textContent = message;
  B.ready = true;
}

export function startBench(w, device, browserInfo) {
  engine = w;
  kind = device.kind;
  if (browserInfo && device.kind === 'gpu') {
    const parts = [browserInfo.vendor, browserInfo.architecture].filter(Boolean).join(' / ');
    B.adapter = parts
      ? parts + (browserInfo.isFallbackAdapter ? ' (software fallback)' : '')
      : null;
  }
  $('bench-status').textContent =
    device.kind === 'gpu'
      ? `Ready on ${B.adapter ? `the WebGPU adapter ${B.adapter}` : device.adapter.name}.`
      : `Ready on the ${device.describe}.`;
  $('btn-bench').addEventListener('click', runBench);
  for (const id of ['bench-rows', 'bench-repeats']) {
    $(id).addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !$('btn-bench').disabled) runBench();
    });
  }
  // Training starts and stops elsewhere on the page: follow its status (setStatus in page/core.js fires it).
  window.addEventListener('attnlab-status', refreshButton);
  refreshButton();
  B.ready = true;
}
