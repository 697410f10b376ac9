// Runs sized to the device: each preset's batches, steps and time here, from the device's
// measurement (web/page/measure.js). The measurement times full 127-token rows; a run trains packed
// rows (each up to its last real target), so each time is scaled by the share of real positions in
// the data (packed_fill: about half for pretraining, a fifth for finetuning). The larger models'
// times are their measured step per row times the rows, with no fitted intercept, so the estimate
// moves only as much as the measurement does. The quick preset's batch is chosen from the tiny
// model's fit, and then its own steps are timed on the data loaded now (timeQuick); it is sized to
// finish in about two minutes here (pretraining ~70 s, finetuning ~40 s; the two share "max steps",
// so on a slow device finetuning can take as long as pretraining): the largest batch that still
// gives enough steps, and as many steps as fit. The middle and full presets get the largest batch
// that fits this device (fit, the check a run makes before it starts), or are marked too large
// (web/page/preset-notes.js gives the CLI's commands then).
import { P, S, SAVE_COST_RATIO, SAVE_MIN_MS, data, job } from './core.js';
import { keep, stepTimes, variantNow } from './measure.js';

const PRE_BUDGET_S = 70;
const FT_BUDGET_S = 40;
// Fewer steps than this and the loss hardly moves; it also keeps a step under a second (70 s / 90),
// so Pause and Stop act within about one.
const MIN_STEPS = 90;
const BATCHES = [128, 64, 32, 16, 8, 4];
const QUICK_EPOCHS = 40; // the quick preset's epochs when the device is fast enough for all of them

// How many examples a role's file holds (run.py's examples of wiki.txt, questions of a TSV), from its check.
export function examples(role) {
  return (data[role] && data[role].examples) || 0;
}

// The share of token positions a packed step runs, per run kind, for the data loaded now
// (computed by the engine once per data set).
let fillFor = { key: '', pretrain: 1, finetune: 1, notes: 1, biographies: 1 };
let notesFill = null;
let biographiesFill = null;
export async function fills() {
  // The middle preset's pretraining text when the built-in corpus is in use, and the whole
  // biographies the other presets switch back to (each measured once).
  if (notesFill === null && P.embedded) {
    try {
      notesFill = await job('measure', () =>
        P.engine.packed_fill('pretrain', 'built-in birth notes', P.embedded.notes, '', ''),
      );
    } catch {
      notesFill = 1;
    }
  }
  if (biographiesFill === null && P.embedded) {
    try {
      biographiesFill = await job('measure', () =>
        P.engine.packed_fill('pretrain', 'built-in wiki.txt', P.embedded.wiki, '', ''),
      );
    } catch {
      biographiesFill = 1;
    }
  }
  const w = data.wiki;
  const t = data.train;
  const key = `${w ? w.name : ''}:${w ? w.text.length : 0}:${t ? t.name : ''}:${t ? t.text.length : 0}`;
  if (fillFor.key === key) return fillFor;
  const f = {
    key,
    pretrain: 1,
    finetune: 1,
    notes: notesFill ?? 1,
    biographies: biographiesFill ?? 1,
  };
  try {
    if (w)
      f.pretrain = await job('measure', () =>
        P.engine.packed_fill('pretrain', w.name, w.text, '', ''),
      );
    if (w && t)
      f.finetune = await job('measure', () =>
        P.engine.packed_fill('finetune', w.name, w.text, t.name, t.text),
      );
  } catch {
    /* the data's own check says what is wrong with it */
  }
  fillFor = f;
  return f;
}

// The data's shares of real positions, as fills() last computed them.
export const fillsNow = () => fillFor;

// The quick preset for this device: {pre_batch, pre_epochs, max_steps, ft_batch, ft_epochs, preSteps, ftSteps, preS,
// ftS}. How much of the text the quick pretraining reads: whole epochs, or the share of them that max
// steps leaves ("about 19% of an epoch; max steps ends it", not "1 epoch, cut by max steps").
export function epochsOf(q) {
  if (!q.max_steps) return `${q.pre_epochs} epoch${q.pre_epochs === 1 ? '' : 's'}`;
  const share = q.preSteps / Math.max(1, q.perEpoch);
  return (
    `${share < 1 ? `about ${Math.max(1, Math.round(100 * share))}% of an epoch` : `about ${share.toFixed(1)} epochs`}` +
    `; max steps ends it`
  );
}

export function quickFor(z) {
  const t = stepTimes(z);
  const text = textFor('quick');
  const docs = text.docs || 1;
  const qs = examples('train') || 1;
  const fp = text.fill;
  const ff = fillFor.finetune;
  const fits = (b) => Math.floor((PRE_BUDGET_S * 1000) / t.tiny(b, fp)) >= MIN_STEPS;
  const batch = BATCHES.find(fits) || BATCHES[BATCHES.length - 1];
  // A step's time: the run's own steps where they were timed (timeQuick), else the device model.
  const timed = z.runs && z.runs[quickKey(batch)];
  const preMs = timed ? runStepMs(timed.pre) : t.tiny(batch, fp);
  const ftMs = timed && timed.ft ? runStepMs(timed.ft) : t.tiny(batch, ff);
  const steps = (budget, ms) => Math.floor((budget * 1000) / ms);
  const perEpoch = Math.ceil(docs / batch);
  const preSteps = Math.max(1, Math.min(steps(PRE_BUDGET_S, preMs), perEpoch * QUICK_EPOCHS));
  const pre_epochs = Math.max(1, Math.ceil(preSteps / perEpoch));
  const ftPerEpoch = Math.ceil(qs / batch);
  const ft_epochs = Math.max(1, Math.min(20, Math.floor(steps(FT_BUDGET_S, ftMs) / ftPerEpoch)));
  const max_steps = preSteps < pre_epochs * perEpoch ? preSteps : '';
  const ftSteps = Math.min(ft_epochs * ftPerEpoch, max_steps || Infinity);
  return {
    pre_batch: batch,
    ft_batch: batch,
    pre_epochs,
    ft_epochs,
    max_steps,
    preSteps,
    ftSteps,
    perEpoch,
    preS: (preSteps * preMs) / 1000,
    ftS: (ftSteps * ftMs) / 1000,
    msPerStep: preMs,
    ftMsPerStep: ftMs,
    timed,
  };
}

// The quick preset's own steps, timed before it runs (time_run, src/wasm/measure.rs): its
// pretraining and its finetuning at the batch chosen above, on the data loaded now, packed and
// cut into engine calls as the run is, and one save. The device model alone (full-row steps
// scaled by the data's share of real positions) said 0.50 s a step on SwiftShader where the
// run's steps took 0.74 s, and 0.64 s on the CPU backend for 0.60 s (README, "timed as a student
// runs it"). Kept with the device's measurement, per data, variant and batch: a reload shows the
// same label.
function quickText() {
  if (['notes', 'births'].includes(S.dataSource) && P.embedded)
    return { name: 'built-in wiki.txt', text: P.embedded.wiki };
  return data.wiki;
}
function quickKey(batch) {
  const w = quickText();
  const t = data.train;
  return (
    `${variantNow()}:${batch}:${w ? w.name : ''}:${w ? w.text.length : 0}:` +
    `${t ? t.name : ''}:${t ? t.text.length : 0}`
  );
}
// A timed step with its share of the run's saves: the page saves once the time since the last save
// is SAVE_COST_RATIO times a save's (at least SAVE_MIN_MS; web/page/train.js).
export const saveShare = (m) => m.save_ms / Math.max(SAVE_MIN_MS, SAVE_COST_RATIO * m.save_ms);
const runStepMs = (m) => m.ms_per_step * (1 + saveShare(m));

// Timings under way, by key: two sizings asked for at once time the run once.
const timing = new Map();
export function timeQuick(z) {
  const batch = quickFor(z).pre_batch;
  const key = quickKey(batch);
  const w = quickText();
  const t = data.train;
  if (!w || (z.runs && z.runs[key])) return Promise.resolve();
  if (!timing.has(key)) {
    const d = P.presets.tiny;
    // A few rows a step: steps differ by their batch's longest row, so more of them are timed.
    const repeats = batch < 32 ? 5 : 2;
    const time = (kind) =>
      job('measure', () =>
        P.engine.time_run(
          kind,
          variantNow(),
          d.n_layer,
          d.n_head,
          d.n_embd,
          w.name,
          w.text,
          t ? t.name : '',
          t ? t.text : '',
          batch,
          repeats,
        ),
      );
    timing.set(
      key,
      (async () => {
        // A question file the run could not read leaves the finetuning to the device model's estimate.
        const got = {
          pre: await time('pretrain'),
          ft: t ? await time('finetune').catch(() => null) : null,
        };
        z.runs = { ...(z.runs || {}), [key]: got };
        keep(z);
      })().finally(() => timing.delete(key)),
    );
  }
  return timing.get(key);
}

// The largest batches of the middle and full presets that fit this device (fit), per preset
// {pre, ft} (0: not even one row fits), for the vocabulary of the data loaded now.
export async function fits() {
  const p = P.presets;
  const vocab = (data.wiki && data.wiki.vocab) || 100;
  const variant = variantNow();
  const fit = (dims, batch) =>
    job('measure', () =>
      P.engine.fit(variant, dims.n_layer, dims.n_head, dims.n_embd, vocab, batch),
    );
  const out = {};
  for (const [name, dims] of [
    ['middle', p.middle],
    ['full', p.assignment],
  ]) {
    out[name] = {
      pre: await fit(dims, p.pretrain.batch),
      ft: await fit(dims, Math.max(p.finetune_scratch.batch, p.finetune_pretrained.batch)),
    };
  }
  return out;
}

// The measurement times one engine. Two engines on two free cores ran the assignment's step
// 1.63-1.64x one engine's pace (BENCHMARKS.md, issue 30); the middle preset's whole run on two
// engines took 0.451 s a step where this page's one-engine estimate said 0.86 s (Xeon-AVX512,
// 2 cores: its label's 59 min 32 s less 375 finetuning steps: 1.9x; results/middle-preset/).
// More engines are not measured, so a preset's time on N >= 2 engines is one engine's ÷ its factor.
const TWO_ENGINES = { middle: 1.9, full: 1.6 };
export const engineCount = () => (S.backend === 'cpu' && P.workers ? P.workers.n : 1);
const pace = (name) => (engineCount() > 1 ? TWO_ENGINES[name] : 1);

// Whether the middle preset runs on the built-in birth notes (the built-in corpus is in use;
// choosing the preset switches to them: web/page/form.js).
export const onNotes = () => ['embedded', 'notes'].includes(S.dataSource);

// The pretraining text a preset will run on, as {docs, fill}: choosing the middle preset on the
// built-in corpus switches to the birth notes, and choosing quick or full on a cut of it (the notes,
// the birth sentences) switches back to the whole biographies (web/page/form.js), so each label
// is the time of the run its choice gives, the same before and after it is chosen.
export function textFor(name) {
  const info = P.embeddedInfo || {};
  if (name === 'middle' && onNotes() && info.notes)
    return { docs: info.notes.examples, fill: fillFor.notes };
  if (name !== 'middle' && ['notes', 'births'].includes(S.dataSource) && info.wiki)
    return { docs: info.wiki.examples, fill: fillFor.biographies };
  return { docs: examples('wiki'), fill: fillFor.pretrain };
}

// A preset of the larger models (middle, full) on this device: its batches (the preset's, or the
// largest that fits), steps, seconds and what was changed. `fit` from fits(); `p` its form values.
export function sizeRun(z, name, v, fit) {
  const text = textFor(name);
  const preFill = text.fill;
  const t = stepTimes(z)[name === 'middle' ? 'mid' : 'full'];
  const docs = text.docs || 1;
  const qs = examples('train') || 1;
  const f = fit || { pre: v.pre_batch, ft: v.ft_batch };
  const pre_batch = Math.min(v.pre_batch, f.pre);
  const ft_batch = Math.min(v.ft_batch, f.ft);
  const preSteps = Math.ceil(docs / Math.max(1, pre_batch)) * v.pre_epochs;
  const ftSteps = Math.ceil(qs / Math.max(1, ft_batch)) * v.ft_epochs;
  const preS = (preSteps * t(pre_batch, preFill)) / 1000 / pace(name);
  const ftS = (ftSteps * t(ft_batch, fillFor.finetune)) / 1000 / pace(name);
  const tooLarge = pre_batch < 1 || ft_batch < 1;
  const changed = [
    pre_batch < v.pre_batch ? `pretraining batch ${pre_batch} instead of ${v.pre_batch}` : '',
    ft_batch < v.ft_batch ? `finetuning batch ${ft_batch} instead of ${v.ft_batch}` : '',
  ].filter(Boolean);
  return {
    pre_batch,
    ft_batch,
    preSteps,
    ftSteps,
    preS,
    ftS,
    seconds: preS + ftS,
    tooLarge,
    changed,
    msPerStep: t(pre_batch, preFill) / pace(name),
    twoEngines: TWO_ENGINES[name],
  };
}
