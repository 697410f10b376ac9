// The shipped model (web/models/builtin-vanilla.safetensors and its facts in builtin-vanilla.json):
// loaded on a first visit so Ask answers at once; its facts in the Ask and Models cards.
import * as store from './store.js';
import { $, P, S, data, job } from './core.js';
import { countOf, errText, esc, pctOf } from './ui.js';
import { builtinDev } from './data.js';
import { emit } from './events.js';

// ---------------------------------------------------------------------------------------------
// The shipped model

export const SHIPPED_FACTS = 'web/models/builtin-vanilla.json';
export const SHIPPED_MODEL = 'web/models/builtin-vanilla.safetensors';
export const SHIPPED_LABEL = 'shipped model (built-in corpus)';

// The facts file, checked enough that the page can show it: {label, command, dev_accuracy,
// baseline, no_pretraining, size, trained, stand_in, ...}; throws a message naming the file.
export async function readShippedFacts() {
  let r;
  try {
    r = await fetch(SHIPPED_FACTS, { cache: 'no-cache' });
  } catch (e) {
    throw new Error(`${SHIPPED_FACTS} could not be fetched (${errText(e)})`);
  }
  if (!r.ok) throw new Error(`${SHIPPED_FACTS} is not on the server (HTTP ${r.status})`);
  let f;
  try {
    f = await r.json();
  } catch {
    throw new Error(`${SHIPPED_FACTS} is not valid JSON`);
  }
  const count = (o) =>
    o &&
    typeof o === 'object' &&
    (o.correct === null || Number.isFinite(o.correct)) &&
    Number.isFinite(o.total);
  if (
    !f ||
    typeof f !== 'object' ||
    !count(f.dev_accuracy) ||
    !count(f.baseline) ||
    !count(f.no_pretraining)
  ) {
    throw new Error(
      `${SHIPPED_FACTS} lacks dev_accuracy, baseline or no_pretraining as {"correct": c, "total": t}`,
    );
  }
  return f;
}

// Fetch the shipped checkpoint and make it the vanilla model. `remember`: keep it as this browser's
// choice (the "load the shipped model again" button), so a reload brings it back rather than the
// model it replaced. Failures are quiet: a note in the Models card, never an error box.
export async function loadShipped(remember) {
  const sh = S.shipped;
  sh.state = 'loading';
  sh.note = null;
  showShipped();
  try {
    if (!sh.facts) {
      try {
        sh.facts = await readShippedFacts();
      } catch (e) {
        sh.factsError = errText(e);
      }
    }
    const label =
      (sh.facts && typeof sh.facts.label === 'string' && sh.facts.label) || SHIPPED_LABEL;
    let r;
    try {
      r = await fetch(SHIPPED_MODEL, { cache: 'no-cache' });
    } catch (e) {
      throw new Error(`${SHIPPED_MODEL} could not be fetched (${errText(e)})`);
    }
    if (!r.ok) throw new Error(`${SHIPPED_MODEL} is not on the server (HTTP ${r.status})`);
    const bytes = new Uint8Array(await r.arrayBuffer());
    // Loaded by the page on its own (remember false), it never replaces a vanilla model the student
    // loaded meanwhile (the course model asked for during a first visit's start): checked in the
    // same engine call as the load, which the page's one queue keeps apart from other loads.
    const info = await job('load_model', async () =>
      !remember && (await P.engine.models()).some((m) => m.slot === 'vanilla')
        ? null
        : P.engine.load_model(bytes, label),
    );
    if (!info) {
      sh.state = 'skipped';
      await emit('models');
      return;
    }
    Object.assign(sh, { label, info, state: 'loaded' });
    S.loaded = info;
    await emit('models');
    // The shipped model is already finetuned: a Finetune pressed next starts from scratch unless
    // the user pretrains first (which sets "the current model" again).
    $('h-from').value = 'scratch';
    prefillAsk();
    if (remember)
      await store
        .put(`model:${info.variant}`, { shipped: true, label, savedAt: Date.now() })
        .catch(() => {});
  } catch (e) {
    sh.state = 'unavailable';
    sh.note = `The shipped model could not be loaded: ${errText(e)}. Train a model or load a checkpoint instead.`;
    await emit('models');
  }
}

// "dev accuracy X% on the built-in corpus (most-common-place baseline London Y%, same size without
// pretraining Z%)", with the counts in a tooltip.
export function factsLine(f) {
  const place = (f.baseline && f.baseline.place) || 'London';
  const title =
    `dev questions right: ${countOf(f.dev_accuracy)}; ${place} every ` +
    `time: ${countOf(f.baseline)}; without pretraining: ${countOf(f.no_pretraining)}`;
  // Two runs without pretraining were measured (1 and 4 of 136, guesses of common places): each is
  // said with what it is, since S2a shows the second one's model.
  const a = f.no_pretraining_again;
  const again = a
    ? ` (${countOf(f.no_pretraining)}) with the finetune command alone; ${pctOf(a)} (${countOf(a)}) in a second ` +
      'run of it, the model S2a compares'
    : '';
  return (
    `<span class="facts-line" title="${esc(title)}">dev accuracy <strong>${pctOf(f.dev_accuracy)}</strong> ` +
    `on the built-in corpus (most-common-place baseline ${esc(place)} ${pctOf(f.baseline)}, same size without ` +
    `pretraining ${pctOf(f.no_pretraining)}${again})</span>`
  );
}

export function sizeOf(info) {
  return info ? `${info.n_layer} layers, ${info.n_head} heads, width ${info.n_embd}` : '';
}

// The shipped model's facts in the Models card (with the commands that made it and the button that
// loads it again); the Ask card names it with its dev score (web/page/ask.js showAskWith).
export function showShipped() {
  const sh = S.shipped;
  const f = sh.facts;
  const box = $('shipped-box');
  const standIn = f && f.stand_in === true;
  const who = standIn
    ? '<strong class="stand-in">Stand-in model</strong> (placeholder numbers, not a ' +
      'measurement: the real shipped model replaces it)'
    : '';
  const lines = [];
  if (f) {
    const cmd = Array.isArray(f.command) ? f.command : f.command ? [f.command] : [];
    const mismatch =
      sh.info && f.size && f.size !== sizeOf(sh.info)
        ? ` (its facts file says ${esc(f.size)}, but the checkpoint is ${sizeOf(sh.info)})`
        : '';
    lines.push(
      `<p>${standIn ? `${who}. ` : ''}<strong>Shipped model</strong>` +
        `${f.size ? ` (${esc(f.size)})` : ''}${mismatch}: ${factsLine(f)}.` +
        `${sh.state === 'loaded' ? ' It is the vanilla model now.' : ''}</p>`,
    );
    if (cmd.length || f.trained) {
      lines.push(
        `<details class="shipped-how"><summary>How the shipped model was made</summary>` +
          `${cmd.map((c) => `<pre><code>${esc(c)}</code></pre>`).join('')}` +
          `${f.trained ? `<p class="muted small">${esc(f.trained)}</p>` : ''}` +
          `${f.note ? `<p class="muted small">${esc(f.note)}</p>` : ''}</details>`,
      );
    }
  } else if (sh.state === 'loaded') {
    lines.push(
      `<p><strong>Shipped model</strong> ` +
        `(${sizeOf(sh.info)}). ${sh.factsError ? `Its facts could not be read: ${esc(sh.factsError)}.` : ''}</p>`,
    );
  }
  if (sh.note) lines.push(`<p class="muted small" id="shipped-note">${esc(sh.note)}</p>`);
  const offered = f && ['replaced', 'skipped'].includes(sh.state);
  if (offered && sh.kept)
    lines.push(
      '<p class="muted small" id="shipped-kept">It is kept for comparison: Ask and Evaluate ' +
        'offer it as “vanilla, kept”.</p>',
    );
  $('shipped-facts').innerHTML = lines.join('');
  // Offered whenever the files are there and the shipped model is neither the current one nor kept.
  $('load-shipped').hidden = !(offered && !sh.kept);
  $('load-shipped').disabled = sh.state === 'loading';
  box.hidden = lines.length === 0 && $('load-shipped').hidden;
}

export function exampleNames(n) {
  try {
    return builtinDev()
      .slice(0, n)
      .map(([q]) => q.replace(/^Where was /, '').replace(/ born\?$/, ''));
  } catch {
    return [];
  }
}

export function prefillAsk() {
  if ($('ask-text').value.trim()) return;
  const [first] = exampleNames(1);
  if (first) $('ask-text').value = first;
}
