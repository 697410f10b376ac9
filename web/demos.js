// The attention demos (exercises E1–E10): builds one <article> per item inside <section id="demos">,
// runs each item's math through the wasm module's kernels (through the engine's one job queue, latest settings win
// while a slider is dragged), draws the picture and the numbers, and keeps the URL fragment in step
// (#e3?s=50&lv=-6 …) so a state can be shared. Test hooks: window.__demos = {ready, runs, results, labels, error}.
// Trained models for E8/E9: the page's registry (src/wasm/models.rs); window.attnlabDemos.setModel(bytes)
// puts a checkpoint's safetensors bytes there.
import { ITEMS as E_ITEMS } from './demos/items.js';
import { S2_ITEMS, modelsChanged as s2ModelsChanged, setSoftware } from './demos/section2.js';
import { setBackend } from './demos/labels.js';
import { job, loadDevice, simdOf } from './backend.js';
import { esc } from './page/ui.js';
import { renderTex } from './page/math.js';
import { placeLabels } from './demos/draw.js';
import { drawLegend } from './page/heatmap.js';
import { applyParams, parseHash, writeHash } from './demos/link.js';
import { on } from './page/events.js';

// E1–E10, then the section 2 demos (S2a–S2c).
const ITEMS = [...E_ITEMS, ...S2_ITEMS];
const root = document.getElementById('demos');
// The stylesheet travels with the script, so index.html needs only the section and this module.
if (!document.querySelector('link[href$="web/demos.css"]')) {
  const css = document.createElement('link');
  css.rel = 'stylesheet';
  css.href = new URL('./demos.css', import.meta.url).href;
  document.head.appendChild(css);
}
const state = (window.__demos = {
  ready: false,
  error: null,
  backend: null,
  runs: {},
  results: {},
  labels: {},
  errors: [],
  tex: { rendered: [], failed: [] },
});
const demos = new Map();
let engine = null;
let wasmReady = null;

// The engine's one queue (web/backend.js): a demo's call waits for the training page's current call
// (at most one training chunk) and never runs inside it.
const gpuJob = (f) => job('demo', f);

// The same module instance and device as the rest of the page (web/backend.js opens it once:
// WebGPU, or the CPU backend without it).
async function loadWasm() {
  const { engine: m, device } = await loadDevice();
  setBackend(device.kind);
  setSoftware(Boolean(device.adapter && device.adapter.software));
  state.backend = device.kind;
  const k = document.getElementById('demos-kernels');
  if (k)
    k.textContent =
      device.kind === 'cpu'
        ? `the same CPU-backend kernels (f32, ${simdOf(device.describe)}) that train the GPT on this page`
        : 'the same WGSL kernels that train the GPT';
  for (const d of demos.values()) {
    d.el.querySelector('.demo-cpu-text').textContent =
      device.kind === 'cpu'
        ? ' show the f64 reference beside the f32 kernels’ numbers'
        : ' show the CPU reference (f64) beside the GPU numbers';
    if (d.status.textContent === 'Computing…')
      d.status.textContent =
        device.kind === 'cpu' ? 'Computing on the CPU backend…' : 'Computing on the GPU…';
  }
  engine = m;
  return m;
}

function control(d, c) {
  const id = `${d.item.id}-${c.key || c.label.replace(/\W+/g, '')}`;
  const wrap = document.createElement('div');
  wrap.className = `ctl ctl-${c.type}`;
  const st = d.st;
  if (c.type === 'range') {
    wrap.innerHTML = `<label for="${id}">${c.label} <output id="${id}-out"></output></label>
      <input type="range" id="${id}" min="${c.min}" max="${c.max}" step="${c.step}">`;
    const input = wrap.querySelector('input'),
      out = wrap.querySelector('output');
    const show = () => {
      input.value = st[c.key];
      out.textContent = c.show ? c.show(st[c.key], st) : st[c.key];
    };
    input.addEventListener('input', () => {
      st[c.key] = Number(input.value);
      show();
      changed(d);
    });
    d.sync.push(show);
    // A range that follows the result (E8's layer slider: as many layers as the loaded model has).
    if (c.maxFrom) {
      d.limits.push(() => {
        const m = d.res ? c.maxFrom(d.res, st) : NaN;
        input.max = String(Number.isFinite(m) && m >= c.min ? m : c.max);
        if (st[c.key] > Number(input.max)) st[c.key] = Number(input.max);
        show();
      });
    }
  } else if (c.type === 'select') {
    wrap.innerHTML =
      `<label for="${id}">${c.label}</label> <select ` +
      `id="${id}">${c.options.map(([v, t]) => `<option value="${esc(v)}">${esc(t)}</option>`).join('')}</select>`;
    const sel = wrap.querySelector('select');
    const num = typeof d.item.defaults[c.key] === 'number';
    sel.addEventListener('change', () => {
      st[c.key] = num ? Number(sel.value) : sel.value;
      changed(d);
    });
    d.sync.push(() => {
      sel.value = String(st[c.key]);
    });
  } else if (c.type === 'checkbox') {
    wrap.innerHTML = `<label><input type="checkbox" id="${id}"> ${c.label}</label>`;
    const box = wrap.querySelector('input');
    box.addEventListener('change', () => {
      st[c.key] = box.checked;
      changed(d);
    });
    d.sync.push(() => {
      box.checked = !!st[c.key];
    });
  } else if (c.type === 'text') {
    wrap.innerHTML =
      `<label for="${id}">${c.label}</label> <input type="text" id="${id}" maxlength="120" ` +
      `spellcheck="false">`;
    const inp = wrap.querySelector('input');
    inp.addEventListener('change', () => {
      st[c.key] = inp.value;
      changed(d);
    });
    d.sync.push(() => {
      inp.value = st[c.key];
    });
  } else if (c.type === 'button') {
    wrap.innerHTML = `<button type="button" id="${id}">${c.label}</button>`;
    wrap.querySelector('button').addEventListener('click', () => {
      const rerun = c.action(st, d);
      d.sync.forEach((f) => f());
      if (rerun !== false) changed(d);
    });
    // A button with nothing to do once the result has what it asks for (E9's "load the shipped
    // synthesizer" once a synthesizer model is loaded) is hidden then.
    if (c.hideFrom)
      d.limits.push(() => {
        wrap.hidden = !!(d.res && c.hideFrom(d.res));
      });
  }
  // A control with nothing to do in the other settings (E10's kernel width when it imitates the
  // identity) is disabled then, its reason in its title.
  if (c.inactive) {
    const follow = () => {
      const why = c.inactive(st);
      for (const e of wrap.querySelectorAll('input, select, button')) e.disabled = !!why;
      wrap.classList.toggle('ctl-inactive', !!why);
      wrap.title = why || '';
    };
    d.sync.push(follow);
    d.inactive.push(follow);
  }
  return wrap;
}

// A control moved: remember it in the URL and recompute (coalesced while a job runs).
function changed(d) {
  d.inactive.forEach((f) => f());
  writeHash(d);
  run(d);
}

// While a card recomputes its old picture and numbers stay, dimmed (.demo-recomputing), and its
// status says "Computing…"; a quick recompute (a slider dragged over E1–E10, a few ms) shows
// nothing, so the busy look comes after BUSY_MS, or at once for the cards that ask a model
// (section 2: seconds to a minute).
const BUSY_MS = 150;
function showBusy(d) {
  if (!d.busy) return;
  d.el.classList.add('demo-recomputing');
  if (!d.status.dataset.keep) d.status.textContent = 'Computing…';
  // A card still waiting for its model draws "Computing…" now that it has one (section2.js).
  if (d.res && d.res.waiting) redraw(d);
}

async function run(d) {
  if (d.busy) {
    d.dirty = true;
    return;
  }
  d.busy = true;
  d.el.setAttribute('aria-busy', 'true');
  const timer = d.item.usesModels ? (showBusy(d), null) : setTimeout(() => showBusy(d), BUSY_MS);
  try {
    do {
      d.dirty = false;
      const snap = { ...d.st };
      try {
        await wasmReady;
        d.res = await gpuJob(() => d.item.compute(engine, snap, d));
        d.limits.forEach((f) => f());
        d.snap = snap;
        // A message a card keeps (S2a's refused file) stays until the card itself clears it.
        if (!d.status.dataset.keep) d.status.textContent = '';
        state.runs[d.item.id] = (state.runs[d.item.id] || 0) + 1;
        state.results[d.item.id] = d.res;
      } catch (e) {
        const msg = String((e && e.message) || e);
        d.status.textContent = `Could not compute: ${msg}`;
        state.errors.push(`${d.item.id}: ${msg}`);
      }
      redraw(d);
    } while (d.dirty);
  } finally {
    clearTimeout(timer);
    d.busy = false;
    d.el.classList.remove('demo-recomputing');
    d.el.setAttribute('aria-busy', 'false');
    if (d.status.textContent === 'Computing…') d.status.textContent = '';
    if (d.res && d.res.waiting) redraw(d);
  }
}

// The numbers panel's new HTML, keeping what the reader had: the focused control (S2b's person
// buttons re-render on each pick; focus fell to <body>) and each scrolling table's position.
const FOCUSABLE = 'button, input, select, a[href], [tabindex]';
function replaceNumbers(d, html) {
  const box = d.numbers;
  const focused = box.contains(document.activeElement)
    ? [...box.querySelectorAll(FOCUSABLE)].indexOf(document.activeElement)
    : -1;
  const scrolls = [...box.querySelectorAll('.s2-scroll')].map((e) => e.scrollTop);
  box.innerHTML = html;
  box.querySelectorAll('.s2-scroll').forEach((e, i) => {
    if (scrolls[i]) e.scrollTop = scrolls[i];
  });
  if (focused >= 0) {
    const el = box.querySelectorAll(FOCUSABLE)[focused];
    if (el) el.focus({ preventScroll: true });
  }
}

function redraw(d) {
  if (!d.res) return;
  try {
    d.item.draw(d);
    state.labels[d.item.id] = placeLabels();
    replaceNumbers(d, d.item.numbers(d));
  } catch (e) {
    state.errors.push(`${d.item.id} draw: ${e.message || e}`);
    console.error(e);
  }
}

function build(item, hash) {
  const st = { ...item.defaults };
  if (hash && hash.id === item.id) applyParams(item, st, hash.params);
  const el = document.createElement('article');
  el.className = 'demo';
  el.id = item.id;
  el.setAttribute('aria-labelledby', `${item.id}-title`);
  el.innerHTML =
    `
    <h3 id="${item.id}-title"><a class="demo-link" href="#${item.id}" title="link to ` +
    `this demo">${item.num}</a> ${item.title}</h3>
    <p class="demo-explain">${item.explain}</p>
    <div class="demo-formula" role="group" aria-label="formula">${item.formula}</div>
    <div class="demo-body">
      <figure class="demo-figure"><figcaption class="sr-only">${esc(item.alt)}</figcaption></figure>
      <div class="demo-side">
        <div class="demo-controls" role="group" aria-label="${esc(item.title)} settings"></div>
        <label class="demo-cpu"><input type="checkbox"><span class="demo-cpu-text"> ` +
    `show the reference (f64) beside the kernels’ numbers</span></label>
        <p class="demo-status" role="status" aria-live="polite"></p>
        <div class="demo-numbers"></div>
      </div>
    </div>`;
  const d = {
    item,
    st,
    el,
    sync: [],
    limits: [],
    inactive: [],
    res: null,
    busy: false,
    dirty: false,
    cpu: false,
  };
  d.figure = el.querySelector('.demo-figure');
  d.numbers = el.querySelector('.demo-numbers');
  d.status = el.querySelector('.demo-status');
  d.cv = document.createElement('canvas');
  d.cv.className = 'demo-canvas';
  d.cv.style.aspectRatio = String(item.aspect || 1.6);
  d.cv.setAttribute('role', 'img');
  d.cv.setAttribute('aria-label', item.alt);
  d.figure.appendChild(d.cv);
  // The page's one colour scale (web/page/heatmap.js) under every demo that draws weights.
  if (item.legend) {
    const lg = document.createElement('div');
    lg.className = 'demo-legend';
    lg.innerHTML = `<canvas aria-hidden="true"></canvas><span>${esc(item.legend)}</span>`;
    drawLegend(lg.querySelector('canvas'), 200, { linear: true });
    d.figure.appendChild(lg);
  }
  const ctl = el.querySelector('.demo-controls');
  for (const c of item.controls) ctl.appendChild(control(d, c));
  const cpu = el.querySelector('.demo-cpu input');
  cpu.addEventListener('change', () => {
    d.cpu = cpu.checked;
    redraw(d);
  });
  if (item.attach)
    item.attach(
      d,
      () => changed(d),
      () => redraw(d),
    );
  d.sync.forEach((f) => f());
  d.status.textContent = 'Computing…';
  // The formula as mathematics (KaTeX, from this origin); its plain-text version stays otherwise.
  if (item.tex) {
    renderTex(el.querySelector('.demo-formula'), item.tex).then((ok) => {
      state.tex[ok ? 'rendered' : 'failed'].push(item.id);
      if (ok) redraw(d); // the card's height may have changed
    });
  }
  // A formula wider than the card scrolls sideways: it then takes keyboard focus (arrows scroll it),
  // and a shadow at the cut edge says there is more.
  const formula = el.querySelector('.demo-formula');
  const fits = () => {
    const more = formula.scrollWidth > formula.clientWidth + 1;
    if (more) formula.tabIndex = 0;
    else formula.removeAttribute('tabindex');
    formula.classList.toggle('cut', more);
  };
  new ResizeObserver(fits).observe(formula);
  demos.set(item.id, d);
  return el;
}

// A link to a demo (the address on arrival, or one of the list's links clicked later) lands on its
// card and stays there while the page above it grows (formulas rendered, the shipped model's cards
// filled, a section 2 evaluation finishing) or below it (the page too short for the card to reach the
// top): for 15 s, or until the reader scrolls, clicks or types, every change of the page's size
// scrolls the card back to the top. A new link ends the last pin.
let unpin = () => {};
function pinTo(el) {
  unpin();
  const at = () => el.getBoundingClientRect().top;
  let want = 0;
  const pin = () => {
    if (Math.abs(at() - want) > 2) el.scrollIntoView();
  };
  const ro = new ResizeObserver(pin);
  const stop = () => {
    ro.disconnect();
    for (const ev of STOPS) window.removeEventListener(ev, stop, true);
  };
  unpin = stop;
  const STOPS = ['wheel', 'touchstart', 'pointerdown', 'keydown'];
  for (const ev of STOPS) window.addEventListener(ev, stop, { capture: true, passive: true });
  // Its scroll margin below the top; where the page below it is still too short for that (the
  // cards after the demos not filled in yet), it lands lower and the pin moves it up as they fill.
  want = parseFloat(getComputedStyle(el).scrollMarginTop) || 0;
  el.scrollIntoView();
  ro.observe(document.body);
  setTimeout(stop, 15000);
  state.pinned = el.id;
}

async function main() {
  if (!root) return;
  const hash = parseHash();
  root.innerHTML =
    `<h2>Attention, hands on</h2>
    <p class="muted">The written exercises on attention as things to touch. Every number below is computed by
    <span id="demos-kernels">the kernels that train the GPT</span> (the strided matmul ` +
    `and the causal softmax); tick “show the reference” to
    see an f64 computation beside it. Each demo's settings live in the address bar, so ` +
    `a link shares the exact state.</p>
    <nav class="demo-toc" ` +
    `aria-label="demos">${ITEMS.map((i) => `<a href="#${i.id}">${i.num} ${i.short}</a>`).join('')}</nav>
    <p id="demos-busy" class="notice info" hidden>A training run is going: the demos share its device, so each
    update waits for the current training chunk to end (a second or two with the quick preset; longer with
    bigger models). Pause the run and the demos answer at once.</p>`;
  // The training page announces its state (setStatus in web/page/core.js); say why a slider is slow meanwhile.
  window.addEventListener('attnlab-status', (e) => {
    const busy = document.getElementById('demos-busy');
    if (busy) busy.hidden = !['running', 'pausing', 'stopping', 'starting'].includes(e.detail);
  });
  // The same links on the first screen (index.html's #start-demos), so every demo is one click away.
  const start = document.getElementById('start-demos');
  if (start)
    start.innerHTML = `Demos: ${ITEMS.map((i) => `<a href="#${i.id}">${i.num} ${i.short}</a>`).join(' · ')}`;
  for (const item of ITEMS) root.appendChild(build(item, hash));
  wasmReady = loadWasm();
  try {
    await wasmReady;
  } catch (e) {
    state.error = String(e.message || e);
    state.ready = true;
    for (const d of demos.values())
      d.status.textContent = `The demos need the wasm module (web/pkg, built by scripts/build-web.sh): ${state.error}`;
    return;
  }
  if (hash && demos.has(hash.id)) pinTo(demos.get(hash.id).el);
  await readModels().catch(() => {});
  // First render of every demo, in page order (each is small; the shared queue keeps them serial),
  // the one the address names first, so that it answers with the first model that is ready.
  const first = hash && demos.get(hash.id);
  const order = first
    ? [first, ...[...demos.values()].filter((d) => d !== first)]
    : [...demos.values()];
  await Promise.all(order.map((d) => run(d)));
  state.ready = true;
  new ResizeObserver(() => {
    for (const d of demos.values()) redraw(d);
  }).observe(root);
}

// E8/E9 draw the page's models (one registry in src/wasm/models.rs, shared with training and Ask).
// The registry's variants, as last read from the engine (the models() hook answers at once).
let modelList = [];
const readModels = async () => {
  if (engine) modelList = await gpuJob(() => engine.demo_models());
};
const rerunModels = () => {
  // A model loaded or trained: S2a's kept message of an earlier refused file goes with the recompute.
  const s2a = demos.get('s2a');
  if (s2a) {
    delete s2a.status.dataset.keep;
    s2a.status.classList.remove('demo-error');
  }
  readModels().catch(() => {});
  s2ModelsChanged();
  // The card the reader looks at first (the address's, then the rest in page order).
  const h = parseHash();
  const all = [...demos.values()];
  const order =
    h && demos.has(h.id) ? [demos.get(h.id), ...all.filter((d) => d.item.id !== h.id)] : all;
  for (const d of order) if (d.item.usesModels || ['e8', 'e9'].includes(d.item.id)) run(d);
};
// The Data card's files changed (web/page/data.js): the section 2 demos ask about the people of the
// text the vanilla model was trained on, which may now be the loaded one.
on('data', () => {
  s2ModelsChanged();
  for (const d of demos.values()) if (d.item.usesModels) run(d);
});

// The hooks: the training page says when its models changed; a test (or any caller) can put a
// checkpoint's bytes into the registry or take a variant's model out.
window.attnlabDemos = {
  modelsChanged: rerunModels,
  async setModel(bytes) {
    await wasmReady;
    const name = await gpuJob(() =>
      engine.demo_set_model(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes)),
    );
    await readModels();
    rerunModels();
    return name;
  },
  async clearModel(variant) {
    await wasmReady;
    await gpuJob(() => engine.demo_clear_model(variant));
    await readModels();
    rerunModels();
  },
  // Section 2's own models (src/wasm/section2.rs): "nopretrain" or "pretrained".
  async s2Load(role, bytes, name) {
    await wasmReady;
    const label = await gpuJob(() =>
      engine.s2_load(role, bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes), name),
    );
    rerunModels();
    return label;
  },
  // The variants in the registry (as of the last change the demos were told of).
  models: () => modelList,
  rerun: (id) => demos.has(id) && run(demos.get(id)),
};

window.addEventListener('hashchange', () => {
  const h = parseHash();
  if (!h || !demos.has(h.id)) return;
  const d = demos.get(h.id);
  applyParams(d.item, d.st, h.params);
  d.sync.forEach((f) => f());
  run(d);
  pinTo(d.el);
});

main();
