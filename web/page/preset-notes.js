// The presets' texts: the option labels and notes with this device's times (web/page/sizing.js),
// the middle preset's measured dev accuracy, and the CLI's commands for a run too large or too long
// for the page.
import { P, S } from './core.js';
import { duration } from './ui.js';
import { MAX_WORKERS as MAX_ENGINES } from '../backend.js';
import { variantNow } from './measure.js';
import { engineCount, epochsOf, fillsNow, onNotes, saveShare, textFor } from './sizing.js';

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

const pct = (o) => `${((100 * o.correct) / o.total).toFixed(1)}%`;

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

// The presets' notes and option labels with this device's times.
export function describe(z, quick, mid, full) {
  const p = P.presets;
  const fillFor = fillsNow();
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
