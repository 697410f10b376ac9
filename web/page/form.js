// The Train card's form: the presets and the hyperparameters, read and checked into a run spec.
import { $, P, S } from './core.js';
import { describe, quickFor } from './sizing.js';

// ---------------------------------------------------------------------------------------------
// Form

export const FIELDS = ['n_layer', 'n_head', 'n_embd', 'dropout', 'seed', 'pre_epochs', 'pre_batch', 'pre_lr', 'max_steps', 'ft_epochs', 'ft_batch', 'ft_lr'];

export function presetValues(name) {
  const p = P.presets;
  if (name === 'full') {
    return { ...p.assignment, dropout: p.dropout, seed: 0, pre_epochs: p.pretrain.epochs, pre_batch: p.pretrain.batch, pre_lr: p.pretrain.lr,
      max_steps: '', ft_epochs: $('h-from').value === 'scratch' ? p.finetune_scratch.epochs : p.finetune_pretrained.epochs,
      ft_batch: p.finetune_pretrained.batch, ft_lr: p.finetune_pretrained.lr };
  }
  // Quick demo: the tiny model, sized to this device once it is measured (web/page/sizing.js);
  // before that, 40 epochs at the assignment's batch.
  const q = S.sizing ? quickFor(S.sizing) : { pre_epochs: 40, pre_batch: p.pretrain.batch, max_steps: '', ft_epochs: 20, ft_batch: p.finetune_pretrained.batch };
  return { ...p.tiny, dropout: p.dropout, seed: 0, pre_epochs: q.pre_epochs, pre_batch: q.pre_batch, pre_lr: p.pretrain.lr, max_steps: q.max_steps,
    ft_epochs: q.ft_epochs, ft_batch: q.ft_batch, ft_lr: p.finetune_pretrained.lr };
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
  if ($('preset').value === 'custom') return;
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

export function readSpec(kind) {
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
    throw new Error(`dropout is “${dropRaw}”; give a probability of at least 0 and below 1 (0 turns dropout off; the assignment uses ${P.presets.dropout})`);
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

export function wireForm() {
  $('preset').addEventListener('change', () => applyPreset($('preset').value));
  for (const f of FIELDS) {
    $(`h-${f}`).addEventListener('input', () => { $('preset').value = 'custom'; $('preset-note').textContent = NOTES.custom; });
  }
  $('h-from').addEventListener('change', () => {
    if ($('preset').value === 'full') applyPreset('full');
  });
}
