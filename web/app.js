// The page's entry: find WebGPU, load the wasm module, describe the adapter, start the training
// page (web/page.js) and the Benchmark card (web/page/bench.js), and keep the kernel-checks card
// (run on demand, or at once with ?checks=1).
// State for automated tests lives in window.__checks = {done, passed, failed, rows, error}.
// The wasm module (web/pkg, built by scripts/build-web.sh) is imported dynamically so that a missing
// build shows a message instead of silently stopping this script.
import { startPage, pageUnavailable } from './page.js';
import { startBench, benchUnavailable } from './page/bench.js';

let wasm = null;

const $ = (id) => document.getElementById(id);
const state = (window.__checks = { done: false, passed: 0, failed: 0, rows: [], error: null });

const HELP = `
  <p><strong>This browser offers no WebGPU adapter</strong>, so the kernels cannot run here.</p>
  <ul>
    <li>Chrome or Edge 113+ (WebGPU is on by default on Windows, macOS and ChromeOS)</li>
    <li>Firefox 141+ on Windows</li>
    <li>Safari 26+</li>
    <li>On Linux: start Chrome/Chromium with <code>--enable-unsafe-webgpu</code>
      (and <code>--enable-features=Vulkan</code> where needed), or turn on <code>chrome://flags/#enable-unsafe-webgpu</code>
      and <code>chrome://flags/#enable-vulkan</code></li>
  </ul>`;

function showNotice(html, isError) {
  const n = $('nogpu');
  n.innerHTML = html;
  n.className = isError ? 'notice error' : 'notice';
  n.hidden = false;
}

function fail(message) {
  state.error = message;
  state.done = true;
  $('summary').textContent = 'Error';
  $('summary').className = 'summary bad';
}

const escapeHtml = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);

function bytes(n) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1 && n % 1024 === 0) { n /= 1024; i++; }
  return `${n} ${units[i]}`;
}

// Fill the GPU card from the wasm side's summary plus what the browser itself reports.
function showAdapter(info, browserInfo) {
  const L = info.limits;
  const rows = [
    ['name', info.name],
    ['backend', info.backend],
    ['type', info.device_type],
    ['driver', info.driver || '—'],
  ];
  if (browserInfo) {
    const parts = [browserInfo.vendor, browserInfo.architecture, browserInfo.description].filter(Boolean);
    if (parts.length) rows.push(['browser says', parts.join(' / ') + (browserInfo.isFallbackAdapter ? ' (fallback adapter)' : '')]);
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
  $('gpu-info').hidden = false;
  $('gpu-status').hidden = true;
}

function showRows(rows) {
  const body = $('checks').querySelector('tbody');
  body.innerHTML = rows.map((r) => `
    <tr class="${r.passed ? '' : 'failed'}">
      <td>${escapeHtml(r.op)}</td><td>${escapeHtml(r.case)}</td>
      <td class="num">${r.max_err.toExponential(2)}</td><td class="num">${r.tol.toExponential(0)}</td>
      <td class="${r.passed ? 'ok' : 'bad'}">${r.passed ? '✓ pass' : '✗ FAIL'}</td>
    </tr>`).join('');
  $('checks').hidden = false;
}

async function runChecks() {
  const button = $('run');
  const summary = $('summary');
  button.disabled = true;
  Object.assign(state, { done: false, passed: 0, failed: 0, rows: [], error: null });
  summary.className = 'summary';
  summary.textContent = 'Running… (software GPUs take a while)';
  const t0 = performance.now();
  try {
    const rows = await wasm.run_checks();
    const passed = rows.filter((r) => r.passed).length;
    Object.assign(state, { rows, passed, failed: rows.length - passed });
    showRows(rows);
    const secs = ((performance.now() - t0) / 1000).toFixed(1);
    summary.textContent = `${passed} of ${rows.length} passed (${secs} s)`;
    summary.className = rows.length > 0 && passed === rows.length ? 'summary ok' : 'summary bad';
    state.done = true;
  } catch (e) {
    showNotice(`<p><strong>The checks stopped with an error:</strong> ${escapeHtml(e.message || e)}</p>`, true);
    fail(String(e.message || e));
  } finally {
    button.disabled = false;
  }
}

async function main() {
  // Ask the browser first: it gives the clearest answer when WebGPU is missing or blocked.
  const adapter = navigator.gpu ? await navigator.gpu.requestAdapter().catch(() => null) : null;
  if (!adapter) {
    showNotice(HELP, false);
    pageUnavailable('This browser offers no WebGPU adapter; see the note at the top for browsers and settings that work.');
    benchUnavailable('This browser offers no WebGPU adapter; see the note at the top for browsers and settings that work.');
    $('gpu-status').textContent = navigator.gpu ? 'navigator.gpu exists but requestAdapter() returned no adapter.' : 'navigator.gpu is missing.';
    fail('no WebGPU adapter');
    return;
  }
  try {
    wasm = await import('./pkg/attnlab.js');
    await wasm.default();
  } catch (e) {
    showNotice(`<p><strong>Could not load web/pkg/attnlab.js:</strong> ${escapeHtml(e.message || e)}. Build it with <code>scripts/build-web.sh</code> (or run <code>scripts/serve.sh</code>).</p>`, true);
    pageUnavailable('The wasm module did not load; see the note at the top.');
    benchUnavailable('The wasm module did not load; see the note at the top.');
    fail(String(e.message || e));
    return;
  }
  let info;
  try {
    info = await wasm.adapter_info();
    showAdapter(info, adapter.info);
  } catch (e) {
    showNotice(`<p><strong>Could not open the GPU:</strong> ${escapeHtml(e.message || e)}</p>`, true);
    pageUnavailable(`Could not open the GPU: ${e.message || e}`);
    benchUnavailable(`Could not open the GPU: ${e.message || e}`);
    $('gpu-status').textContent = 'No device.';
    fail(String(e.message || e));
    return;
  }
  $('run').disabled = false;
  $('run').addEventListener('click', runChecks);
  if (new URLSearchParams(location.search).get('checks') === '1') {
    $('checks-card').open = true;
    runChecks();
  }
  startPage(wasm, info, adapter.info);
  startBench(wasm, info, adapter.info);
}

main();
