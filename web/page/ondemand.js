// The models the page ships but loads only when asked (each a checkpoint in web/models/ and its
// facts in a JSON file beside it), offered in the Models card:
// - the course model (course-vanilla.*): the assignment's vanilla model pretrained and finetuned here
//   on the course's own files (6.8 MB). Loaded, it is the vanilla model: Ask answers "Where was …
//   born?" about the course's people with its attention maps (the page ships no text of the course
//   files, so the student types a name from their birth_dev.tsv).
// - the shipped synthesizer (builtin-synthesizer.*): the shipped model's size and corpus with
//   synthesizer attention. Loaded, it is the synthesizer model: Ask answers with it beside the
//   vanilla model, and E9 draws its maps beside the vanilla model's (E9's button asks for it).
// Their facts say the dev score, what it shows (`finding`, where the facts have one) and the
// commands that made them. State for tests:
// window.__page.course and window.__page.synth = {state, facts, label, info, note}.
import { $, P, S, job } from './core.js';
import { countOf, errText, esc, pctOf, showBox } from './ui.js';
import { emit, on } from './events.js';
import * as store from './store.js';

// Per model: its files, what it is (one sentence), where its dev score was measured, what it is
// good for once loaded (HTML), whether the Ask card points to it (`ask-${id}-hint`); its box in
// the Models card is `${id}-box` with `${id}-facts` and the button `load-${id}`.
const MODELS = {
  course: {
    facts: 'web/models/course-vanilla.json',
    model: 'web/models/course-vanilla.safetensors',
    name: 'course model',
    what: 'the assignment’s vanilla model pretrained and finetuned on the course’s own files by this engine',
    where: (f) => `the course's ${esc(f.dev_file || 'birth_dev.tsv')}`,
    loaded:
      "ask it about a person from your copy of the course's birth_dev.tsv (the page ships none of the course's text)",
    offer: () => !current('course'),
  },
  synth: {
    facts: 'web/models/builtin-synthesizer.json',
    model: 'web/models/builtin-synthesizer.safetensors',
    name: 'shipped synthesizer',
    what:
      'the shipped model’s size and training with synthesizer attention (each row of scores ' +
      'computed from its own position alone)',
    where: () => 'the built-in corpus',
    loaded:
      'Ask answers with it beside the vanilla model, and <a href="#e9">E9</a> draws its maps ' +
      'beside the vanilla model’s',
    // Not over a synthesizer the student trained or loaded.
    offer: () => !S.models.some((x) => x.slot === 'synthesizer'),
  },
};

const state = (id) =>
  (S[id] ||= { state: 'none', facts: null, label: null, info: null, note: null });
state('course');
state('synth');
const title = (m) => m.name[0].toUpperCase() + m.name.slice(1);

// The facts file; without it (a build that does not ship the model) the box stays hidden.
async function readFacts(m) {
  const r = await fetch(m.facts, { cache: 'no-cache' });
  if (!r.ok) throw new Error(`${m.facts} is not on the server (HTTP ${r.status})`);
  const f = await r.json();
  if (
    !f ||
    typeof f.label !== 'string' ||
    typeof f.variant !== 'string' ||
    !f.dev_accuracy ||
    !Number.isFinite(f.dev_accuracy.total)
  ) {
    throw new Error(`${m.facts} lacks a label, a variant or dev_accuracy`);
  }
  return f;
}

// Whether the model is the current one of its variant (loaded, and not replaced since).
const current = (id) => {
  const C = state(id);
  return (
    C.state === 'loaded' &&
    !!C.facts &&
    S.models.some((x) => x.slot === C.facts.variant && x.label === C.label)
  );
};

// Whether the Ask card points to the model (`ask-${id}-hint`): its facts are read and it is offered.
export const offeredInAsk = (id) => !!state(id).facts && MODELS[id].offer();

function show(id) {
  const m = MODELS[id];
  const C = state(id);
  const box = $(`${id}-box`);
  const f = C.facts;
  // The Ask card's pointer to it (web/page/shipped.js writes it with the same rule).
  const hint = document.getElementById(`ask-${id}-hint`);
  if (hint) hint.hidden = !offeredInAsk(id);
  if (!f) {
    box.hidden = true;
    return;
  }
  const mb = Number.isFinite(f.bytes) ? ` (${(f.bytes / 1e6).toFixed(1)} MB)` : '';
  const score =
    `dev accuracy <strong>${pctOf(f.dev_accuracy)}</strong> (${countOf(f.dev_accuracy)}) on ${m.where(f)}` +
    ` (London every time ${pctOf(f.baseline)}, the same model without pretraining ${pctOf(f.no_pretraining)})`;
  const cmd = Array.isArray(f.command) ? f.command : [];
  const now = current(id);
  const note = now
    ? ` It is the ${esc(f.variant)} model now: ${m.loaded}.`
    : C.state === 'loading'
      ? ' Loading…'
      : '';
  const finding = typeof f.finding === 'string' ? ` ${esc(f.finding)}` : '';
  $(`${id}-facts`).innerHTML =
    `<p><strong>${title(m)}</strong>${f.size ? ` (${esc(f.size)})` : ''}: ${m.what}; ${score}.${finding}${note}</p>` +
    `<details class="shipped-how"><summary>How the ${m.name} was made</summary>` +
    `${cmd.map((c) => `<pre><code>${esc(c)}</code></pre>`).join('')}` +
    `${f.trained ? `<p class="muted small">${esc(f.trained)}</p>` : ''}` +
    `${f.note ? `<p class="muted small">${esc(f.note)}</p>` : ''}` +
    `${f.reproduce ? `<p class="muted small">${esc(f.reproduce)}</p>` : ''}</details>` +
    `${C.note ? `<p class="muted small" id="${id}-note">${esc(C.note)}</p>` : ''}`;
  const btn = $(`load-${id}`);
  btn.textContent = `Load the ${m.name}${mb}`;
  btn.hidden = now;
  btn.disabled = C.state === 'loading';
  box.hidden = false;
}

// Fetch the checkpoint and make it its variant's model (the one it replaces can be kept for
// comparison first with "Keep for comparison" in the Models table). `remember`: kept in this browser
// as that variant's model, so a reload loads it again (a mark, not the megabytes).
export async function loadOnDemand(id, remember = true) {
  const m = MODELS[id];
  const C = state(id);
  if (!m || C.state === 'loading') return;
  if (!C.facts) {
    try {
      C.facts = await readFacts(m);
    } catch (e) {
      C.note = `The ${m.name} could not be loaded: ${errText(e)}.`;
      show(id);
      return;
    }
  }
  C.state = 'loading';
  C.note = null;
  show(id);
  try {
    let r;
    try {
      r = await fetch(m.model, { cache: 'no-cache' });
    } catch (e) {
      throw new Error(`${m.model} could not be fetched (${errText(e)})`);
    }
    if (!r.ok) throw new Error(`${m.model} is not on the server (HTTP ${r.status})`);
    const bytes = new Uint8Array(await r.arrayBuffer());
    C.label = C.facts.label;
    C.info = await job('load_model', () => P.engine.load_model(bytes, C.label));
    C.state = 'loaded';
    S.loaded = C.info;
    // An error of an earlier upload is over: the card's error box says nothing beside this success.
    showBox('model-error', null);
    S.modelError = null;
    await emit('models');
    if (remember)
      await store
        .put(`model:${C.info.variant}`, { onDemand: id, label: C.label, savedAt: Date.now() })
        .catch(() => {});
  } catch (e) {
    C.state = 'failed';
    C.note = `The ${m.name} could not be loaded: ${errText(e)}.`;
  }
  show(id);
}

// Which on-demand model a browser's kept record names ({onDemand: id}; {course: true} as kept by
// earlier pages), or null.
export const onDemandOf = (rec) =>
  rec && MODELS[rec.onDemand] ? rec.onDemand : rec && rec.course ? 'course' : null;

export async function wireOnDemand() {
  for (const id of Object.keys(MODELS)) {
    $(`load-${id}`).addEventListener('click', () => loadOnDemand(id, true));
  }
  // E9 asks for the shipped synthesizer with an event (the demos do not import the page).
  window.addEventListener('attnlab-load-model', (e) => {
    if (MODELS[e.detail]) loadOnDemand(e.detail, true);
  });
  // After the Models card has read the models (its listener was registered first).
  on('models', () => {
    for (const id of Object.keys(MODELS)) if (state(id).facts) show(id);
  });
  await Promise.all(
    Object.keys(MODELS).map(async (id) => {
      const C = state(id);
      if (!C.facts) {
        try {
          C.facts = await readFacts(MODELS[id]);
        } catch (e) {
          C.note = errText(e);
        }
      }
      show(id);
    }),
  );
}
