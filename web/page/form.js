// The Train card's form: the presets and the hyperparameters, read and checked into a run spec by
// the library (src/web/spec.rs); this file only moves values between the form and the engine.
import { $, P, S } from './core.js';
import { describe, quickFor } from './sizing.js';
import { on } from './events.js';

// ---------------------------------------------------------------------------------------------
// Form

export const FIELDS = ['n_layer', 'n_head', 'n_embd', 'dropout', 'seed', 'pre_epochs', 'pre_batch', 'pre_lr', 'max_steps', 'ft_epochs', 'ft_batch', 'ft_lr'];

// The library's presets (page_preset_form in src/web/spec.rs, read once by app-train.js); the quick one's epochs, batch and max
// steps sized to this device once it is measured (web/page/sizing.js), before that 40 epochs.
// ("custom" shows the quick preset's values, as a starting point.)
export function presetValues(name) {
  const full = name === 'full';
  const v = { ...P.presetForms[`${full ? 'full' : 'quick'}:${$('h-from').value === 'scratch'}`] };
  if (full) return v;
  const q = S.sizing ? quickFor(S.sizing) : { pre_epochs: 40, max_steps: '', ft_epochs: 20 };
  for (const f of ['pre_epochs', 'pre_batch', 'max_steps', 'ft_epochs', 'ft_batch']) if (f in q) v[f] = q[f];
  return v;
}

// The presets' labels and notes with this device's measured times; the quick preset re-sized when
// it is the one selected (a custom form is left alone).
export function showSizing() {
  if (!S.sizing) return;
  const q = quickFor(S.sizing);
  const d = describe(S.sizing, q);
  S.quick = { ...q, seconds: q.preS + q.ftS, fullSeconds: d.fullS };
  NOTES.quick = d.quick;
  NOTES.full = d.full;
  $('preset').querySelector('option[value=quick]').textContent = d.quickLabel;
  $('preset').querySelector('option[value=full]').textContent = d.fullLabel;
  // Custom settings stay as they are; only the note's “Measuring this device…” goes.
  if ($('preset').value === 'custom') { $('preset-note').textContent = NOTES.custom; return; }
  applyPreset($('preset').value);
}

export const NOTES = {
  quick: 'Tiny model (2 layers, 4 heads, width 64). Its size is set to about two minutes on this device by a short measurement, taken when you first reach this card or press Pretrain.',
  full: 'The assignment’s run.py settings: pretraining is 650 epochs (about two hours on a datacentre GPU; the time here is measured with the quick preset’s).',
  custom: 'Your own settings.',
};

export function applyPreset(name) {
  const v = presetValues(name);
  for (const f of FIELDS) $(`h-${f}`).value = v[f];
  $('preset').value = name;
  $('preset-note').textContent = NOTES[name];
}

// The form read and checked by the library's rules (page_read_form in src/web/spec.rs), which
// rejects with the refusal naming the field and what was typed.
export function readSpec(kind) {
  const text = (f) => $(`h-${f}`).value;
  const pre = kind === 'pretrain';
  const form = { n_layer: text('n_layer'), n_head: text('n_head'), n_embd: text('n_embd'), dropout: text('dropout'), seed: text('seed'),
    epochs: text(pre ? 'pre_epochs' : 'ft_epochs'), batch: text(pre ? 'pre_batch' : 'ft_batch'), lr: text(pre ? 'pre_lr' : 'ft_lr'), max_steps: text('max_steps') };
  const variant = document.querySelector('input[name=variant]:checked').value;
  return P.wasm.page_read_form(kind, variant, !pre && $('h-from').value === 'model', form);
}

export function wireForm() {
  // The quick preset's steps depend on the corpus's size: size it again for new data.
  on('data', () => { if (S.sizing && P.presets) showSizing(); });
  $('preset').addEventListener('change', () => applyPreset($('preset').value));
  for (const f of FIELDS) {
    $(`h-${f}`).addEventListener('input', () => { $('preset').value = 'custom'; $('preset-note').textContent = NOTES.custom; });
  }
  $('h-from').addEventListener('change', () => {
    if ($('preset').value === 'full') applyPreset('full');
  });
}
