// The Train card's form: the presets and the hyperparameters, read and checked into a run spec by
// the library (src/wasm/spec.rs); this file only moves values between the form and the engine.
import { $, P, S } from './core.js';
import { fills, fits, quickFor, sizeRun, timeQuick } from './sizing.js';
import { describe } from './preset-notes.js';
import { on } from './events.js';
import { useNotes, useEmbedded } from './data.js';

// ---------------------------------------------------------------------------------------------
// Form

export const FIELDS = [
  'n_layer',
  'n_head',
  'n_embd',
  'dropout',
  'seed',
  'pre_epochs',
  'pre_batch',
  'pre_lr',
  'pre_decay',
  'max_steps',
  'ft_epochs',
  'ft_batch',
  'ft_lr',
];

// The library's presets (preset_form in src/wasm/spec.rs, read once by app-train.js); the quick one's epochs, batch
// and max steps sized to this device once it is measured (web/page/sizing.js), before that 40 epochs; the
// middle and full ones with the largest batches that fit this device (S.fit).
// ("custom" shows the quick preset's values, as a starting point.)
export function presetValues(name) {
  const big = name === 'full' || name === 'middle';
  const v = { ...P.presetForms[`${big ? name : 'quick'}:${$('h-from').value === 'scratch'}`] };
  if (big) {
    const f = S.fit && S.fit[name];
    if (f) {
      if (f.pre >= 1) v.pre_batch = Math.min(v.pre_batch, f.pre);
      if (f.ft >= 1) v.ft_batch = Math.min(v.ft_batch, f.ft);
    }
    return v;
  }
  const q = S.sizing ? quickFor(S.sizing) : { pre_epochs: 40, max_steps: '', ft_epochs: 20 };
  for (const f of ['pre_epochs', 'pre_batch', 'max_steps', 'ft_epochs', 'ft_batch'])
    if (f in q) v[f] = q[f];
  return v;
}

// The presets' labels and notes with this device's measured times; the quick preset re-sized when
// it is the one selected (a custom form is left alone). Asks the engine for the data's packed
// share and what fits (quick calls), so it is async; the last call wins.
let sizing = 0;
let sizingNow = Promise.resolve();
export function showSizing() {
  sizingNow = sizeForm().catch((e) => console.warn('sizing the presets failed:', e));
  return sizingNow;
}
// The last sizing asked for, settled: a run started meanwhile (Finetune pressed right after a
// pretraining, while the batches are fitted again beside the new model) waits for its batches.
export const sizingSettled = () => sizingNow;
async function sizeForm() {
  if (!S.sizing) return;
  const mine = ++sizing;
  await fills();
  const fit = await fits().catch(() => null);
  await timeQuick(S.sizing).catch((e) => console.warn('timing the quick preset failed:', e));
  if (mine !== sizing) return;
  S.fit = fit;
  const q = quickFor(S.sizing);
  // The larger presets' times are their whole run: pretraining, then finetuning from that model
  // (10 epochs; not the 75 from scratch the Finetune fields show before a pretrained model exists).
  const mid = sizeRun(S.sizing, 'middle', P.presetForms['middle:false'], fit && fit.middle);
  const full = sizeRun(S.sizing, 'full', P.presetForms['full:false'], fit && fit.full);
  const d = describe(S.sizing, q, mid, full);
  S.quick = { ...q, seconds: q.preS + q.ftS, fullSeconds: d.fullS };
  S.presetSizes = { middle: mid, full };
  NOTES.quick = d.quick;
  NOTES.middle = d.middle;
  NOTES.full = d.full;
  MORE.quick = d.quickMore;
  MORE.middle = d.middleMore;
  MORE.full = d.fullMore;
  S.presetLabels = { quick: d.quickLabel, middle: d.middleLabel, full: d.fullLabel };
  S.presetShort = { quick: d.quickShort, middle: d.middleShort, full: d.fullShort };
  showLabels();
  // Custom settings stay as they are; only the note's “Measuring this device…” goes.
  if ($('preset').value === 'custom') {
    showNote('custom');
    return;
  }
  // While a saved run waits to be resumed the form shows that run's settings (restoreForm): a new
  // measurement updates the note, not the fields.
  if (!$('resume-banner').hidden) {
    showNote($('preset').value);
    return;
  }
  applyPreset($('preset').value);
}

// The presets' option labels: whole, or on a narrow screen (whose select shows about 35
// characters) the name and the time, the whole label as the option's tooltip.
const narrow = window.matchMedia('(max-width: 30rem)');
narrow.addEventListener('change', () => showLabels());
function showLabels() {
  if (!S.presetLabels) return;
  for (const [name, label] of Object.entries(S.presetLabels)) {
    const opt = $('preset').querySelector(`option[value=${name}]`);
    opt.textContent = narrow.matches ? S.presetShort[name] : label;
    opt.title = label;
  }
}

// A preset's note (what it is, its time here, what to expect) and its details (why these
// settings, how the time is estimated), shown under "details" below the note.
export const MORE = { quick: '', middle: '', full: '', custom: '' };
export function showNote(name) {
  $('preset-note').textContent = NOTES[name] || '';
  $('preset-more-text').textContent = MORE[name] || '';
  $('preset-more').hidden = !MORE[name];
}

export const NOTES = {
  quick:
    'Tiny model (2 layers, 4 heads, width 64). Its size is set to about two minutes on this ' +
    'device by a short measurement, taken when you first reach this card or press Pretrain.',
  middle:
    'Half the shipped model’s depth (2 layers, 8 heads, width 128) on the built-in people’s ' +
    'birth notes; its time here is measured when you first reach this card.',
  full:
    'The assignment’s run.py settings: pretraining is 650 epochs (the handout planned about ' +
    'two hours on the course’s cloud GPU; this engine’s CLI kept the pace of about 10 min ' +
    'for them on an NVIDIA H100; the time here is measured with the quick preset’s).',
  custom: 'Your own settings.',
};

// The middle preset pretrains on the built-in corpus's birth notes: choosing it switches the
// built-in corpus to them, and choosing quick or full switches a cut of it (the notes or the birth
// sentences) back to the whole biographies (the user's own or served files are left alone). Only
// the user's choice switches: a data change re-applies the preset's values, not its text.
function choosePreset(name) {
  if (name === 'middle' && S.dataSource === 'embedded') useNotes();
  if ((name === 'quick' || name === 'full') && ['notes', 'births'].includes(S.dataSource))
    useEmbedded();
  applyPreset(name);
}

// Set the form to a preset's values (sized to this device) and show its note.
export function applyPreset(name) {
  const v = presetValues(name);
  for (const f of FIELDS) $(`h-${f}`).value = v[f];
  $('preset').value = name;
  showNote(name);
}

// The form read and checked by the library's rules (read_form in src/wasm/spec.rs), which
// rejects with the refusal naming the field and what was typed.
export function readSpec(kind) {
  const text = (f) => $(`h-${f}`).value;
  const pre = kind === 'pretrain';
  const form = {
    n_layer: text('n_layer'),
    n_head: text('n_head'),
    n_embd: text('n_embd'),
    dropout: text('dropout'),
    seed: text('seed'),
    epochs: text(pre ? 'pre_epochs' : 'ft_epochs'),
    batch: text(pre ? 'pre_batch' : 'ft_batch'),
    lr: text(pre ? 'pre_lr' : 'ft_lr'),
    max_steps: text('max_steps'),
    decay: pre ? text('pre_decay') : '',
  };
  const variant = document.querySelector('input[name=variant]:checked').value;
  return P.engine.read_form(kind, variant, !pre && $('h-from').value === 'model', form);
}

// The form as a run was started from it (kept in the saved run), and put back when that run is
// resumed after a reload: the fields then show the run going on, and Finetune afterwards reads
// the same finetuning settings the user had (the reloaded page showed the quick preset's
// unsized defaults until Finetune was pressed).
export function formState() {
  return {
    preset: $('preset').value,
    from: $('h-from').value,
    values: Object.fromEntries(FIELDS.map((f) => [f, $(`h-${f}`).value])),
  };
}

export function restoreForm(saved) {
  if (!saved || !saved.values) return;
  for (const f of FIELDS)
    if (typeof saved.values[f] === 'string') $(`h-${f}`).value = saved.values[f];
  if (saved.from) $('h-from').value = saved.from;
  if (saved.preset && NOTES[saved.preset]) {
    $('preset').value = saved.preset;
    showNote(saved.preset);
  }
}

export function wireForm() {
  // On a phone the hyperparameters start folded: open, they put Pretrain a screen and more below the
  // preset it is sized by (a wider screen shows them beside each other).
  if (window.matchMedia('(max-width: 640px)').matches) $('hyper').open = false;
  // The quick preset's steps depend on the corpus's size: size it again for new data.
  on('data', () => {
    if (S.sizing && P.presets) showSizing();
  });
  $('preset').addEventListener('change', () => choosePreset($('preset').value));
  // The variant changes what fits, the quick run's timed steps, the middle preset's measured
  // accuracy and the CLI's commands: the presets are sized and described again.
  for (const r of document.querySelectorAll('input[name=variant]')) {
    r.addEventListener('change', () => {
      if (S.sizing && P.presets) showSizing();
    });
  }
  for (const f of FIELDS) {
    $(`h-${f}`).addEventListener('input', () => {
      $('preset').value = 'custom';
      showNote('custom');
    });
  }
  $('h-from').addEventListener('change', () => {
    if (['full', 'middle'].includes($('preset').value)) {
      applyPreset($('preset').value);
      showSizing();
    }
  });
}
