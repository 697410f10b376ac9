// The Models card: the models of this page (trained or loaded), download, upload, and the models
// kept in this browser.
import * as store from './store.js';
import { $, P, S, data, job, running, setStatus } from './core.js';
import { errText, esc, fmt, showBox } from './ui.js';
import { emit, on } from './events.js';
import { loadShipped, showShipped } from './shipped.js';
import { loadOnDemand, onDemandOf } from './ondemand.js';

// ---------------------------------------------------------------------------------------------
// Models

// The registry's models, read from the engine into S.models. Callers read them before they change
// the state a test or another card waits on (a model's label must be there when the run is shown
// as finished), then show them (showModels).
export async function readModels() {
  try {
    S.models = await P.engine.models();
  } catch {
    S.models = [];
  }
}

export async function refreshModels() {
  await readModels();
  showModels();
}

// A model as the cards name it: its variant, "kept" for the one kept for comparison, and where it
// came from ("vanilla · shipped model (built-in corpus)", "vanilla, kept · finetuned here …").
export const modelName = (m) => `${m.variant}${m.kept ? ', kept' : ''} · ${m.label}`;
// The models Ask and Evaluate offer: a kept model still identical to the current one is not asked twice.
export const askable = () => S.models.filter((m) => !m.same_as_current);

export function showModels() {
  const body = $('models').querySelector('tbody');
  body.innerHTML = S.models.length
    ? S.models
        .map(
          (m) =>
            `<tr>
      <td>${esc(m.variant)}${m.kept ? ', <strong>kept</strong>' : ''}</td>
      <td>${m.n_layer} layers × ${m.n_head} heads × width ${m.n_embd} ` +
            `(${fmt.int(m.params)} parameters, vocabulary ${m.vocab_size})</td>
      ` +
            `<td>${esc(m.label)}` +
            (m.same_as_current
              ? ' <span class="muted small">(the same as the current model until a new one replaces it)</span>'
              : '') +
            `</td>
      <td><button class="secondary small" data-download="${esc(m.slot)}">Download</button>
        ${
          m.kept
            ? `<button class="secondary small" data-forget="${esc(m.variant)}">Remove</button>`
            : `<button class="secondary small" data-keep="${esc(m.variant)}" ` +
              `title="Keep this model beside the next ${esc(m.variant)} model you train or load, ` +
              `to ask and evaluate both">Keep for comparison</button>`
        }</td></tr>`,
        )
        .join('')
    : '<tr><td colspan="4" class="muted">None yet: train one or load a checkpoint.</td></tr>';
  const sel = $('eval-variant');
  const keep = sel.value;
  sel.innerHTML = askable()
    .map((m) => `<option value="${esc(m.slot)}">${esc(modelName(m))}</option>`)
    .join('');
  if (askable().some((m) => m.slot === keep)) sel.value = keep;
  $('h-from').value = S.models.length ? $('h-from').value : 'scratch';
  // The shipped model is current while the vanilla model is the one loaded under its label.
  const sh = S.shipped;
  const current = S.models.some((m) => m.slot === 'vanilla' && m.label === sh.label);
  if (sh.state === 'loaded' && !current) sh.state = 'replaced';
  // Kept for comparison: Ask and Evaluate offer it already, so it is not loaded a second time.
  sh.kept = S.models.some((m) => m.kept && m.label === sh.label);
  showShipped();
  setStatus(S.status);
}

// The file a model downloads as: its variant and where it came from, so two downloads are told
// apart ("vanilla-my-course.safetensors", "vanilla.kept-shipped-model-built-in-corpus.safetensors");
// a file name in the label loses its extension ("… (the course's wiki.txt)" → "…-wiki"), so the
// name ends in one extension only.
export function downloadName(slot) {
  const variant = slot.replace(/:kept$/, '');
  const m = S.models.find((x) => x.slot === slot);
  const stem = m
    ? m.label
        .replace(/\.(safetensors|params|txt|tsv)\b/gi, '')
        .replace(/[^A-Za-z0-9._-]+/g, '-')
        .replace(/^[-.]+|-+$/g, '')
        .slice(0, 60)
    : '';
  const kept = slot.endsWith(':kept') ? '.kept' : '';
  // "vanilla.params" downloads as vanilla.safetensors, not vanilla-vanilla.safetensors.
  const name =
    stem && stem.startsWith(variant)
      ? stem.replace(variant, `${variant}${kept}`)
      : `${variant}${kept}${stem ? `-${stem}` : ''}`;
  return `${name}.safetensors`;
}

export async function download(slot) {
  try {
    const bytes = await job('model_bytes', () => P.engine.model_bytes(slot));
    const url = URL.createObjectURL(new Blob([bytes], { type: 'application/octet-stream' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = downloadName(slot);
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
export function isSafetensors(bytes) {
  return !(
    bytes.length >= 2 &&
    ((bytes[0] === 0x50 && bytes[1] === 0x4b) || (bytes[0] === 0x80 && bytes[1] === 0x02))
  );
}

export async function uploadModel(file) {
  showBox('model-error', null);
  showBox('model-note', null);
  S.modelError = null;
  try {
    let bytes = new Uint8Array(await file.arrayBuffer());
    // A course .params file holds no vocabulary (it comes from the pretraining corpus selected
    // above, as run.py builds it) and, for vanilla, no head count: run.py's 8 unless the card's
    // "heads of a vanilla .params" says otherwise (a synthesizer's is read from its weights).
    // A number input holds "" for what it cannot read ("2e"): refused as the others are.
    const typed = $('params-heads').validity.badInput
      ? '(not a number)'
      : $('params-heads').value.trim();
    const heads = typed === '' ? undefined : Number(typed);
    if (heads !== undefined && !(Number.isInteger(heads) && heads >= 1 && heads <= 64)) {
      throw new Error(
        `heads of a vanilla .params is “${typed}”: give a whole number from 1 to 64, or ` +
          `leave it empty for run.py's 8`,
      );
    }
    const corpus = data.wiki;
    // Said at once: the engine may be busy (a device measurement, a training chunk) before it reads the file.
    const busy = running();
    showBox(
      'model-note',
      `<p role="status">Loading ${esc(file.name)}…` +
        (busy
          ? ` (next: the engine is busy ` +
            `${busy === 'measure' ? 'timing a few training steps of this device, once' : `with ${esc(busy)}`})`
          : '') +
        `</p>`,
    );
    const info = await job('load_model', () =>
      P.engine.load_model(
        bytes,
        file.name,
        corpus ? corpus.name : undefined,
        corpus ? corpus.text : undefined,
        heads,
      ),
    );
    const loaded =
      `<p role="status">Loaded ${esc(file.name)} as the ${esc(info.variant)} ` +
      `model: ${info.n_layer} layers, ${info.n_head} heads, width ${info.n_embd} ` +
      `(${info.params.toLocaleString('en')} parameters). Ask and Evaluate use it now; this ` +
      `browser stores it, so a reload loads it again.</p>`;
    showBox('model-note', loaded);
    // Kept as our safetensors, which carries its vocabulary.
    const params = !isSafetensors(bytes);
    if (params) bytes = await job('model_bytes', () => P.engine.model_bytes(info.variant));
    // A vanilla .params file does not say its head count: a wrong one loads without an error and
    // answers wrongly, so the count used is said where the student looks.
    if (params && info.variant === 'vanilla') {
      showBox(
        'model-note',
        `${loaded}<p>${esc(file.name)} does not record its head count: it was read with ` +
          `<strong>${info.n_head} heads</strong> ` +
          `(${heads === undefined ? 'run.py’s' : 'the count typed beside the file'}) ` +
          `and the vocabulary of ${esc(corpus ? corpus.name : 'the built-in corpus')}. If it was ` +
          `trained with another head count, type it in “heads of a vanilla .params” and load the ` +
          `file again: with the wrong one it answers wrongly, without an error.</p>`,
      );
    }
    await store
      .put(`model:${info.variant}`, { bytes, label: file.name, savedAt: Date.now() })
      .catch(() => {});
    S.loaded = info;
    await emit('models');
    $('eval-variant').value = info.variant;
  } catch (e) {
    showBox('model-note', null);
    S.modelError = errText(e);
    showBox(
      'model-error',
      `<p>${esc(S.modelError)}</p><p>Load a <code>.safetensors</code> checkpoint from ` +
        `<code>attnlab</code> (the command line or this page) or a <code>.params</code> file ` +
        `saved by the course’s <code>run.py</code> (with the pretraining corpus it was trained ` +
        `with selected above, and for vanilla a head count other than run.py’s 8 typed beside ` +
        `the file).</p>`,
    );
  }
}

// The models kept in this browser; returns the variants it had a model for. A "model:vanilla"
// record of {shipped: true} means the shipped model, one of {onDemand: id} (or an earlier page's
// {course: true}) a model of web/page/ondemand.js: loaded again from the server, not stored.
export async function restoreModels() {
  const had = [];
  for (const v of ['vanilla', 'synthesizer']) {
    const rec = await store.get(`model:${v}`).catch(() => null);
    if (!rec) continue;
    had.push(v);
    if (rec.shipped) {
      await loadShipped(false);
      continue;
    }
    if (onDemandOf(rec)) {
      await loadOnDemand(onDemandOf(rec), false);
      continue;
    }
    try {
      await job('load_model', () => P.engine.load_model(rec.bytes, rec.label));
    } catch (e) {
      showBox(
        'model-error',
        `<p>The saved ${v} model could not be restored: ${esc(errText(e))}</p>`,
      );
    }
  }
  await emit('models');
  return had;
}

export function wireModels() {
  on('models', refreshModels);
  $('models').addEventListener('click', async (e) => {
    const b = e.target.closest('button');
    if (!b) return;
    if (b.dataset.download) download(b.dataset.download);
    // Kept models live as long as the page (the browser keeps each variant's current model).
    if (b.dataset.keep) {
      await P.engine.keep_model(b.dataset.keep);
      await emit('models');
    }
    if (b.dataset.forget) {
      await P.engine.forget_kept(b.dataset.forget);
      await emit('models');
    }
  });
  const input = $('file-model');
  input.addEventListener('change', () => {
    if (input.files.length) uploadModel(input.files[0]);
    input.value = '';
  });
  $('load-shipped').addEventListener('click', async () => {
    if (S.shipped.state === 'loading') return;
    showBox('model-note', '<p>Loading the shipped model…</p>');
    await loadShipped(true);
    const ok = S.shipped.state === 'loaded';
    showBox(
      'model-note',
      ok ? '<p>The shipped model is the vanilla model again: Ask and Evaluate use it.</p>' : null,
    );
    // An error of an earlier upload is over once a model loads.
    if (ok) {
      showBox('model-error', null);
      S.modelError = null;
    }
  });
}
