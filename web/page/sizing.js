// Runs sized to the device: before a run, a short measurement (a few training steps of the tiny
// model at two batch sizes, three steps of the middle preset's model at 8 rows and three of the
// assignment's at 2 rows, one each on a slow device, through time_step in src/wasm/measure.rs, the fastest kept: other
// work only adds time) gives each preset's time on THIS device. The measurement times full 127-token rows; a run
// trains packed rows (each up to its last real target), so each time is scaled by the share of real positions in the
// data
// (packed_fill: about half for pretraining, a fifth for finetuning). The larger models' times
// are their measured step per row times the rows, with no fitted intercept, so the estimate moves
// only as much as the measurement does. The quick preset's batch is chosen from the tiny model's
// fit, and then its own steps are timed on the data loaded now (timeQuick); it is sized to finish in about two
// minutes here (pretraining ~70 s, finetuning ~40 s; the two share "max steps", so on a slow device
// finetuning can take as long as pretraining): the largest batch that still gives enough steps, and
// as many steps as fit. The middle and full presets get the largest batch that fits this device
// (fit, the check a run makes before it starts), or are marked too large, with the CLI's
// commands. The first step of a measurement is slower (it builds the kernels' pipelines and
// buffers once); the note says so.
import { $, P, S, SAVE_COST_RATIO, SAVE_MIN_MS, data, job } from './core.js';
import { duration } from './ui.js';
import { MAX_WORKERS as MAX_ENGINES } from '../backend.js';

const PRE_BUDGET_S = 70;
const FT_BUDGET_S = 40;
// Fewer steps than this and the loss hardly moves; it also keeps a step under a second (70 s / 90),
// so Pause and Stop act within about one.
const MIN_STEPS = 90;
const BATCHES = [128, 64, 32, 16, 8, 4];
const QUICK_EPOCHS = 40; // the quick preset's epochs when the device is fast enough for all of them
// The middle preset's dev accuracy on the built-in corpus (pretrained on its birth notes), per
// attention variant, measured in the runs `how` says (results/middle-preset/README.md has the table).
export const MIDDLE_DEV = {
  vanilla: {
    runs: [34, 46, 55, 44, 48, 48, 49, 66],
    total: 136,
    how:
      'in eight runs of these settings: seven with the CLI, seeds 2, 1 and 0 finetuned at ' +
      'batch 226, the page’s, and seeds 1 and 0 at 256 and 128, right answers spread over ' +
      '20–23 places; one whole in the page, seed 0, 26.8 min on two engines (Xeon-AVX512, 2 ' +
      'cores; about 40 min on EPYC-AVX2, 2 cores, and 21.7 min on EPYC-AVX512, 2 cores; the ' +
      'same answers)',
  },
  synthesizer: {
    runs: [8, 11, 7, 10],
    total: 136,
    how:
      'in four CLI runs of these settings, seeds 0 and 1, each finetuned at batch 256 and at ' +
      'the page’s 226, answering mostly London and Berlin: the pretraining stored none of the ' +
      'dev people’s birthplaces (the probe recalled 0 of 136; the vanilla model’s pretraining, ' +
      '15–23 of 136)',
  },
};
// A variant's measured dev accuracies as one range ("25.0%–48.5%"), or one value.
function devRange(m) {
  const lo = Math.min(...m.runs),
    hi = Math.max(...m.runs);
  const at = (c) => pct({ correct: c, total: m.total });
  return lo === hi ? at(lo) : `${at(lo)}–${at(hi)}`;
}
const VERSION = 4; // measurements kept by an earlier page (other models timed) are taken again

let measuring = null;

// What the Train card says while no run is open: "Ready" only once this device is measured (the
// presets' sizes and times follow from it); until then, that it is being measured.
export const READY = 'Ready: press Pretrain to start with the chosen preset.';
export const MEASURING = 'Measuring this device (a few training steps of each preset’s model)…';
export const measured = () => Boolean(S.sizing || saved(P.deviceKey));
// The measurement ended (or failed: a run measures again when it starts): the card's "Measuring"
// becomes "Ready", whatever follows it kept.
function measureEnded() {
  const el = $('train-status');
  if (S.status !== 'idle' || !el || !el.textContent.startsWith(MEASURING)) return;
  el.textContent = READY + el.textContent.slice(MEASURING.length);
}
const variantNow = () => document.querySelector('input[name=variant]:checked').value;

// How many examples a role's file holds (run.py's examples of wiki.txt, questions of a TSV), from its check.
export function examples(role) {
  return (data[role] && data[role].examples) || 0;
}

// Milliseconds a step of `rows` rows takes: a + b·rows, fitted to two measured batch sizes.
function stepModel(small, large) {
  const b =
    large.rows > small.rows
      ? (large.ms_per_step - small.ms_per_step) / (large.rows - small.rows)
      : 0;
  const slope = b > 0 ? b : large.ms_per_step / large.rows;
  const a = Math.max(0, small.ms_per_step - slope * small.rows);
  return (rows) => a + slope * rows;
}

const KEY = 'attnlab-sizing';

// The measurement kept in this browser for this device (a reload need not measure again).
function saved(deviceKey) {
  try {
    const z = JSON.parse(localStorage.getItem(KEY) || 'null');
    return z &&
      z.version === VERSION &&
      z.device === deviceKey &&
      z.small &&
      z.large &&
      z.mid &&
      z.full
      ? z
      : null;
  } catch {
    return null;
  }
}

// Measure once per device (kept in localStorage). Resolves to S.sizing = {small, large, full,
// seconds, device}, each measurement {rows, first_ms, ms_per_step}.
export function measure(deviceKey) {
  if (S.sizing) {
    measureEnded();
    return Promise.resolve(S.sizing);
  }
  const kept = saved(deviceKey);
  if (kept) {
    S.sizing = kept;
    measureEnded();
    return Promise.resolve(kept);
  }
  if (!measuring) {
    measuring = (async () => {
      const p = P.presets;
      const variant = variantNow();
      const vocab = 100;
      $('preset-note').textContent = MEASURING;
      const t0 = performance.now();
      const time = (cfg, rows, repeats) =>
        job('measure', () =>
          P.engine.time_step(variant, cfg.n_layer, cfg.n_head, cfg.n_embd, vocab, rows, repeats),
        );
      const small = await time(p.tiny, 4, 2);
      const large = await time(p.tiny, 16, 1);
      // Where the tiny model's step takes over a second (a software adapter), the larger models'
      // steps take seconds each, long beside their noise: one timed step after the first, not three
      // (on SwiftShader the measurement took 79 s, 33 of them repeats, before a first run could start).
      const repeats = small.ms_per_step > 1000 ? 1 : 3;
      const mid = await time(p.middle, 8, repeats);
      const full = await time(p.assignment, 2, repeats);
      S.sizing = {
        small,
        large,
        mid,
        full,
        seconds: (performance.now() - t0) / 1000,
        device: deviceKey,
        version: VERSION,
      };
      try {
        localStorage.setItem(KEY, JSON.stringify(S.sizing));
      } catch {
        /* storage can be off */
      }
      measureEnded();
      return S.sizing;
    })();
    measuring.catch(() => {
      measuring = null;
      measureEnded();
    });
  }
  return measuring;
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

// Step times from a measurement, in milliseconds for `rows` rows of which `fill` of the positions
// are real (packed): tiny (a + b·rows·fill, fitted to two batch sizes), mid and full (their
// measured time per row × rows × fill).
export function stepTimes(z) {
  const tiny = stepModel(z.small, z.large);
  const perRow = (m) => (m.best_ms ?? m.ms_per_step) / m.rows;
  return {
    tiny: (rows, fill = 1) => tiny(rows * fill),
    mid: (rows, fill = 1) => perRow(z.mid) * rows * fill,
    full: (rows, fill = 1) => perRow(z.full) * rows * fill,
  };
}

// The quick preset for this device: {pre_batch, pre_epochs, max_steps, ft_batch, ft_epochs, preSteps, ftSteps, preS,
// ftS}. How much of the text the quick pretraining reads: whole epochs, or the share of them that max
// steps leaves ("about 19% of an epoch; max steps ends it", not "1 epoch, cut by max steps").
function epochsOf(q) {
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
const saveShare = (m) => m.save_ms / Math.max(SAVE_MIN_MS, SAVE_COST_RATIO * m.save_ms);
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
        try {
          localStorage.setItem(KEY, JSON.stringify(z));
        } catch {
          /* storage can be off */
        }
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
  const variant = document.querySelector('input[name=variant]:checked').value;
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

// The CLI's commands for a preset's run with the attention variant chosen, shown where this device
// cannot hold it or it would take hours: the full preset's are the README's, on the course files; the
// middle preset's write the built-in birth notes (`attnlab corpus --birth_notes`) and run the
// preset's settings on them (the CLI's defaults are run.py's: batches 128 and 256, rates 6e-3 and 6e-4).
export function cliCommands(name, v = variantNow()) {
  if (name === 'middle') {
    const m = P.presets.middle;
    const f = P.presetForms['middle:false'];
    const size = `--n_layer ${m.n_layer} --n_head ${m.n_head} --n_embd ${m.n_embd}`;
    return (
      'attnlab corpus --birth_notes --out_dir notes; ' +
      `attnlab pretrain ${v} notes/wiki.txt ${size} --max_epochs ${f.pre_epochs} ` +
      `--lr_decay_epochs ${f.pre_decay} --writing_params_path ${v}.middle.pretrain.params; ` +
      `attnlab finetune ${v} notes/wiki.txt ${size} ` +
      `--reading_params_path ${v}.middle.pretrain.params --max_epochs ${f.ft_epochs} ` +
      `--finetune_corpus_path notes/birth_places_train.tsv ` +
      `--writing_params_path ${v}.middle.finetune.params; ` +
      `attnlab evaluate ${v} notes/wiki.txt ${size} ` +
      `--reading_params_path ${v}.middle.finetune.params --eval_corpus_path ` +
      `notes/birth_dev.tsv --outputs_path ${v}.middle.dev.predictions`
    );
  }
  return (
    `attnlab pretrain ${v} wiki.txt --writing_params_path ${v}.pretrain.params; ` +
    `attnlab finetune ${v} wiki.txt --reading_params_path ${v}.pretrain.params ` +
    `--writing_params_path ${v}.finetune.params --finetune_corpus_path ` +
    `birth_places_train.tsv; ` +
    `attnlab evaluate ${v} wiki.txt --reading_params_path ${v}.finetune.params ` +
    `--eval_corpus_path birth_dev.tsv --outputs_path ${v}.pretrain.dev.predictions`
  );
}

// The measurement times one engine. Two engines on two free cores ran the assignment's step
// 1.63-1.64x one engine's pace (BENCHMARKS.md, issue 30); the middle preset's whole run on two
// engines took 0.451 s a step where this page's one-engine estimate said 0.86 s (Xeon-AVX512,
// 2 cores: its label's 59 min 32 s less 375 finetuning steps: 1.9x; results/middle-preset/).
// More engines are not measured, so a preset's time on N >= 2 engines is one engine's ÷ its factor.
const TWO_ENGINES = { middle: 1.9, full: 1.6 };
const engineCount = () => (S.backend === 'cpu' && P.workers ? P.workers.n : 1);
const pace = (name) => (engineCount() > 1 ? TWO_ENGINES[name] : 1);

// Whether the middle preset runs on the built-in birth notes (the built-in corpus is in use;
// choosing the preset switches to them: web/page/form.js).
export const onNotes = () => ['embedded', 'notes'].includes(S.dataSource);

// The pretraining text a preset will run on, as {docs, fill}: choosing the middle preset on the
// built-in corpus switches to the birth notes, and choosing quick or full on a cut of it (the notes,
// the birth sentences) switches back to the whole biographies (web/page/form.js), so each label
// is the time of the run its choice gives, the same before and after it is chosen.
function textFor(name) {
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

const pct = (o) => `${((100 * o.correct) / o.total).toFixed(1)}%`;

// The presets' notes and option labels with this device's times.
export function describe(z, quick, mid, full) {
  const p = P.presets;
  const warm =
    `The first step of each measurement took ${duration(z.small.first_ms / 1000)} ` +
    `against ${duration(z.small.ms_per_step / 1000)} for the next ones: ` +
    'it builds the kernels and buffers once, so a run’s first step is slower too.';
  const packed = (fp = fillFor.pretrain) =>
    `Times are the measured steps of full 127-character rows scaled by the share of real ` +
    `characters a packed step runs in this data (pretraining ${Math.round(100 * fp)}%, ` +
    `finetuning ${Math.round(100 * fillFor.finetune)}%), timed in about a second when this ` +
    `browser first measured the device and kept since: other work at that moment, or a ` +
    `machine whose speed comes and goes, moves every estimate alike (by up to a third from ` +
    `one first visit to the next on a 2-core computer).`;
  const timedRun = (q) =>
    `Times are this run’s own steps, timed on this data before it starts ` +
    `(${q.timed.pre.calls > 1 ? `each cut into ${q.timed.pre.calls} engine calls as the run is; ` : ''}` +
    `pretraining ${duration(q.timed.pre.ms_per_step / 1000)} a step, ` +
    `finetuning ${q.timed.ft ? duration(q.timed.ft.ms_per_step / 1000) : 'not timed'}), with ` +
    `the run’s saves (about ${Math.round(100 * saveShare(q.timed.pre))}% more).`;
  const adjusted = (r) =>
    r.changed.length
      ? ` Sized to fit this device: ${r.changed.join(', ')} (the largest that fits).`
      : '';
  const cli = (name) =>
    `Too large for this device: use the CLI (natively, on all cores or a GPU): ${cliCommands(name)}`;
  // A run of hours in a browser tab: the same run natively is the better way (the commands go in
  // the details).
  // On a software WebGPU adapter the CPU backend is the faster choice in the page (on one 2-core
  // VM the middle preset's label read 12 h 41 min on SwiftShader, about 45 min on the CPU backend).
  const software = S.softwareAdapter
    ? ' This WebGPU adapter is a software one (no GPU): the CPU backend (Device card, Backend) trains faster here.'
    : '';
  const long = (r, say) =>
    r.seconds > 3 * 3600
      ? say
        ? ` That is long for a page: the CLI runs the same natively, on all cores or a GPU (its ` +
          `commands are in the details).${software}`
        : true
      : '';
  // On the CPU backend: how many engines the times assume, or how to use the idle cores.
  const cores = (P.workers && P.workers.cores) || 1;
  const engines = (r) =>
    S.backend !== 'cpu'
      ? ''
      : engineCount() > 1
        ? ` Times for ${engineCount()} engines: one engine’s measured step ÷ ${r.twoEngines} (two ` +
          `engines’ measured pace on two free cores).`
        : cores > 1
          ? ` Times for one engine; choose ${Math.min(cores, MAX_ENGINES)} under Workers (Device ` +
            `card) to train on every core: about ${duration(r.seconds / r.twoEngines)} (two engines ` +
            `ran ${r.twoEngines}× one’s pace on two free cores).`
          : '';
  const m = p.middle;
  const mf = P.presetForms['middle:false'];
  const synth = variantNow() === 'synthesizer';
  const md = MIDDLE_DEV[synth ? 'synthesizer' : 'vanilla'];
  const a = p.assignment;
  return {
    // The time first; a phone's select shows about 35 characters, so it gets the short forms
    // (form.js; the note below the select says the rest).
    quickLabel: `Quick, about ${duration(quick.preS + quick.ftS)} here: the flow, not knowledge`,
    quickShort: `Quick, about ${duration(quick.preS + quick.ftS)}`,
    middleShort: mid.tooLarge ? 'Middle: too large here' : `Middle, about ${duration(mid.seconds)}`,
    fullShort: full.tooLarge ? 'Full: too large here' : `Full, about ${duration(full.seconds)}`,
    middleLabel: mid.tooLarge
      ? 'Middle: too large for this device (use the CLI)'
      : `Middle, about ${duration(mid.seconds)} here: 2 layers ` +
        `on ${onNotes() ? 'the birth notes' : 'your pretraining text'}`,
    fullLabel: full.tooLarge
      ? 'Full assignment: too large for this device (use the CLI)'
      : `Full assignment, about ${duration(full.seconds)} here${full.changed.length ? ' (smaller batch)' : ''}`,
    // Each note: what a student needs to choose (size, time here, what to expect) in a line or
    // two, and the rest (why these settings, how the time is estimated) under "details".
    quick:
      `Tiny model (2 layers, 4 heads, width 64) at batch ${quick.pre_batch}: ` +
      `pretraining ${quick.preSteps.toLocaleString()} steps ` +
      `(${epochsOf(quick)}) ≈ ${duration(quick.preS)}, ` +
      `finetuning ${quick.ftSteps.toLocaleString()} steps ≈ ${duration(quick.ftS)} on this ` +
      `device. ` +
      'It shows the flow and the falling loss, not knowledge: expect the tiny model to answer ' +
      'one or two common places to every question.',
    quickMore:
      `A step of ${quick.pre_batch} rows takes about ${duration(quick.msPerStep / 1000)} ` +
      `here${quick.timed ? ', its share of the saves included' : ''}. ` +
      `${quick.timed ? timedRun(quick) : packed(textFor('quick').fill)} ${warm}`,
    middle: mid.tooLarge
      ? cli('middle')
      : `Half the shipped model’s depth (${m.n_layer} layers, ${m.n_head} heads, ` +
        `width ${m.n_embd}): ${mf.pre_epochs} pretraining epochs ` +
        (onNotes()
          ? 'on the built-in people’s birth notes (the Data card switches to them; the other presets switch back)'
          : 'on your pretraining text ' +
            '(measured on the built-in corpus’s birth notes: use them to run it as measured)') +
        `, ` +
        `then ${mf.ft_epochs} finetuning epochs from that model (the Finetune fields take them ` +
        `when the pretraining ends). ` +
        `Pretraining ${mid.preSteps.toLocaleString()} steps of batch ${mid.pre_batch} ` +
        `≈ ${duration(mid.preS)}, finetuning ${mid.ftSteps.toLocaleString()} steps ` +
        `≈ ${duration(mid.ftS)} on this device.${adjusted(mid)}${engines(mid)} ` +
        (synth
          ? `With synthesizer attention expect about ${devRange(md)} dev accuracy on the built-in corpus ` +
            `(vanilla attention: ${devRange(MIDDLE_DEV.vanilla)}; always answering London: 9.6%)`
          : `Expect about ${devRange(md)} dev accuracy on the built-in corpus (always answering London: 9.6%)`) +
        `.${long(mid, true)}`,
    middleMore: mid.tooLarge
      ? ''
      : `Measured${synth ? ' with synthesizer attention' : ''}: ` +
        `${md.runs.length > 1 ? `${md.runs.slice(0, -1).join(', ')} and ${md.runs.at(-1)}` : md.runs[0]} ` +
        `right answers of ${md.total} ${md.how}. ` +
        `Two settings differ from run.py’s, both for a short run: the pretraining rate reaches ` +
        `its floor at epoch ${mf.pre_decay}, the run’s end (run.py’s rate reaches its floor ` +
        `after 200 epochs and then rises again), and the finetuning takes ${mf.ft_epochs} ` +
        `epochs, not 10 (the built-in question file has 545 rows to the course’s 2,000; after 10 ` +
        `epochs these models answered Berlin to most questions). ` +
        'The notes state each birthplace twice, in two short phrasings, and no other facts. ' +
        `A step of ${mid.pre_batch} rows takes about ${duration(mid.msPerStep / 1000)} ` +
        `here. ${packed(textFor('middle').fill)}` +
        `${long(mid) ? ` The CLI’s commands: ${cliCommands('middle')}` : ''}`,
    full: full.tooLarge
      ? cli('full')
      : `The assignment’s run.py settings (${a.n_layer} layers, ${a.n_head} heads, ` +
        `width ${a.n_embd}): pretraining ${full.preSteps.toLocaleString()} steps ` +
        `(${p.pretrain.epochs} epochs of batch ${full.pre_batch}), then ` +
        `finetuning ${full.ftSteps.toLocaleString()} steps (10 epochs from that model; the ` +
        `Finetune fields take them when the pretraining ends): about ${duration(full.seconds)} ` +
        `on this device.${adjusted(full)}${engines(full)}${long(full, true)}`,
    fullMore: full.tooLarge
      ? ''
      : `A step of ${full.pre_batch} rows takes about ${duration(full.msPerStep / 1000)} ` +
        `here. ${packed(textFor('full').fill)}${long(full) ? ` The CLI’s commands: ${cliCommands('full')}` : ''}`,
    fullS: full.seconds,
  };
}
