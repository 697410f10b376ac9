// The course model (web/models/course-vanilla.safetensors and its facts in course-vanilla.json): the
// assignment's vanilla model pretrained and finetuned here on the course's own files, offered in the
// Models card and loaded on demand (6.8 MB). Loaded, it is the vanilla model: Ask answers "Where was
// … born?" about the course's people with its attention maps (the page ships no text of the course
// files, so the student types a name from their birth_dev.tsv). Its facts say its dev score and the
// commands that made it. State for tests: window.__page.course = {state, facts, label, info, note}.
import { $, P, S, job } from './core.js';
import { errText, esc } from './ui.js';
import { emit, on } from './events.js';
import { countOf, pctOf } from './shipped.js';
import * as store from './store.js';

export const COURSE_FACTS = 'web/models/course-vanilla.json';
export const COURSE_MODEL = 'web/models/course-vanilla.safetensors';

const C = (S.course = { state: 'none', facts: null, label: null, info: null, note: null });

// The facts file; without it (a build that does not ship the model) the box stays hidden.
async function readFacts() {
  const r = await fetch(COURSE_FACTS, { cache: 'no-cache' });
  if (!r.ok) throw new Error(`${COURSE_FACTS} is not on the server (HTTP ${r.status})`);
  const f = await r.json();
  if (!f || typeof f.label !== 'string' || !f.dev_accuracy || !Number.isFinite(f.dev_accuracy.total)) {
    throw new Error(`${COURSE_FACTS} lacks a label or dev_accuracy`);
  }
  return f;
}

function show() {
  const box = $('course-box');
  const f = C.facts;
  // The Ask card's pointer to it (web/page/shipped.js writes it hidden before the facts are read).
  const hint = document.getElementById('ask-course-hint');
  if (hint) hint.hidden = !(f && C.state !== 'loaded');
  if (!f) { box.hidden = true; return; }
  const mb = Number.isFinite(f.bytes) ? ` (${(f.bytes / 1e6).toFixed(1)} MB)` : '';
  const score = `dev accuracy <strong>${pctOf(f.dev_accuracy)}</strong> (${countOf(f.dev_accuracy)}) on the course's ${esc(f.dev_file || 'birth_dev.tsv')}` +
    ` (London every time ${pctOf(f.baseline)}, the same model without pretraining ${pctOf(f.no_pretraining)})`;
  const cmd = Array.isArray(f.command) ? f.command : [];
  const current = S.models.some((m) => m.slot === 'vanilla' && m.label === C.label);
  const state = C.state === 'loaded' && current
    ? ' It is the vanilla model now: ask it about a person from your copy of the course\'s birth_dev.tsv (the page ships none of the course\'s text).'
    : C.state === 'loading' ? ' Loading…' : '';
  $('course-facts').innerHTML = `<p><strong>Course model</strong>${f.size ? ` (${esc(f.size)})` : ''}: the assignment's vanilla model pretrained and finetuned on the course's own files by this engine; ${score}.${state}</p>` +
    `<details class="shipped-how"><summary>How the course model was made</summary>${cmd.map((c) => `<pre><code>${esc(c)}</code></pre>`).join('')}` +
    `${f.trained ? `<p class="muted small">${esc(f.trained)}</p>` : ''}${f.note ? `<p class="muted small">${esc(f.note)}</p>` : ''}${f.reproduce ? `<p class="muted small">Reproduced by ${esc(f.reproduce)}.</p>` : ''}</details>` +
    `${C.note ? `<p class="muted small" id="course-note">${esc(C.note)}</p>` : ''}`;
  const btn = $('load-course');
  btn.textContent = `Load the course model${mb}`;
  btn.hidden = C.state === 'loaded' && current;
  btn.disabled = C.state === 'loading';
  box.hidden = false;
}

// Fetch the checkpoint and make it the vanilla model (the one it replaces can be kept for comparison
// first with "Keep for comparison" in the Models table). `remember`: kept in this browser as the
// vanilla model, so a reload loads it again (as the shipped model is: a mark, not the 6.8 MB).
export async function loadCourse(remember = true) {
  if (C.state === 'loading') return;
  if (!C.facts) {
    try { C.facts = await readFacts(); } catch (e) { C.note = `The course model could not be loaded: ${errText(e)}.`; show(); return; }
  }
  C.state = 'loading';
  C.note = null;
  show();
  try {
    let r;
    try { r = await fetch(COURSE_MODEL, { cache: 'no-cache' }); } catch (e) { throw new Error(`${COURSE_MODEL} could not be fetched (${errText(e)})`); }
    if (!r.ok) throw new Error(`${COURSE_MODEL} is not on the server (HTTP ${r.status})`);
    const bytes = new Uint8Array(await r.arrayBuffer());
    C.label = C.facts.label;
    C.info = await job('load_model', () => P.wasm.page_load_model(bytes, C.label));
    C.state = 'loaded';
    S.loaded = C.info;
    await emit('models');
    if (remember) await store.put(`model:${C.info.variant}`, { course: true, label: C.label, savedAt: Date.now() }).catch(() => {});
  } catch (e) {
    C.state = 'failed';
    C.note = `The course model could not be loaded: ${errText(e)}.`;
  }
  show();
}

export async function wireCourse() {
  $('load-course').addEventListener('click', () => loadCourse(true));
  // After the Models card has read the models (its listener was registered first).
  on('models', () => { if (C.facts) show(); });
  if (!C.facts) {
    try {
      C.facts = await readFacts();
    } catch (e) {
      C.note = errText(e);
    }
  }
  show();
}
