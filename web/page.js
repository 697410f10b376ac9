// The training page: data (built-in corpus, served folder, files), the run controls, live progress,
// models (download/upload as the CLI's safetensors), evaluation and Ask. All GPU work goes through
// the wasm exports `page_*` (src/web/page.rs), one call at a time (job()). A run is driven in chunks
// of a few steps (about half a second each), so the page stays responsive and Pause is simply "no
// next chunk". The run's exact training state is saved to IndexedDB (web/page/store.js) at Pause,
// every 30 s and on errors, so a reload (or a lost device) resumes where the run was.
// A model ships with the page (web/models/builtin-vanilla.safetensors and its facts in
// builtin-vanilla.json): when this browser has no vanilla model of its own and no saved run, it is
// loaded at once, so Ask answers on the first visit.
// Test hooks: window.__page (state, losses, results, errors, longTasks, shipped, destroyDevice()).
import * as store from './page/store.js';
import { drawLoss } from './page/chart.js';
import { drawMap, drawThumb } from './page/heatmap.js';

const $ = (id) => document.getElementById(id);
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
const errText = (e) => String((e && e.message) || e);
const SAVE_EVERY_MS = 30000;
// Training chunks last about this long. On the CPU backend a chunk runs on the page's own thread,
// so it is kept short: clicks and redraws wait for the chunk to end.
let CHUNK_MS = 400;

const S = (window.__page = {
  ready: false, status: 'starting', kind: null, variant: null, steps: 0, total: 0, losses: [],
  chunks: 0, saves: 0, savedStep: null, resumedFrom: null, finished: 0, error: null, deviceLost: null,
  dataSource: null, dataError: null, modelError: null, models: [], evalReport: null, evalError: null,
  ask: null, askError: null, longTasks: [], msPerStep: null, activity: '', backend: null,
  // The shipped model: state 'none' | 'loading' | 'loaded' (it is the vanilla model now) |
  // 'replaced' (a model trained or loaded here took its place) | 'skipped' (this browser has its own
  // model or a saved run) | 'unavailable' (its files are missing or broken; note says why).
  shipped: { state: 'none', facts: null, note: null, label: null },
  started: null, // what page_start returned for the latest run
});

let wasm = null;
let presets = null;
let queue = Promise.resolve();
let run = null; // {kind, variant, spec, wikiName, wiki, tsvName, tsv, losses, total, label}
let lastSave = 0;
let served = null;
let embedded = null;
const data = { wiki: null, train: null, dev: null, test: null };

// One wasm GPU call at a time (training chunks, evaluation and questions interleave between chunks).
// `what` names the call in S.activity, which tags the long tasks the observer records.
function job(what, f) {
  const g = async () => {
    // A macrotask boundary before every GPU call: wasm-bindgen futures and IndexedDB callbacks run
    // as microtasks, so without it a click → restore → page_start → first training step chain ran as
    // one 110–250 ms task on a software adapter.
    await tick();
    S.activity = what;
    try { return await f(); } finally { S.activity = ''; }
  };
  const p = queue.then(g, g);
  queue = p.catch(() => {});
  return p;
}

// For the Benchmark card (web/page/bench.js): its GPU call waits its turn in the same queue, and
// it only starts when no training run is going (status idle or paused).
export const gpuJob = (what, f) => job(what, f);
export const trainingStatus = () => S.status;

const tick = () => new Promise((r) => setTimeout(r, 0));

if ('PerformanceObserver' in window) {
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) S.longTasks.push({ start: Math.round(e.startTime), ms: Math.round(e.duration), during: S.activity ? `${S.activity} (${S.kind || ''} step ${S.steps})` : '' });
    }).observe({ type: 'longtask', buffered: true });
  } catch { /* longtask is not supported everywhere */ }
}

// A prediction as text, with an empty or all-blank one said in words (an untrained model often
// answers 32 spaces, which would otherwise look like a missing cell).
function showPred(p) {
  if (!p) return '<span class="muted">(no answer)</span>';
  if (!p.trim()) return `<span class="muted">(${p.length} space${p.length === 1 ? '' : 's'})</span>`;
  return esc(p);
}

function showBox(id, html) {
  const el = $(id);
  if (html) { el.innerHTML = html; el.hidden = false; } else { el.hidden = true; el.innerHTML = ''; }
}

// ---------------------------------------------------------------------------------------------
// Data

const ROLES = {
  wiki: 'pretraining text',
  train: 'finetuning questions',
  dev: 'dev questions',
  test: 'test questions',
};

function roleFor(name) {
  const n = name.toLowerCase();
  if (n.includes('wiki') || n.endsWith('.txt')) return 'wiki';
  if (n.includes('train')) return 'train';
  if (n.includes('dev')) return 'dev';
  if (n.includes('test')) return 'test';
  return null;
}

// Check a file's text for its role; throws the library's message (file:line: what is wrong).
function check(role, name, text) {
  if (role === 'wiki') {
    const i = wasm.page_check_corpus(name, text);
    return `${i.documents.toLocaleString()} lines, ${i.chars.toLocaleString()} characters, vocabulary ${i.vocab_size}`;
  }
  const i = wasm.page_check_tsv(name, text, role === 'train');
  return `${i.rows.toLocaleString()} questions${i.answers ? ' with answers' : ' (no answers)'}`;
}

function setData(role, name, text) {
  const info = check(role, name, text);
  data[role] = { name, text, info };
}

function showData() {
  const body = $('data-table').querySelector('tbody');
  body.innerHTML = Object.keys(ROLES).map((r) => {
    const f = data[r];
    return `<tr><td>${ROLES[r]}</td><td>${f ? esc(f.name) : '<span class="muted">none</span>'}</td><td>${f ? esc(f.info) : ''}</td></tr>`;
  }).join('');
  const src = { embedded: 'The built-in generated corpus (made-up people with biographies and birthplaces, the course files’ format and sizes) is loaded.',
    served: 'Using the data folder the server offers (/data).', files: 'Using your files (they stay in this browser).' }[S.dataSource] || '';
  $('data-summary').textContent = src;
  $('use-served').hidden = !served;
}

async function decodeFile(file) {
  const buf = await file.arrayBuffer();
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(buf);
  } catch {
    throw new Error(`${file.name} is not UTF-8 text; save it as UTF-8 (the course files are)`);
  }
}

async function loadFiles(files, forced) {
  const msgs = [];
  for (const file of files) {
    const role = forced || roleFor(file.name);
    if (!role) {
      msgs.push(`${file.name}: cannot tell which file this is; name it like wiki.txt, birth_places_train.tsv, birth_dev.tsv or birth_test_inputs.tsv, or use the picker for its role`);
      continue;
    }
    try {
      setData(role, file.name, await decodeFile(file));
      S.dataSource = 'files';
    } catch (e) {
      msgs.push(errText(e));
    }
  }
  S.dataError = msgs.length ? msgs.join('\n') : null;
  showBox('data-error', msgs.length ? msgs.map((m) => `<p>${esc(m)}</p>`).join('') : null);
  showData();
}

function useEmbedded() {
  if (!embedded) embedded = wasm.page_default_corpus();
  setData('wiki', 'built-in wiki.txt', embedded.wiki);
  setData('train', 'built-in birth_places_train.tsv', embedded.train);
  setData('dev', 'built-in birth_dev.tsv', embedded.dev);
  setData('test', 'built-in birth_test.tsv', embedded.test);
  S.dataSource = 'embedded';
  showBox('data-error', null);
  showData();
}

// With `serve.py --data DIR` the server lists the course files at data/manifest.json; without it
// that is a 404 and the built-in corpus stays.
async function fetchServed() {
  let manifest;
  try {
    const r = await fetch('data/manifest.json', { cache: 'no-store' });
    if (!r.ok) return null;
    manifest = await r.json();
  } catch {
    return null;
  }
  const out = {};
  for (const name of (manifest && manifest.files) || []) {
    const role = roleFor(name);
    if (!role || out[role]) continue;
    const r = await fetch(`data/${encodeURIComponent(name)}`, { cache: 'no-store' });
    if (r.ok) out[role] = { name, text: await r.text() };
  }
  return Object.keys(out).length ? out : null;
}

function useServed() {
  const msgs = [];
  useEmbedded(); // roles the folder lacks keep the built-in file
  for (const [role, f] of Object.entries(served)) {
    try { setData(role, f.name, f.text); } catch (e) { msgs.push(errText(e)); }
  }
  S.dataSource = 'served';
  S.dataError = msgs.length ? msgs.join('\n') : null;
  showBox('data-error', msgs.length ? msgs.map((m) => `<p>${esc(m)}</p>`).join('') : null);
  showData();
}

function wireData() {
  for (const role of Object.keys(ROLES)) {
    const input = $(`file-${role}`);
    input.addEventListener('change', () => { if (input.files.length) loadFiles([...input.files], role); input.value = ''; });
  }
  const drop = $('drop');
  for (const ev of ['dragenter', 'dragover']) drop.addEventListener(ev, (e) => { e.preventDefault(); drop.classList.add('over'); });
  for (const ev of ['dragleave', 'drop']) drop.addEventListener(ev, () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => { e.preventDefault(); loadFiles([...e.dataTransfer.files]); });
  $('use-embedded').addEventListener('click', useEmbedded);
  $('use-served').addEventListener('click', () => served && useServed());
}

// ---------------------------------------------------------------------------------------------
// Form

const FIELDS = ['n_layer', 'n_head', 'n_embd', 'dropout', 'seed', 'pre_epochs', 'pre_batch', 'pre_lr', 'max_steps', 'ft_epochs', 'ft_batch', 'ft_lr'];

function presetValues(name) {
  const p = presets;
  if (name === 'full') {
    return { ...p.assignment, dropout: p.dropout, seed: 0, pre_epochs: p.pretrain.epochs, pre_batch: p.pretrain.batch, pre_lr: p.pretrain.lr,
      max_steps: '', ft_epochs: $('h-from').value === 'scratch' ? p.finetune_scratch.epochs : p.finetune_pretrained.epochs,
      ft_batch: p.finetune_pretrained.batch, ft_lr: p.finetune_pretrained.lr };
  }
  // Quick demo: the tiny model, enough epochs to see the loss fall and the answers take shape.
  return { ...p.tiny, dropout: p.dropout, seed: 0, pre_epochs: 40, pre_batch: p.pretrain.batch, pre_lr: p.pretrain.lr, max_steps: '',
    ft_epochs: 20, ft_batch: p.finetune_pretrained.batch, ft_lr: p.finetune_pretrained.lr };
}

const NOTES = {
  quick: 'Tiny model (2 layers, 4 heads, width 64), 40 pretraining epochs: about 12 TFLOP of work, so minutes on a laptop GPU by our estimate, but about half a day on a software adapter. Edit anything below.',
  full: 'The assignment’s run.py settings: pretraining is 650 epochs (about two hours on a datacentre GPU).',
  custom: 'Your own settings.',
};

function applyPreset(name) {
  const v = presetValues(name);
  for (const f of FIELDS) $(`h-${f}`).value = v[f];
  $('preset').value = name;
  $('preset-note').textContent = NOTES[name];
}

function readSpec(kind) {
  const num = (f, label, { int = true, optional = false } = {}) => {
    const raw = $(`h-${f}`).value.trim();
    if (raw === '' && optional) return null;
    const x = Number(raw);
    if (raw === '' || !Number.isFinite(x) || x <= 0 || (int && !Number.isInteger(x))) {
      throw new Error(`${label} is “${raw}”; give a ${int ? 'whole number of at least 1' : 'positive number such as 6e-4'}`);
    }
    return x;
  };
  // Dropout (the command line's --dropout): 0 turns it off, so 0 is allowed here; 1 would drop everything.
  const dropRaw = $('h-dropout').value.trim();
  const dropout = Number(dropRaw);
  if (dropRaw === '' || !Number.isFinite(dropout) || dropout < 0 || dropout >= 1) {
    throw new Error(`dropout is “${dropRaw}”; give a probability of at least 0 and below 1 (0 turns dropout off; the assignment uses ${presets.dropout})`);
  }
  const seedRaw = $('h-seed').value.trim() || '0';
  const seed = Number(seedRaw);
  if (!Number.isInteger(seed) || seed < 0 || seed > 4294967295) throw new Error(`seed is “${seedRaw}”; give a whole number from 0 to 4294967295`);
  const pre = kind === 'pretrain';
  const spec = {
    kind,
    variant: document.querySelector('input[name=variant]:checked').value,
    n_layer: num('n_layer', 'layers'), n_head: num('n_head', 'heads'), n_embd: num('n_embd', 'width'),
    epochs: num(pre ? 'pre_epochs' : 'ft_epochs', `${kind} epochs`),
    batch: num(pre ? 'pre_batch' : 'ft_batch', `${kind} batch`),
    lr: num(pre ? 'pre_lr' : 'ft_lr', `${kind} learning rate`, { int: false }),
    max_steps: num('max_steps', 'max steps', { optional: true }),
    seed,
    dropout,
    from_model: !pre && $('h-from').value === 'model',
  };
  if (spec.n_embd % spec.n_head) throw new Error(`width ${spec.n_embd} is not divisible by heads ${spec.n_head}; pick a width that is a multiple of the head count`);
  return spec;
}

function wireForm() {
  $('preset').addEventListener('change', () => applyPreset($('preset').value));
  for (const f of FIELDS) {
    $(`h-${f}`).addEventListener('input', () => { $('preset').value = 'custom'; $('preset-note').textContent = NOTES.custom; });
  }
  $('h-from').addEventListener('change', () => {
    if ($('preset').value === 'full') applyPreset('full');
  });
}

// ---------------------------------------------------------------------------------------------
// Training

const fmt = {
  loss: (x) => (!Number.isFinite(x) ? String(x) : Math.abs(x) >= 1e4 ? x.toExponential(3) : x.toFixed(4)),
  lr: (x) => x.toExponential(3),
  int: (x) => Math.round(x).toLocaleString(),
  time: (s) => {
    if (!Number.isFinite(s)) return '—';
    s = Math.max(0, Math.round(s));
    if (s < 60) return `${s} s`;
    if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
    return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
  },
  clock: (t) => new Date(t).toLocaleTimeString(),
};

function setStatus(status, text) {
  S.status = status;
  // Other cards (the Benchmark) follow the training state through this event.
  window.dispatchEvent(new CustomEvent('attnlab-status', { detail: status }));
  if (text !== undefined) $('train-status').textContent = text;
  const running = status === 'running';
  const busy = running || status === 'pausing' || status === 'stopping' || status === 'starting';
  $('btn-pretrain').disabled = busy || status === 'paused' || !wasm;
  $('btn-finetune').disabled = busy || status === 'paused' || !wasm;
  $('btn-pause').disabled = !running;
  $('btn-resume').disabled = status !== 'paused';
  $('btn-stop').disabled = !(running || status === 'paused');
  for (const b of ['btn-eval', 'btn-ask']) $(b).disabled = !wasm || S.models.length === 0;
}

function redrawChart() {
  drawLoss($('chart'), run ? run.losses : S.losses, run ? run.total : S.total);
}

function showProgress(last, chunkTps) {
  const total = run.total || 1;
  $('train-progress').max = total;
  $('train-progress').value = S.steps;
  const eta = S.msPerStep ? ((total - S.steps) * S.msPerStep) / 1000 : NaN;
  const ep = last ? `epoch ${last.epoch} of ${last.epochs} · ` : '';
  $('progress-text').textContent = `${run.kind} ${run.variant}: ${ep}step ${S.steps.toLocaleString()} of ${total.toLocaleString()} · ETA ${fmt.time(eta)}`;
  if (last) {
    $('s-loss').textContent = fmt.loss(last.loss);
    $('s-lr').textContent = fmt.lr(last.lr);
  }
  if (chunkTps) $('s-tps').textContent = fmt.int(chunkTps);
  if (S.msPerStep) $('s-ms').textContent = S.msPerStep.toFixed(S.msPerStep < 10 ? 2 : 0);
  redrawChart();
}

async function startRun(kind, record) {
  if (!wasm || ['running', 'pausing', 'stopping', 'starting'].includes(S.status)) return;
  showBox('train-error', null);
  S.error = null;
  let r;
  try {
    if (record) {
      r = { ...record, losses: record.losses || [] };
    } else {
      const spec = readSpec(kind);
      if (!data.wiki) throw new Error('there is no pretraining text; load wiki.txt or use the built-in corpus');
      if (kind === 'finetune' && !data.train) throw new Error('there is no finetuning TSV; load birth_places_train.tsv or use the built-in corpus');
      const from = kind === 'finetune' ? (spec.from_model ? 'from the current model' : 'from scratch') : '';
      r = { kind, variant: spec.variant, spec, wikiName: data.wiki.name, wiki: data.wiki.text,
        tsvName: data.train ? data.train.name : '', tsv: data.train ? data.train.text : '', losses: [],
        label: `${kind === 'pretrain' ? 'pretrained' : 'finetuned'} here${from ? ` ${from}` : ''}` };
    }
  } catch (e) {
    showBox('train-error', `<p>${esc(errText(e))}</p>`);
    S.error = errText(e);
    return;
  }
  setStatus('starting', record ? `Restoring the saved ${r.kind} run…` : `Preparing to ${r.kind}…`);
  try {
    const st = await job('start', () => wasm.page_start(r.spec, r.wikiName, r.wiki, r.tsvName, r.tsv, record ? record.state : undefined));
    r.total = st.total_steps;
    run = r;
    Object.assign(S, { kind: r.kind, variant: r.variant, steps: st.steps, total: st.total_steps, losses: r.losses, msPerStep: null });
    S.resumedFrom = record ? st.steps : null;
    S.started = st;
    $('s-lr').textContent = fmt.lr(st.lr);
    const what = `${r.variant} model, ${fmt.int(st.params)} parameters, vocabulary ${st.vocab_size}, ${st.per_epoch} steps per epoch`;
    setStatus('running', record ? `Resumed ${r.kind} at step ${st.steps} (${what}).` : `${r.kind === 'pretrain' ? 'Pretraining' : 'Finetuning'} the ${what}.`);
    $('resume-banner').hidden = true;
    if (!record) { lastSave = 0; await saveRun(); } else { lastSave = performance.now(); }
    showProgress(null);
    loop();
  } catch (e) {
    run = null;
    setStatus('idle', 'Not training.');
    await failed(e, 'could not start');
  }
}

async function loop() {
  let n = 1;
  while (run && S.status === 'running') {
    const t0 = performance.now();
    const before = S.steps;
    let chunk;
    try {
      // The loss is read back every 2 steps: between two readbacks the main thread records steps
      // without yielding, and on a software adapter 4 steps came close to the 200 ms long-task bar.
      chunk = await job('train', () => wasm.page_train(n, Math.min(n, 2)));
    } catch (e) {
      await failed(e, 'training stopped');
      return;
    }
    const dt = performance.now() - t0;
    const did = chunk.steps - before;
    S.steps = chunk.steps;
    S.chunks += 1;
    if (did > 0) {
      const ms = dt / did;
      S.msPerStep = S.msPerStep ? 0.7 * S.msPerStep + 0.3 * ms : ms;
      n = Math.max(1, Math.min(256, Math.round(CHUNK_MS / S.msPerStep)));
    }
    for (const rep of chunk.reports) run.losses.push([rep.step, rep.loss]);
    const last = chunk.reports[chunk.reports.length - 1];
    showProgress(last, last ? last.tokens_per_s : 0);
    if (chunk.done) { await finishRun('finished'); return; }
    if (performance.now() - lastSave > SAVE_EVERY_MS) await saveRun();
    await tick();
  }
  if (!run) return;
  if (S.status === 'pausing') {
    await saveRun();
    setStatus('paused', `Paused at step ${S.steps} of ${run.total}; the run is saved in this browser. Resume continues it exactly.`);
  } else if (S.status === 'stopping') {
    await finishRun('stopped');
  }
}

// Keep the run's exact state in IndexedDB (errors here are shown but do not stop training).
async function saveRun() {
  if (!run) return;
  try {
    const state = await job('run_state', () => wasm.page_run_state());
    const rec = { ...run, state, steps: S.steps, total: run.total, savedAt: Date.now() };
    await store.put('run', rec);
    lastSave = performance.now();
    S.saves += 1;
    S.savedStep = S.steps;
    $('s-saved').textContent = `step ${S.steps} at ${fmt.clock(rec.savedAt)}`;
  } catch (e) {
    lastSave = performance.now();
    $('s-saved').textContent = `not saved: ${errText(e)}`;
  }
}

async function finishRun(how) {
  const r = run;
  try {
    const label = `${r.label}, ${S.steps} steps${how === 'stopped' ? ' (stopped early)' : ''}`;
    const bytes = await job('finish', () => wasm.page_finish(label));
    run = null;
    await store.put(`model:${r.variant}`, { bytes, label, savedAt: Date.now() }).catch(() => {});
    await store.del('run').catch(() => {});
    S.finished += 1;
    const lastLoss = r.losses.length ? r.losses[r.losses.length - 1][1] : NaN;
    S.losses = r.losses;
    S.total = r.total;
    setStatus('idle', `${r.kind === 'pretrain' ? 'Pretraining' : 'Finetuning'} ${how}: ${S.steps} steps, last loss ${fmt.loss(lastLoss)}. ` +
      (r.kind === 'pretrain' ? 'Next: Finetune (it starts from this model).' : 'Next: Evaluate, or Ask below.'));
    handToDemos(bytes);
    refreshModels();
    if (r.kind === 'pretrain') $('h-from').value = 'model';
  } catch (e) {
    await failed(e, 'could not keep the model');
  }
}

// A run error: a lost device, a non-finite loss, or anything else. The saved state stays offered.
async function failed(e, what) {
  const msg = errText(e);
  const lost = wasm.page_device_lost();
  run = null;
  if (lost) {
    S.deviceLost = lost;
    wasm.page_reset_device();
    S.models = [];
    refreshModels();
  }
  S.error = lost ? `device lost: ${lost}` : msg;
  const saved = await store.get('run').catch(() => null);
  const keep = saved ? ` The last checkpoint (step ${saved.steps} of ${saved.total}, saved ${fmt.clock(saved.savedAt)}) is kept: “Resume training” above continues from it.` : '';
  const head = lost ? `The GPU device was lost (${lost}); ${what}.`
    : msg.toLowerCase().startsWith(what) ? `${msg[0].toUpperCase()}${msg.slice(1)}.` : `${what[0].toUpperCase()}${what.slice(1)}: ${msg}`;
  showBox('train-error', `<p>${esc(head)}${esc(keep)}</p>`);
  setStatus('idle', lost ? 'The GPU device was lost.' : 'Not training.');
  await offerSaved();
}

async function handToDemos(bytes) {
  try { if (window.attnlabDemos) await window.attnlabDemos.setModel(bytes); } catch { /* the demos report their own errors */ }
}

async function offerSaved() {
  const rec = await store.get('run').catch(() => null);
  if (!rec || run) { $('resume-banner').hidden = true; return rec; }
  $('resume-text').textContent = `A ${rec.kind} run of the ${rec.variant} model is saved in this browser: step ${rec.steps} of ${rec.total}, saved ${new Date(rec.savedAt).toLocaleString()}.`;
  $('resume-banner').hidden = false;
  if (!S.losses.length) { S.losses = rec.losses || []; S.total = rec.total; redrawChart(); }
  return rec;
}

async function resumeSaved() {
  const rec = await store.get('run').catch(() => null);
  if (!rec) { $('resume-banner').hidden = true; return; }
  if (S.deviceLost) await restoreModels(); // the models lived on the lost device
  S.deviceLost = null;
  await startRun(rec.kind, rec);
}

function wireTraining() {
  $('btn-pretrain').addEventListener('click', () => startRun('pretrain'));
  $('btn-finetune').addEventListener('click', () => startRun('finetune'));
  $('btn-pause').addEventListener('click', () => { if (S.status === 'running') setStatus('pausing', 'Pausing after this chunk…'); });
  $('btn-resume').addEventListener('click', () => {
    if (S.status !== 'paused' || !run) return;
    setStatus('running', `Continuing ${run.kind} from step ${S.steps}.`);
    loop();
  });
  $('btn-stop').addEventListener('click', () => {
    if (S.status === 'running') setStatus('stopping', 'Stopping after this chunk…');
    else if (S.status === 'paused') { setStatus('stopping', 'Stopping…'); finishRun('stopped'); }
  });
  $('resume-saved').addEventListener('click', resumeSaved);
  $('discard-saved').addEventListener('click', async () => {
    await store.del('run').catch(() => {});
    $('resume-banner').hidden = true;
  });
  new ResizeObserver(() => redrawChart()).observe($('chart'));
}

// ---------------------------------------------------------------------------------------------
// Models

function refreshModels() {
  try { S.models = wasm.page_models(); } catch { S.models = []; }
  const body = $('models').querySelector('tbody');
  body.innerHTML = S.models.length ? S.models.map((m) => `<tr>
      <td>${esc(m.variant)}</td>
      <td>${m.n_layer} layers × ${m.n_head} heads × width ${m.n_embd} (${fmt.int(m.params)} parameters, vocabulary ${m.vocab_size})</td>
      <td>${esc(m.label)}</td>
      <td><button class="secondary small" data-download="${esc(m.variant)}">Download</button></td></tr>`).join('')
    : '<tr><td colspan="4" class="muted">None yet: train one or load a checkpoint.</td></tr>';
  const sel = $('eval-variant');
  const keep = sel.value;
  sel.innerHTML = S.models.map((m) => `<option value="${esc(m.variant)}">${esc(m.variant)}</option>`).join('');
  if (S.models.some((m) => m.variant === keep)) sel.value = keep;
  $('h-from').value = S.models.length ? $('h-from').value : 'scratch';
  // The shipped model is current while the vanilla model is the one loaded under its label.
  const sh = S.shipped;
  const current = S.models.some((m) => m.variant === 'vanilla' && m.label === sh.label);
  if (sh.state === 'loaded' && !current) sh.state = 'replaced';
  showShipped();
  setStatus(S.status);
}

async function download(variant) {
  try {
    const bytes = await job('model_bytes', () => wasm.page_model_bytes(variant));
    const url = URL.createObjectURL(new Blob([bytes], { type: 'application/octet-stream' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = `${variant}.safetensors`;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  } catch (e) {
    showBox('model-error', `<p>${esc(errText(e))}</p>`);
  }
}

// A torch.save file is a zip (PK\x03\x04) or the pre-1.6 pickle (0x80 0x02); anything else goes
// to the safetensors reader, which names what is wrong.
function isSafetensors(bytes) {
  return !(bytes.length >= 2 && ((bytes[0] === 0x50 && bytes[1] === 0x4b) || (bytes[0] === 0x80 && bytes[1] === 0x02)));
}

async function uploadModel(file) {
  showBox('model-error', null);
  S.modelError = null;
  try {
    let bytes = new Uint8Array(await file.arrayBuffer());
    // A course .params file holds no vocabulary (it comes from the pretraining corpus selected
    // above, as run.py builds it) and, for vanilla, no head count (the form's).
    const heads = Number($('h-n_head').value);
    const corpus = data.wiki;
    const info = await job('load_model', () => wasm.page_load_model(bytes, file.name,
      corpus ? corpus.name : undefined, corpus ? corpus.text : undefined,
      Number.isInteger(heads) && heads > 0 ? heads : undefined));
    // Kept (and handed to the demos) as our safetensors, which carries its vocabulary.
    if (!isSafetensors(bytes)) bytes = await job('model_bytes', () => wasm.page_model_bytes(info.variant));
    await store.put(`model:${info.variant}`, { bytes, label: file.name, savedAt: Date.now() }).catch(() => {});
    S.loaded = info;
    refreshModels();
    handToDemos(bytes);
    $('eval-variant').value = info.variant;
  } catch (e) {
    S.modelError = errText(e);
    showBox('model-error', `<p>${esc(S.modelError)}</p><p>Load a <code>.safetensors</code> checkpoint from <code>attnlab</code> (the command line or this page) or a <code>.params</code> file saved by the course’s <code>run.py</code> (with the pretraining corpus it was trained with selected above, and for vanilla its head count in the form).</p>`);
  }
}

// The models kept in this browser; returns the variants it had a model for. A "model:vanilla"
// record of {shipped: true} means the shipped model (loaded again from the server, not stored).
async function restoreModels() {
  const had = [];
  for (const v of ['vanilla', 'synthesizer']) {
    const rec = await store.get(`model:${v}`).catch(() => null);
    if (!rec) continue;
    had.push(v);
    if (rec.shipped) {
      await loadShipped(false);
      continue;
    }
    try {
      await job('load_model', () => wasm.page_load_model(rec.bytes, rec.label));
      handToDemos(rec.bytes);
    } catch (e) {
      showBox('model-error', `<p>The saved ${v} model could not be restored: ${esc(errText(e))}</p>`);
    }
  }
  refreshModels();
  return had;
}

// ---------------------------------------------------------------------------------------------
// The shipped model

const SHIPPED_FACTS = 'web/models/builtin-vanilla.json';
const SHIPPED_MODEL = 'web/models/builtin-vanilla.safetensors';
const SHIPPED_LABEL = 'shipped model (built-in corpus)';

// The facts file, checked enough that the page can show it: {label, command, dev_accuracy,
// baseline, no_pretraining, size, trained, stand_in, ...}; throws a message naming the file.
async function readShippedFacts() {
  let r;
  try { r = await fetch(SHIPPED_FACTS, { cache: 'no-cache' }); } catch (e) { throw new Error(`${SHIPPED_FACTS} could not be fetched (${errText(e)})`); }
  if (!r.ok) throw new Error(`${SHIPPED_FACTS} is not on the server (HTTP ${r.status})`);
  let f;
  try { f = await r.json(); } catch { throw new Error(`${SHIPPED_FACTS} is not valid JSON`); }
  const count = (o) => o && typeof o === 'object' && (o.correct === null || Number.isFinite(o.correct)) && Number.isFinite(o.total);
  if (!f || typeof f !== 'object' || !count(f.dev_accuracy) || !count(f.baseline) || !count(f.no_pretraining)) {
    throw new Error(`${SHIPPED_FACTS} lacks dev_accuracy, baseline or no_pretraining as {"correct": c, "total": t}`);
  }
  return f;
}

// Fetch the shipped checkpoint and make it the vanilla model. `remember`: keep it as this browser's
// choice (the "load the shipped model again" button), so a reload brings it back rather than the
// model it replaced. Failures are quiet: a note in the Models card, never an error box.
async function loadShipped(remember) {
  const sh = S.shipped;
  sh.state = 'loading';
  sh.note = null;
  showShipped();
  try {
    if (!sh.facts) {
      try { sh.facts = await readShippedFacts(); } catch (e) { sh.factsError = errText(e); }
    }
    const label = (sh.facts && typeof sh.facts.label === 'string' && sh.facts.label) || SHIPPED_LABEL;
    let r;
    try { r = await fetch(SHIPPED_MODEL, { cache: 'no-cache' }); } catch (e) { throw new Error(`${SHIPPED_MODEL} could not be fetched (${errText(e)})`); }
    if (!r.ok) throw new Error(`${SHIPPED_MODEL} is not on the server (HTTP ${r.status})`);
    const bytes = new Uint8Array(await r.arrayBuffer());
    const info = await job('load_model', () => wasm.page_load_model(bytes, label));
    Object.assign(sh, { label, info, state: 'loaded' });
    S.loaded = info;
    refreshModels();
    // The shipped model is already finetuned: a Finetune pressed next starts from scratch unless
    // the user pretrains first (which sets "the current model" again).
    $('h-from').value = 'scratch';
    handToDemos(bytes);
    prefillAsk();
    if (remember) await store.put(`model:${info.variant}`, { shipped: true, label, savedAt: Date.now() }).catch(() => {});
  } catch (e) {
    sh.state = 'unavailable';
    sh.note = `The shipped model could not be loaded: ${errText(e)}. Train a model or load a checkpoint instead.`;
    refreshModels();
  }
}

const pctOf = (o) => (o && Number.isFinite(o.correct) && o.total > 0 ? `${((100 * o.correct) / o.total).toFixed(1)}%` : 'not measured');
const countOf = (o) => (o && Number.isFinite(o.correct) ? `${o.correct} of ${o.total}` : 'not measured');

// "dev accuracy X% on the built-in corpus (most-common-place baseline London Y%, same size without
// pretraining Z%)", with the counts in a tooltip.
function factsLine(f) {
  const place = (f.baseline && f.baseline.place) || 'London';
  const title = `dev questions right: ${countOf(f.dev_accuracy)}; ${place} every time: ${countOf(f.baseline)}; without pretraining: ${countOf(f.no_pretraining)}`;
  return `<span class="facts-line" title="${esc(title)}">dev accuracy <strong>${pctOf(f.dev_accuracy)}</strong> on the built-in corpus ` +
    `(most-common-place baseline ${esc(place)} ${pctOf(f.baseline)}, same size without pretraining ${pctOf(f.no_pretraining)})</span>`;
}

function sizeOf(info) {
  return info ? `${info.n_layer} layers, ${info.n_head} heads, width ${info.n_embd}` : '';
}

// The shipped model's facts where the user meets them: the Ask card (while it answers) and the
// Models card (with the command that made it and the button that loads it again).
function showShipped() {
  const sh = S.shipped;
  const f = sh.facts;
  const ask = $('ask-shipped');
  const box = $('shipped-box');
  const standIn = f && f.stand_in === true;
  const who = standIn ? '<strong class="stand-in">Stand-in model</strong> (placeholder numbers, not a measurement: the real shipped model replaces it)' : '';
  if (sh.state === 'loaded') {
    const what = `${esc(sh.info.variant)}, ${sizeOf(sh.info)}`;
    ask.innerHTML = `<p>${standIn ? `${who}. Answering` : 'Answering'} with the <strong>shipped model</strong> (${what}, trained on the built-in corpus)` +
      `${f ? `: ${factsLine(f)}` : ''}. Train or load your own model to ask it instead.</p>` +
      `<p class="ask-examples muted small" id="ask-examples"></p>`;
    ask.hidden = false;
    showExamples();
  } else {
    ask.hidden = true;
    ask.innerHTML = '';
  }
  const lines = [];
  if (f) {
    const cmd = Array.isArray(f.command) ? f.command : f.command ? [f.command] : [];
    const mismatch = sh.info && f.size && f.size !== sizeOf(sh.info) ? ` (its facts file says ${esc(f.size)}, but the checkpoint is ${sizeOf(sh.info)})` : '';
    lines.push(`<p>${standIn ? `${who}. ` : ''}<strong>Shipped model</strong>${f.size ? ` (${esc(f.size)})` : ''}${mismatch}: ${factsLine(f)}.` +
      `${sh.state === 'loaded' ? ' It is the vanilla model now.' : ''}</p>`);
    if (cmd.length || f.trained) {
      lines.push(`<details class="shipped-how"><summary>How it was made</summary>${cmd.map((c) => `<pre><code>${esc(c)}</code></pre>`).join('')}` +
        `${f.trained ? `<p class="muted small">${esc(f.trained)}</p>` : ''}${f.note ? `<p class="muted small">${esc(f.note)}</p>` : ''}</details>`);
    }
  } else if (sh.state === 'loaded') {
    lines.push(`<p><strong>Shipped model</strong> (${sizeOf(sh.info)}). ${sh.factsError ? `Its facts could not be read: ${esc(sh.factsError)}.` : ''}</p>`);
  }
  if (sh.note) lines.push(`<p class="muted small" id="shipped-note">${esc(sh.note)}</p>`);
  $('shipped-facts').innerHTML = lines.join('');
  // Offered whenever the files are there and the shipped model is not the current one.
  $('load-shipped').hidden = !(f && ['replaced', 'skipped'].includes(sh.state));
  $('load-shipped').disabled = sh.state === 'loading';
  box.hidden = lines.length === 0 && $('load-shipped').hidden;
}

// A few people of the built-in dev set to ask about (the shipped model was trained on the
// built-in corpus; it has never seen the dev set's answers).
function builtinDev() {
  if (!embedded) embedded = wasm.page_default_corpus();
  return embedded.dev.split('\n').filter((l) => l.includes('\t')).map((l) => l.split('\t'));
}

function exampleNames(n) {
  try {
    return builtinDev().slice(0, n).map(([q]) => q.replace(/^Where was /, '').replace(/ born\?$/, ''));
  } catch { return []; }
}

function showExamples() {
  const el = $('ask-examples');
  if (!el) return;
  const names = exampleNames(3);
  el.innerHTML = names.length ? `Try people from the built-in dev set: ${names.map((n) => `<button class="secondary small" data-ask="${esc(n)}">${esc(n)}</button>`).join(' ')}` : '';
}

function prefillAsk() {
  if ($('ask-text').value.trim()) return;
  const [first] = exampleNames(1);
  if (first) $('ask-text').value = first;
}

// The gold answer of a question that is in the loaded files or the built-in dev set, for the
// answer's ✓/✗: {answer, file} or null.
function goldFor(question) {
  const sources = [data.dev, data.test, data.train].filter(Boolean).map((f) => [f.name, f.text]);
  try { sources.push(['the built-in dev set', embedded ? embedded.dev : wasm.page_default_corpus().dev]); } catch { /* no wasm */ }
  for (const [file, text] of sources) {
    for (const line of text.split('\n')) {
      const [q, a] = line.replace(/\r$/, '').split('\t');
      if (q === question && a !== undefined) return { answer: a, file };
    }
  }
  return null;
}

function wireModels() {
  $('models').addEventListener('click', (e) => {
    const b = e.target.closest('button[data-download]');
    if (b) download(b.dataset.download);
  });
  const input = $('file-model');
  input.addEventListener('change', () => { if (input.files.length) uploadModel(input.files[0]); input.value = ''; });
  $('load-shipped').addEventListener('click', () => { if (S.shipped.state !== 'loading') loadShipped(true); });
}

// ---------------------------------------------------------------------------------------------
// Evaluation

async function evaluate() {
  const variant = $('eval-variant').value;
  const which = $('eval-file').value;
  const f = data[which];
  showBox('eval-error', null);
  S.evalError = null;
  if (!f) { showBox('eval-error', `<p>There is no ${which} TSV; load one above or use the built-in corpus.</p>`); return; }
  const raw = $('eval-max').value.trim();
  const max = raw === '' ? undefined : Number(raw);
  if (max !== undefined && !(Number.isInteger(max) && max >= 1)) {
    showBox('eval-error', `<p>“at most” is “${esc(raw)}”; give a whole number of questions, or leave it empty for all.</p>`);
    return;
  }
  $('btn-eval').disabled = true;
  $('eval-status').textContent = `Evaluating the ${variant} model on ${f.name}…`;
  const t0 = performance.now();
  try {
    const rep = await job('evaluate', () => wasm.page_evaluate(variant, f.name, f.text, max, (done, total) => {
      $('eval-status').textContent = `Evaluating the ${variant} model on ${f.name}: ${done} of ${total} questions…`;
    }));
    rep.variant = variant;
    rep.file = f.name;
    rep.seconds = (performance.now() - t0) / 1000;
    S.evalReport = rep;
    showEval(rep);
    $('eval-status').textContent = `${rep.rows.length} questions of ${f.name} in ${rep.seconds.toFixed(1)} s with the ${variant} model.`;
  } catch (e) {
    S.evalError = errText(e);
    showBox('eval-error', `<p>${esc(S.evalError)}</p>`);
    $('eval-status').textContent = '';
    if (wasm.page_device_lost()) await failed(e, 'evaluation stopped');
  } finally {
    setStatus(S.status);
  }
}

const pct = ([c, t]) => (t ? `${((100 * c) / t).toFixed(1)}%` : '—');

function showEval(rep) {
  $('eval-result').hidden = false;
  $('eval-acc').textContent = rep.score ? pct(rep.score) : 'no answers';
  $('eval-line').textContent = rep.score ? rep.line : 'this file has no gold answers, so only predictions are shown';
  $('eval-london').textContent = rep.london ? pct(rep.london) : '—';
  $('eval-london-line').textContent = rep.london_line || '';
  filterEval();
}

function filterEval() {
  const rep = S.evalReport;
  if (!rep) return;
  const mode = $('eval-filter').value;
  const q = $('eval-search').value.trim().toLowerCase();
  const rows = rep.rows.filter((r) => (mode === 'all' || (mode === 'right' ? r.correct === true : r.correct === false))
    && (!q || `${r.question} ${r.gold || ''} ${r.prediction}`.toLowerCase().includes(q)));
  const shown = rows.slice(0, 1000);
  $('eval-table').querySelector('tbody').innerHTML = shown.map((r) => `<tr class="${r.correct === false ? 'wrong' : ''}">
      <td class="num">${r.line}</td><td>${esc(r.question)}</td><td>${esc(r.gold ?? '')}</td><td>${showPred(r.prediction)}</td>
      <td class="${r.correct ? 'ok' : 'bad'}">${r.correct === null ? '' : r.correct ? '✓' : '✗'}</td></tr>`).join('');
  $('eval-count').textContent = `${rows.length} of ${rep.rows.length} shown${rows.length > shown.length ? ' (first 1000)' : ''}`;
}

function wireEval() {
  $('btn-eval').addEventListener('click', evaluate);
  $('eval-filter').addEventListener('change', filterEval);
  $('eval-search').addEventListener('input', filterEval);
  $('eval-table').addEventListener('click', (e) => {
    const tr = e.target.closest('tr');
    const q = tr && tr.children[1] && tr.children[1].textContent;
    if (q) { $('ask-text').value = q; $('ask-card').scrollIntoView({ behavior: 'smooth' }); }
  });
}

// ---------------------------------------------------------------------------------------------
// Ask

async function ask() {
  const text = $('ask-text').value;
  showBox('ask-error', null);
  S.askError = null;
  const variants = S.models.map((m) => m.variant);
  if (!variants.length) { showBox('ask-error', '<p>There is no model yet; train one or load a checkpoint.</p>'); return; }
  $('btn-ask').disabled = true;
  const out = {};
  const errs = [];
  for (const v of variants) {
    try { out[v] = await job('ask', () => wasm.page_ask(v, text)); } catch (e) { errs.push(`${v}: ${errText(e)}`); }
  }
  S.ask = out;
  if (errs.length) { S.askError = errs.join('\n'); showBox('ask-error', errs.map((m) => `<p>${esc(m)}</p>`).join('')); }
  showAnswers(out);
  setStatus(S.status);
}

function showAnswers(out) {
  const root = $('ask-result');
  root.innerHTML = '';
  for (const [variant, a] of Object.entries(out)) {
    const gold = goldFor(a.question);
    const col = document.createElement('div');
    col.className = 'ask-col';
    col.innerHTML = `<h3>${esc(variant)}</h3>
      <p class="question">${esc(a.question)}</p>
      <p class="answer">→ <strong>${showPred(a.prediction)}</strong>${gold ? ` <span class="muted small">(${esc(gold.file)} says ${esc(gold.answer)}` +
        ` <span class="${gold.answer.trim() === a.prediction ? 'ok' : 'bad'}">${gold.answer.trim() === a.prediction ? '✓' : '✗'}</span>)</span>` : ''}</p>
      <p class="muted small">Attention of layer <select class="pick-layer">${a.maps.map((_, i) => `<option value="${i}">${i + 1}</option>`).join('')}</select>
        head <select class="pick-head">${Array.from({ length: a.n_head }, (_, i) => `<option value="${i}">${i + 1}</option>`).join('')}</select>:
        row = the character reading, column = the character it reads; the red line ends the question.</p>
      <div class="map-scroll"><canvas class="big-map"></canvas></div>
      <div class="thumbs"></div>`;
    root.appendChild(col);
    const T = a.tokens.length;
    const big = col.querySelector('.big-map');
    const selL = col.querySelector('.pick-layer'), selH = col.querySelector('.pick-head');
    const mapOf = (l, h) => a.maps[l].subarray ? a.maps[l].subarray(h * T * T, (h + 1) * T * T) : a.maps[l].slice(h * T * T, (h + 1) * T * T);
    const drawBig = () => drawMap(big, mapOf(+selL.value, +selH.value), a.tokens, a.prompt_len, Math.min(560, col.clientWidth || 560));
    selL.value = String(a.maps.length - 1);
    const thumbs = col.querySelector('.thumbs');
    a.maps.forEach((_, l) => {
      const row = document.createElement('div');
      row.className = 'thumb-row';
      row.innerHTML = `<span class="muted small">layer ${l + 1}</span>`;
      for (let h = 0; h < a.n_head; h++) {
        const c = document.createElement('canvas');
        c.title = `layer ${l + 1}, head ${h + 1}`;
        c.className = 'thumb';
        drawThumb(c, mapOf(l, h), T, 48);
        c.addEventListener('click', () => { selL.value = String(l); selH.value = String(h); drawBig(); });
        row.appendChild(c);
      }
      thumbs.appendChild(row);
    });
    selL.addEventListener('change', drawBig);
    selH.addEventListener('change', drawBig);
    drawBig();
  }
}

function wireAsk() {
  $('btn-ask').addEventListener('click', ask);
  $('ask-shipped').addEventListener('click', (e) => {
    const b = e.target.closest('button[data-ask]');
    if (b && !$('btn-ask').disabled) { $('ask-text').value = b.dataset.ask; ask(); }
  });
  $('ask-text').addEventListener('keydown', (e) => { if (e.key === 'Enter' && !$('btn-ask').disabled) ask(); });
}

// ---------------------------------------------------------------------------------------------
// Start

function deviceLine(d, browserInfo) {
  const mib = (n) => `${Math.round(n / 1048576)} MiB`;
  const size = (n) => (n >= 2 ** 30 ? `${+(n / 2 ** 30).toFixed(1)} GiB` : mib(n));
  if (d.kind === 'cpu') {
    return `Device: ${d.describe} · largest tensor ${size(d.max_tensor_bytes)}` +
      `${d.budget_bytes ? `, ${size(d.budget_bytes)} for a whole run` : ''} · ${d.reason}`;
  }
  const a = d.adapter;
  const L = a.limits;
  const b = browserInfo ? [browserInfo.vendor, browserInfo.architecture].filter(Boolean).join(' / ') : '';
  return `GPU: ${a.name}${b ? ` (${b}${browserInfo.isFallbackAdapter ? ', software fallback' : ''})` : ''} · ${a.backend} · ` +
    `limits: storage binding ${mib(L.max_storage_buffer_binding_size)}, buffer ${mib(L.max_buffer_size)}, ` +
    `${L.max_compute_invocations_per_workgroup} invocations/workgroup, ${L.max_storage_buffers_per_shader_stage} storage buffers/stage`;
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

export async function startPage(w, device, browserInfo) {
  wasm = w;
  S.backend = device.kind;
  if (device.kind === 'cpu') {
    CHUNK_MS = 100;
    NOTES.quick = 'Tiny model (2 layers, 4 heads, width 64), 40 pretraining epochs: about 12 TFLOP of work. On the CPU backend (one thread) a step of batch 128 took about 2 s on our test machine, so about half an hour in all, and the page answers clicks only between steps (a smaller batch keeps it livelier). Edit anything below.';
  }
  $('gpu-line').textContent = deviceLine(device, browserInfo);
  presets = wasm.page_presets();
  applyPreset('quick');
  wireData(); wireForm(); wireTraining(); wireModels(); wireEval(); wireAsk();
  window.addEventListener('unhandledrejection', (e) => { S.error = errText(e.reason); });
  // Test hook: destroy the GPU device between two GPU calls (as a driver reset would take it away).
  S.destroyDevice = () => job('destroy', () => wasm.page_debug_destroy_device());
  try {
    served = await fetchServed();
    if (served) useServed(); else useEmbedded();
  } catch (e) {
    showBox('data-error', `<p>${esc(errText(e))}</p>`);
  }
  const had = await restoreModels();
  const rec = await offerSaved();
  // First visit (no vanilla model of this browser's own, no saved run): the shipped model.
  if (!had.includes('vanilla') && !rec) {
    await loadShipped(false);
  } else if (S.shipped.state === 'none') {
    S.shipped.state = 'skipped';
    try { S.shipped.facts = await readShippedFacts(); } catch (e) { S.shipped.factsError = errText(e); }
    showShipped();
  }
  const asks = S.shipped.state === 'loaded' ? ' The shipped model answers in Ask below.' : '';
  setStatus('idle', rec ? 'A saved run can be resumed (see the note at the top), or start a new one.' : `Ready: press Pretrain to start with the quick preset.${asks}`);
  redrawChart();
  S.ready = true;
}
