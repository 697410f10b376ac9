// The Vision Transformer card (NYU Deep Learning homework 4's ViT on generated digits), built inside
// <section id="vit">: train it live on freshly generated digits (loss, held-out accuracy, confusion
// matrix) or start from the shipped model (web/models/vit-digits.safetensors); draw a digit and see
// the prediction with its probabilities; per layer and head, the attention from [CLS] or from any
// clicked patch overlaid on the image, and attention rollout; the patch grid and the position-embedding
// similarities; short answers to the homework's questions beside the pictures. All numbers come from
// the wasm module (src/wasm/vit.rs). Test hooks: window.__vit = {ready, info, answer, evals, error, ...}.
import { job as queueJob, loadDevice, nextTask } from '../backend.js';
import { duration, esc } from '../page/ui.js';
import { makePad } from './draw.js';
import { drawChart, drawOverlay, drawPatches, drawPositions, fillConfusion } from './pictures.js';
import { CARD } from './markup.js';
import { AUTO_EVAL_MIN, AUTO_EVAL_MS, ofDigits } from './text.js';
import { movePatch, patchAt, positionStats } from './patches.js';

const root = document.getElementById('vit');
if (root && !document.querySelector('link[href$="web/vit.css"]')) {
  const css = document.createElement('link');
  css.rel = 'stylesheet';
  css.href = new URL('../vit.css', import.meta.url).href;
  document.head.appendChild(css);
}
const state = (window.__vit = {
  ready: false,
  error: null,
  info: null,
  answer: null,
  evals: [],
  losses: [],
  checksum: null,
  trainedSteps: 0,
  predictions: 0,
});
let engine = null;
// Device work goes through the page's one queue (web/backend.js), so ViT calls, training chunks and
// the demos never interleave on the device. The slowest ViT call is kept in state.slowest (it runs
// in the engine's worker; a slow call holds up the queue, not the page).
const job = (f) =>
  queueJob('vit', async () => {
    const t0 = performance.now();
    try {
      return await f();
    } finally {
      const ms = performance.now() - t0;
      if (ms > (state.slowest ? state.slowest.ms : 0))
        state.slowest = { ms, call: String(f).slice(0, 60) };
    }
  });
const $ = (id) => document.getElementById(id);

function build() {
  root.classList.add('card');
  root.innerHTML = CARD;
}

let pad;
let image = null; // the model's current 28×28 input
let query = -1; // -1: attention from [CLS]; else a patch index
let running = false;

const info = () => state.info;

function showInfo(i, note) {
  state.info = i;
  $('vit-model').textContent =
    `${i.origin}: ${i.params.toLocaleString()} parameters; ${i.patch}×${i.patch} patches ` +
    `(${i.grid}×${i.grid} = ${i.grid * i.grid}) + [CLS] = ${i.tokens} tokens, ` +
    `${i.n_layer} layers, ${i.n_head} heads, width ${i.n_embd}; on ` +
    `the ${i.backend === 'cpu' ? 'CPU backend' : 'GPU'}${note ? `. ${note}` : ''}`;
  const layer = $('vit-layer');
  layer.innerHTML =
    [...Array(i.n_layer).keys()].map((l) => `<option value="${l}">${l + 1}</option>`).join('') +
    '<option value="rollout">rollout</option>';
  layer.value = String(i.n_layer - 1);
  $('vit-head').disabled = false;
  $('vit-head').innerHTML =
    '<option value="mean">mean</option>' +
    [...Array(i.n_head).keys()].map((h) => `<option value="${h}">${h + 1}</option>`).join('');
  // A model is there to save; the training buttons follow the run (trainButtons).
  $('vit-save').disabled = false;
  trainButtons();
}

// No digit to answer for (the pad cleared): the last prediction and its pictures go too.
function clearAnswer() {
  state.answer = null;
  state.lastAnswer = null;
  $('vit-pred').textContent = 'Draw a digit (or press “A held-out sample”) to see the prediction.';
  $('vit-probs').innerHTML = '';
  for (const id of ['vit-attn', 'vit-patches']) {
    const c = $(id);
    c.getContext('2d').clearRect(0, 0, c.width, c.height);
  }
  $('vit-attn-caption').textContent = '';
}

async function predict() {
  if (!info()) return;
  if (!image) {
    clearAnswer();
    return;
  }
  const a = await job(() => engine.vit_predict(image));
  state.answer = { class: a.class, probs: Array.from(a.probs) };
  state.predictions += 1;
  state.lastAnswer = a;
  $('vit-pred').innerHTML =
    `prediction: <strong>${a.class}</strong> (${(100 * a.probs[a.class]).toFixed(1)}%)`;
  $('vit-probs').innerHTML = Array.from(a.probs)
    .map(
      (p, d) =>
        `<label class="${d === a.class ? 'best' : ''}"><span>${d}</span><progress max="1" ` +
        `value="${p.toFixed(4)}"></progress><span ` +
        `class="num">${(100 * p).toFixed(1)}%</span></label>`,
    )
    .join('');
  drawAttention();
  drawPatches($('vit-patches'), image, info().grid);
}

// Rollout averages the heads: the head select has nothing to choose then.
function headFollowsLayer() {
  $('vit-head').disabled = $('vit-layer').value === 'rollout';
}

function drawAttention() {
  const a = state.lastAnswer;
  const i = info();
  if (!a || !i) return;
  const T = i.tokens;
  const n = T - 1;
  const q = query < 0 ? 0 : query + 1;
  const layer = $('vit-layer').value;
  const head = $('vit-head').value;
  let row = new Float64Array(T);
  let what;
  if (layer === 'rollout') {
    for (let j = 0; j < T; j++) row[j] = a.rollout[q * T + j];
    what = 'attention rollout through all layers (heads averaged, plus the residual path)';
  } else {
    const m = a.attention[Number(layer)];
    const heads = head === 'mean' ? [...Array(i.n_head).keys()] : [Number(head)];
    for (const h of heads)
      for (let j = 0; j < T; j++) row[j] += m[(h * T + q) * T + j] / heads.length;
    what = `layer ${Number(layer) + 1}, ${head === 'mean' ? 'mean of the heads' : `head ${Number(head) + 1}`}`;
  }
  const patches = Array.from(row.slice(1));
  drawOverlay($('vit-attn'), image, patches, i.grid, query);
  const src = query < 0 ? '[CLS]' : `patch ${query + 1}`;
  const top = patches.indexOf(Math.max(...patches));
  $('vit-attn-caption').textContent =
    `From ${src}, ${what}: ${(100 * row[0]).toFixed(0)}% to [CLS], the most to ` +
    `patch ${top + 1} (${(100 * patches[top]).toFixed(0)}%). ` +
    `Click a patch (or focus the map and use the arrow keys) to see where it ` +
    `looks${query >= 0 ? '; “from [CLS]” or Escape goes back' : ''}. (${n} patches)`;
}

async function positions() {
  if (!info()) return;
  const sim = await job(() => engine.vit_positions());
  const g = info().grid;
  drawPositions($('vit-pos'), sim, g);
  const p = (state.positions = positionStats(sim, g));
  const f = (v) => v.toFixed(2);
  $('vit-pos-stats').textContent =
    `This model: mean cosine ${f(p.near)} between neighbouring patches, ${f(p.far)} between the others; ` +
    `${f(p.row)} within a row, ${f(p.col)} within a column.`;
}

// Held-out accuracy and confusion matrix over n images, asked for in chunks of 25 so that no engine
// call holds the one queue for long (a demo or a training chunk waits for it); stopped once it has
// AUTO_EVAL_MIN digits and `budgetMs` has passed (said by ofDigits).
async function evaluate(n, progress = null, budgetMs = AUTO_EVAL_MS) {
  let confusion = null;
  let seen = 0;
  const t0 = performance.now();
  for (let start = 0; start < n; start += 25) {
    if (seen >= AUTO_EVAL_MIN && performance.now() - t0 > budgetMs) break;
    if (progress) progress.textContent = `Evaluating: ${start} of ${n} held-out digits…`;
    const e = await job(() => engine.vit_evaluate(start, Math.min(25, n - start)));
    confusion = confusion
      ? confusion.map((row, t) => row.map((v, p) => v + e.confusion[t][p]))
      : e.confusion;
    seen += e.n;
    await nextTask();
  }
  const correct = confusion.reduce((a, row, t) => a + row[t], 0);
  const e = { accuracy: correct / seen, confusion, n: seen, asked: n };
  state.evals.push({ step: state.info ? state.info.steps : 0, accuracy: e.accuracy, n: e.n });
  fillConfusion($('vit-confusion'), e.confusion);
  return e;
}

function chart() {
  const total = state.info ? state.info.total_steps : 1;
  $('vit-chart').hidden = state.losses.length === 0;
  drawChart($('vit-chart'), state.losses, state.accs || [], total);
}

// The run being trained, kept while it is paused (Pause, then Resume continues it; Train from scratch
// or a loaded model drops it): {steps, chunk, prev, evalEvery, nextEval}.
let run = null;

// An evaluation the Evaluate button started (training and it exclude each other: one status line).
let evaluating = false;

function trainButtons() {
  $('vit-pause').disabled = evaluating || (!running && !run);
  $('vit-pause').textContent = running || !run ? 'Pause' : 'Resume';
  $('vit-train').disabled = running || evaluating;
  $('vit-load').disabled = running || evaluating;
  $('vit-eval').disabled = running || evaluating;
}

// Train from scratch: a new model, then the steps.
function train() {
  if (running) return;
  // Outside the field's range: refused with its reason, as the Train card's form does.
  const raw = $('vit-steps').value.trim();
  const steps = Number(raw);
  if (!(Number.isInteger(steps) && steps >= 10 && steps <= 20000)) {
    $('vit-train-status').textContent =
      `steps is “${raw}”; give a whole number from 10 to 20000 (600 reads the digits well)`;
    return;
  }
  return drive(async () => {
    showInfo(await job(() => engine.vit_new(7, 2, 4, 64, steps, 32, 2e-3, 0)));
    // The previous model's confusion matrix goes; the drawn digit is asked of the new model.
    $('vit-confusion').innerHTML =
      '<caption>the confusion matrix comes with the first evaluation of this run</caption>';
    await predict();
    state.losses = [];
    state.accs = [];
    state.msPerStep = null;
    const evalEvery = Math.max(50, Math.round(steps / 8));
    run = { steps, chunk: 1, prev: 0, evalEvery, nextEval: evalEvery };
  });
}

// Run the steps of `run` until it ends or is paused (after `first`, if given); a paused run stays.
async function drive(first) {
  running = true;
  trainButtons();
  try {
    if (first) await first();
    await steps();
    if (run)
      $('vit-train-status').textContent =
        `Paused at step ${state.trainedSteps} of ${run.steps}: Resume continues it, Train from scratch starts again.`;
  } catch (e) {
    run = null;
    state.error = String(e.message || e);
    $('vit-train-status').textContent = `Training stopped: ${state.error}`;
  } finally {
    running = false;
    trainButtons();
  }
}

async function steps() {
  // A model loaded meanwhile (the file input stays open) ends this run.
  const cur = run;
  while (running && run === cur) {
    const t0 = performance.now();
    const r = await job(() => engine.vit_train(cur.chunk));
    const ms = performance.now() - t0;
    // The time per step (smoothed) and what the run has left at that speed: on a slow adapter
    // (SwiftShader) 600 steps take about 11 minutes, which the card says after its first steps.
    const per = ms / Math.max(1, r.steps - cur.prev);
    cur.prev = r.steps;
    state.msPerStep = state.msPerStep ? 0.7 * state.msPerStep + 0.3 * per : per;
    const left = ((cur.steps - r.steps) * state.msPerStep) / 1000;
    state.left = left;
    // Keep each call near 60 ms (a step of 32 images is ~15 ms on a free core) so the page stays
    // responsive even on a busy machine.
    cur.chunk = Math.max(1, Math.min(50, Math.floor((cur.chunk * 60) / Math.max(ms, 1))));
    state.trainedSteps = r.steps;
    state.info.steps = r.steps;
    state.losses.push([r.steps, r.loss]);
    const slow = !(r.steps < cur.steps && left > 120)
      ? ''
      : state.info && state.info.backend !== 'cpu'
        ? ' — this device is slow for it (a software GPU adapter is; the Device card’s Backend ' +
          'selector can switch to the CPU backend)'
        : ' — a long run here; fewer steps finish sooner (600 read the digits well)';
    $('vit-train-status').textContent =
      `step ${r.steps}/${cur.steps}: loss ${r.loss.toFixed(3)} (${state.msPerStep.toFixed(0)} ms/step` +
      `${r.steps < cur.steps ? `, about ${duration(left)} left` : ''})${slow}`;
    if (r.steps >= cur.nextEval || r.done) {
      cur.nextEval += cur.evalEvery;
      const e = await evaluate(r.done ? 1000 : 300);
      state.accs.push([r.steps, e.accuracy]);
      $('vit-train-status').textContent +=
        `; held-out accuracy ${(100 * e.accuracy).toFixed(1)}% ${ofDigits(e)}`;
      await predict();
      await positions();
    }
    chart();
    if (r.done) {
      run = null;
      break;
    }
    await nextTask();
  }
}

async function loadShipped() {
  const r = await fetch(new URL('../models/vit-digits.safetensors', import.meta.url));
  if (!r.ok) throw new Error(`the shipped model is missing (${r.status})`);
  const bytes = new Uint8Array(await r.arrayBuffer());
  const i = await job(() => engine.vit_load(bytes, 'shipped model'));
  run = null;
  trainButtons();
  showInfo(i, i.note || '');
  state.losses = [];
  state.accs = [];
  const e = await evaluate(1000);
  $('vit-train-status').textContent =
    `held-out accuracy ${(100 * e.accuracy).toFixed(1)}% ${ofDigits(e, ' generated digits')}`;
  await positions();
}

// A checkpoint file the user picked: any error (not safetensors, a GPT checkpoint, a NaN) is shown and
// the current model stays.
async function loadFile(file) {
  const bytes = new Uint8Array(await file.arrayBuffer());
  const i = await job(() => engine.vit_load(bytes, file.name));
  run = null;
  trainButtons();
  showInfo(i, i.note || '');
  const e = await evaluate(1000, $('vit-train-status'));
  $('vit-train-status').textContent =
    `${file.name}: held-out accuracy ${(100 * e.accuracy).toFixed(1)}% ${ofDigits(e)}`;
  await positions();
  await predict();
}

async function save() {
  const bytes = await job(() => engine.vit_save());
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([bytes], { type: 'application/octet-stream' }));
  a.download = 'vit.safetensors';
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

async function sample() {
  const k = (state.sampleIndex = (state.sampleIndex || 0) + 1);
  const s = await job(() => engine.vit_sample(0, k));
  pad.clear();
  pad.show(s.pixels);
  image = Float32Array.from(s.pixels);
  state.sampleLabel = s.label;
  await predict();
}

function wire() {
  pad = makePad($('vit-pad'), () => {
    image = pad.toImage();
    predict().catch(fail);
  });
  $('vit-clear').addEventListener('click', () => {
    pad.clear();
    image = null;
    clearAnswer();
  });
  $('vit-sample').addEventListener('click', () => sample().catch(fail));
  $('vit-train').addEventListener('click', () => train());
  $('vit-pause').addEventListener('click', () => {
    if (running) running = false;
    else if (run) drive(null);
  });
  $('vit-load').addEventListener('click', () =>
    loadShipped()
      .then(() => predict())
      .catch(fail),
  );
  $('vit-eval').addEventListener('click', () => {
    if (running) return;
    evaluating = true;
    trainButtons();
    evaluate(1000, $('vit-train-status'), Infinity)
      .then((e) => {
        $('vit-train-status').textContent =
          `held-out accuracy ${(100 * e.accuracy).toFixed(1)}% of ${e.n} generated ` +
          `digits${run ? ` (paused at step ${state.trainedSteps} of ${run.steps})` : ''}`;
      })
      .catch(fail)
      .finally(() => {
        evaluating = false;
        trainButtons();
      });
  });
  $('vit-save').addEventListener('click', () => save().catch(fail));
  $('vit-file').addEventListener('change', (e) => {
    const f = e.target.files && e.target.files[0];
    if (!f) return;
    $('vit-file-error').hidden = true;
    loadFile(f).catch((err) => {
      // Beside the file input; the library's message names the file and where it belongs.
      $('vit-file-error').textContent =
        `Not loaded: ${String(err.message || err)}. The model shown is unchanged.`;
      $('vit-file-error').hidden = false;
    });
    e.target.value = '';
  });
  $('vit-layer').addEventListener('change', () => {
    headFollowsLayer();
    drawAttention();
  });
  $('vit-head').addEventListener('change', drawAttention);
  $('vit-from-cls').addEventListener('click', () => {
    query = -1;
    drawAttention();
  });
  // The keyboard's way round the patch grid: arrows move the query patch (from [CLS], the first
  // arrow starts at the top-left patch), Escape goes back to [CLS]; the caption says what is shown.
  $('vit-attn').addEventListener('keydown', (e) => {
    if (!info()) return;
    const next = movePatch(query, e.key, info().grid);
    if (next === null) return;
    query = next;
    e.preventDefault();
    drawAttention();
  });
  $('vit-attn').addEventListener('click', (e) => {
    if (!info()) return;
    query = patchAt(e.clientX, e.clientY, $('vit-attn').getBoundingClientRect(), info().grid);
    drawAttention();
  });
}

function fail(e) {
  state.error = String((e && e.message) || e);
  $('vit-status').textContent = `Error: ${state.error}`;
}

async function start() {
  try {
    const { engine: m } = await loadDevice();
    engine = m;
    state.checksum = await engine.vit_digits_checksum(7, 200);
    $('vit-status').textContent = '';
    try {
      await loadShipped();
      await sample();
    } catch (e) {
      $('vit-train-status').textContent =
        `${String(e.message || e)}; train one with the button above.`;
      $('vit-train').disabled = false;
    }
    state.ready = true;
  } catch (e) {
    fail(e);
  }
}

// The card starts (loads the shipped model, measures it, draws) only when it scrolls into view, so
// the rest of the page loads as fast as before.
function main() {
  if (!root) return;
  build();
  wire();
  const seen = new IntersectionObserver((entries) => {
    if (entries.some((e) => e.isIntersecting)) {
      seen.disconnect();
      start();
    }
  });
  seen.observe(root);
}

main();
