// Runs sized to the device: before a run, a short measurement (a few training steps of the tiny
// model at two batch sizes and one step of the assignment's model, through page_time_step in
// src/web/measure.rs) gives each preset's time on THIS device. The quick preset is then sized to
// finish in about two minutes here (pretraining ~70 s, finetuning ~40 s; the two share "max
// steps", so on a slow device finetuning can take as long as pretraining): the largest batch that
// still gives enough steps, and as many steps as fit. The first step of a measurement is slower
// (it builds the kernels' pipelines and buffers once); the note says so.
import { $, P, S, data, job } from './core.js';
import { duration } from './ui.js';

const PRE_BUDGET_S = 70;
const FT_BUDGET_S = 40;
// Fewer steps than this and the loss hardly moves; it also keeps a step under a second (70 s / 90),
// so Pause and Stop act within about one.
const MIN_STEPS = 90;
const BATCHES = [128, 64, 32, 16, 8, 4];
const QUICK_EPOCHS = 40; // the quick preset's epochs when the device is fast enough for all of them

let measuring = null;

// How many examples a role's file holds (lines of wiki.txt, questions of a TSV), from its check.
export function examples(role) {
  const f = data[role];
  const m = f && f.info.match(/^([\d,.\s\u202f]+) (lines|questions)/);
  return m ? Number(m[1].replace(/\D/g, '')) : 0;
}

// Milliseconds a step of `rows` rows takes: a + b·rows, fitted to two measured batch sizes.
function stepModel(small, large) {
  const b = large.rows > small.rows ? (large.ms_per_step - small.ms_per_step) / (large.rows - small.rows) : 0;
  const slope = b > 0 ? b : large.ms_per_step / large.rows;
  const a = Math.max(0, small.ms_per_step - slope * small.rows);
  return (rows) => a + slope * rows;
}

const KEY = 'attnlab-sizing';

// The measurement kept in this browser for this device (a reload need not measure again).
function saved(deviceKey) {
  try {
    const z = JSON.parse(localStorage.getItem(KEY) || 'null');
    return z && z.device === deviceKey && z.small && z.large && z.full ? z : null;
  } catch { return null; }
}

// Measure once per device (kept in localStorage). Resolves to S.sizing = {small, large, full,
// seconds, device}, each measurement {rows, first_ms, ms_per_step}.
export function measure(deviceKey) {
  if (S.sizing) return Promise.resolve(S.sizing);
  const kept = saved(deviceKey);
  if (kept) { S.sizing = kept; return Promise.resolve(kept); }
  if (!measuring) {
    measuring = (async () => {
      const p = P.presets;
      const variant = document.querySelector('input[name=variant]:checked').value;
      const vocab = 100;
      $('preset-note').textContent = 'Measuring this device (a few training steps of each preset’s model)…';
      const t0 = performance.now();
      const time = (cfg, rows, repeats) => job('measure', () => P.wasm.page_time_step(variant, cfg.n_layer, cfg.n_head, cfg.n_embd, vocab, rows, repeats));
      const small = await time(p.tiny, 4, 2);
      const large = await time(p.tiny, 16, 1);
      const full = await time(p.assignment, 1, 1);
      S.sizing = { small, large, full, seconds: (performance.now() - t0) / 1000, device: deviceKey };
      try { localStorage.setItem(KEY, JSON.stringify(S.sizing)); } catch { /* storage can be off */ }
      return S.sizing;
    })();
    measuring.catch(() => { measuring = null; });
  }
  return measuring;
}

// Step times from a measurement: tiny(rows) and full(rows) in milliseconds.
export function stepTimes(z) {
  const tiny = stepModel(z.small, z.large);
  // The assignment's model: the same overhead-to-work shape, scaled by its measured step.
  return { tiny, full: (rows) => z.full.ms_per_step * (tiny(rows) / tiny(z.full.rows)) };
}

// The quick preset for this device: {pre_batch, pre_epochs, max_steps, ft_batch, ft_epochs, preSteps, ftSteps, preS, ftS}.
export function quickFor(z) {
  const t = stepTimes(z);
  const docs = examples('wiki') || 1;
  const qs = examples('train') || 1;
  const steps = (batch, budget) => Math.floor((budget * 1000) / t.tiny(batch));
  const batch = BATCHES.find((b) => steps(b, PRE_BUDGET_S) >= MIN_STEPS) || BATCHES[BATCHES.length - 1];
  const perEpoch = Math.ceil(docs / batch);
  const preSteps = Math.max(1, Math.min(steps(batch, PRE_BUDGET_S), perEpoch * QUICK_EPOCHS));
  const pre_epochs = Math.max(1, Math.ceil(preSteps / perEpoch));
  const ftPerEpoch = Math.ceil(qs / batch);
  const ft_epochs = Math.max(1, Math.min(20, Math.floor(steps(batch, FT_BUDGET_S) / ftPerEpoch)));
  const max_steps = preSteps < pre_epochs * perEpoch ? preSteps : '';
  const ftSteps = Math.min(ft_epochs * ftPerEpoch, max_steps || Infinity);
  return { pre_batch: batch, ft_batch: batch, pre_epochs, ft_epochs, max_steps, preSteps, ftSteps,
    preS: (preSteps * t.tiny(batch)) / 1000, ftS: (ftSteps * t.tiny(batch)) / 1000, msPerStep: t.tiny(batch) };
}

// The presets' notes and option labels with this device's times.
export function describe(z, quick) {
  const p = P.presets;
  const t = stepTimes(z);
  const docs = examples('wiki') || 1;
  const qs = examples('train') || 1;
  const fullPre = Math.ceil(docs / p.pretrain.batch) * p.pretrain.epochs;
  const fullFt = Math.ceil(qs / p.finetune_pretrained.batch) * p.finetune_pretrained.epochs;
  const fullS = (fullPre * t.full(p.pretrain.batch) + fullFt * t.full(p.finetune_pretrained.batch)) / 1000;
  const warm = `The first step of each measurement took ${duration(z.small.first_ms / 1000)} against ${duration(z.small.ms_per_step / 1000)} for the next ones: ` +
    'it builds the kernels and buffers once, so a run’s first step is slower too.';
  return {
    quickLabel: `Quick: tiny model, about ${duration(quick.preS + quick.ftS)} here`,
    fullLabel: `Full assignment: about ${duration(fullS)} here`,
    quick: `Tiny model (2 layers, 4 heads, width 64) at batch ${quick.pre_batch}: pretraining ${quick.preSteps.toLocaleString()} steps ` +
      `(${quick.pre_epochs} epoch${quick.pre_epochs === 1 ? '' : 's'}${quick.max_steps ? ', cut by max steps' : ''}) ≈ ${duration(quick.preS)}, finetuning ` +
      `${quick.ftSteps.toLocaleString()} steps ≈ ${duration(quick.ftS)} on this device (measured: a step of ${quick.pre_batch} rows ≈ ${duration(t.tiny(quick.pre_batch) / 1000)}). It shows the flow and the falling loss, not knowledge: expect the tiny model to answer one or two common places to every question. ${warm}`,
    full: `The assignment’s run.py settings: pretraining ${fullPre.toLocaleString()} steps (${p.pretrain.epochs} epochs of batch ${p.pretrain.batch}) and finetuning ` +
      `${fullFt.toLocaleString()} steps: about ${duration(fullS)} on this device (a step of ${p.pretrain.batch} rows ≈ ${duration(t.full(p.pretrain.batch) / 1000)}, ` +
      `measured at one row and scaled). ${warm}`,
    fullS,
  };
}
