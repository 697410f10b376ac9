// Training: start a run (or resume a saved one), drive it in chunks, show progress and the chart,
// save the exact state to IndexedDB, pause, stop, finish, and report errors (a lost device included).
import * as store from './store.js';
import { holdRun, otherTabHoldsRun, releaseRun } from './runlock.js';
import {
  $,
  P,
  S,
  SAVE_COST_RATIO,
  SAVE_EVERY_MS,
  SAVE_MIN_MS,
  data,
  job,
  setStatus,
  tick,
} from './core.js';
import { drawLoss } from './chart.js';
import { counted, errText, esc, fmt, showBox } from './ui.js';
import { formState, readSpec, restoreForm, showSizing, sizingSettled } from './form.js';
import { MEASURING, READY, measure, measured } from './measure.js';
import { restoreModels } from './models.js';
import { emit, on } from './events.js';
import { probeRecall } from './recall.js';
import * as steps from './steps.js';

export let lastSave = 0;
// How long the last save took (the engine's readback of the state plus the IndexedDB write), ms.
let saveCost = 0;
// A save is under way (a pagehide does not start a second one).
let saving = null;

// The Saved field after a save of the run at `steps`, made at `at` (ms since the epoch).
const savedText = (steps, at) => `step ${steps} at ${fmt.clock(at)}`;

// Whether a save after this chunk is due: cheap saves come often, dear ones at most every 30 s.
const saveDue = () => {
  const since = performance.now() - lastSave;
  return since > SAVE_EVERY_MS || since > Math.max(SAVE_MIN_MS, SAVE_COST_RATIO * saveCost);
};

// ---------------------------------------------------------------------------------------------
// Training

export function redrawChart() {
  // The finished runs of this page (pretraining and then finetuning, say) stay on the chart beside
  // the one going on: the last three, each its own curve.
  const series = S.history.slice(P.run ? -2 : -3);
  if (P.run)
    series.push({
      label: `${P.run.kind} ${P.run.variant}`,
      points: P.run.losses,
      total: P.run.total,
      recall: P.run.recall,
    });
  else if (!series.length && S.losses.length)
    series.push({ label: 'saved run', points: S.losses, total: S.total });
  S.chartSeries = series.map((c) => c.label);
  drawLoss($('chart'), series);
}

export function showProgress(last, chunkTps) {
  const total = P.run.total || 1;
  $('train-progress').max = total;
  $('train-progress').value = S.steps;
  const eta = S.msPerStep ? ((total - S.steps) * S.msPerStep) / 1000 : NaN;
  const ep = last ? `epoch ${last.epoch} of ${last.epochs} · ` : '';
  $('progress-text').textContent =
    `${P.run.kind} ${P.run.variant}: ${ep}step ${S.steps.toLocaleString()} ` +
    `of ${total.toLocaleString()} · ETA ${fmt.time(eta)}`;
  if (last) {
    $('s-loss').textContent = fmt.loss(last.loss);
    $('s-lr').textContent = fmt.lr(last.lr);
  }
  if (chunkTps) $('s-tps').textContent = fmt.int(chunkTps);
  if (S.msPerStep) $('s-ms').textContent = fmt.step(S.msPerStep);
  redrawChart();
}

// Set while a start reads the form (the engine checks it), so a second click does not start twice.
let reading = false;

export async function startRun(kind, record) {
  if (!P.engine || reading || ['running', 'pausing', 'stopping', 'starting'].includes(S.status))
    return;
  showBox('train-error', null);
  S.error = null;
  let r;
  reading = true;
  try {
    if (record) {
      r = { ...record, losses: record.losses || [] };
      restoreForm(record.form);
    } else {
      // Size the run to this device first (measured once: web/page/measure.js).
      if (!S.sizing) {
        setStatus('starting', 'Measuring this device first (a few training steps; once)…');
        try {
          await measure(P.deviceKey);
          await showSizing();
        } catch {
          /* the run goes on unmeasured */
        }
        setStatus('idle');
      }
      await sizingSettled();
      const spec = await readSpec(kind);
      if (!data.wiki)
        throw new Error('there is no pretraining text; load wiki.txt or use the built-in corpus');
      if (kind === 'finetune' && !data.train)
        throw new Error(
          'there is no finetuning TSV; load birth_places_train.tsv or use the built-in corpus',
        );
      const from =
        kind === 'finetune' ? (spec.from_model ? 'from the current model' : 'from scratch') : '';
      r = {
        kind,
        variant: spec.variant,
        spec,
        wikiName: data.wiki.name,
        wiki: data.wiki.text,
        tsvName: data.train ? data.train.name : '',
        tsv: data.train ? data.train.text : '',
        losses: [],
        form: formState(),
        label: `${kind === 'pretrain' ? 'pretrained' : 'finetuned'} here${from ? ` ${from}` : ''}`,
      };
    }
    // Last in this block: nothing below throws before the run holds the lock or lets it go.
    if (!(await holdRun())) {
      await offerSaved();
      throw new Error(ELSEWHERE);
    }
  } catch (e) {
    showBox('train-error', `<p>${esc(errText(e))}</p>`);
    S.error = errText(e);
    return;
  } finally {
    reading = false;
  }
  setStatus('starting', record ? `Restoring the saved ${r.kind} run…` : `Preparing to ${r.kind}…`);
  try {
    const st = await job('start', () =>
      P.engine.start(
        r.spec,
        r.wikiName,
        r.wiki,
        r.tsvName,
        r.tsv,
        record ? record.state : undefined,
      ),
    );
    r.total = st.total_steps;
    P.run = r;
    Object.assign(S, {
      kind: r.kind,
      variant: r.variant,
      steps: st.steps,
      total: st.total_steps,
      losses: r.losses,
      msPerStep: null,
    });
    S.resumedFrom = record ? st.steps : null;
    // The step this run last saved (an earlier run's would say a save happened that did not).
    S.savedStep = record ? record.steps : null;
    $('s-saved').textContent = record ? savedText(record.steps, record.savedAt) : '—';
    S.started = st;
    $('s-lr').textContent = fmt.lr(st.lr);
    $('schedule-note').textContent = `Learning rate, run.py’s schedule: ${st.schedule}`;
    $('schedule-note').hidden = false;
    // The probe measures pretraining; a finetuning run says so instead of keeping the last recall
    // (a resumed pretraining keeps its own until the next probe).
    if (r.kind === 'finetune') $('s-recall').textContent = 'pretraining only';
    else if (!record) $('s-recall').textContent = '—';
    const what =
      `${r.variant} model, ${fmt.int(st.params)} parameters, ` +
      `vocabulary ${st.vocab_size}, ${counted(st.per_epoch, 'step')} per epoch`;
    setStatus(
      'running',
      record
        ? `Resumed ${r.kind} at step ${st.steps} (${what}).`
        : `${r.kind === 'pretrain' ? 'Pretraining' : 'Finetuning'} the ${what}.`,
    );
    $('resume-banner').hidden = true;
    if (!record) {
      lastSave = 0;
      await saveRun();
    } else {
      lastSave = performance.now();
    }
    await steps.startHelpers(r);
    showProgress(null);
    loop();
  } catch (e) {
    P.run = null;
    setStatus('idle', 'Not training.');
    await failed(e, 'could not start');
  }
}

export async function loop() {
  let n = 1;
  while (P.run && S.status === 'running') {
    const t0 = performance.now();
    const before = S.steps;
    let chunk;
    try {
      // A large step, or a step on several engines, is taken in parts (web/page/steps.js): one
      // step a turn, and Pause or Stop in its middle drops it.
      if (steps.inParts(S.started)) {
        chunk = await steps.step(() => S.status !== 'running');
        if (!chunk && S.status === 'running') {
          await finishRun('finished');
          return;
        }
        if (!chunk) break;
      } else {
        // The loss is read back every 2 steps: between two readbacks the engine records steps
        // without yielding (on the page's thread, before the engine moved into a worker, 4 steps
        // on a software adapter came close to the 200 ms long-task bar).
        chunk = await job('train', () => P.engine.train(n, Math.min(n, 2)));
      }
    } catch (e) {
      await failed(e, 'training stopped');
      return;
    }
    const dt = performance.now() - t0;
    const did = chunk.steps - before;
    S.steps = chunk.steps;
    S.chunks += 1;
    if (did > 0) {
      const ms = dt / did;
      // The last steps' times, for the benchmark (web/test/bench-workers.mjs).
      S.stepMs.push(ms);
      if (S.stepMs.length > 1000) S.stepMs.shift();
      S.msPerStep = S.msPerStep ? 0.7 * S.msPerStep + 0.3 * ms : ms;
      n = Math.max(1, Math.min(256, Math.round(P.chunkMs / S.msPerStep)));
    }
    for (const rep of chunk.reports) P.run.losses.push([rep.step, rep.loss]);
    await probeRecall(chunk);
    const last = chunk.reports[chunk.reports.length - 1];
    showProgress(last, last ? last.tokens_per_s : 0);
    if (chunk.done) {
      await finishRun('finished');
      return;
    }
    // A pause or stop asked for during the chunk saves right below: no second save first.
    if (S.status === 'running' && saveDue()) await saveRun();
    await tick();
  }
  if (!P.run) return;
  if (S.status === 'pausing') {
    await saveRun();
    setStatus(
      'paused',
      `Paused at step ${S.steps} of ${P.run.total}; the run is saved in this browser. Resume continues it exactly.`,
    );
    // No ETA while nothing runs (it stayed frozen at the pause's value).
    $('progress-text').textContent =
      `${P.run.kind} ${P.run.variant}: paused at step ${S.steps.toLocaleString()} of ${P.run.total.toLocaleString()}`;
  } else if (S.status === 'stopping') {
    await finishRun('stopped');
  }
}

// Keep the run's exact state in IndexedDB (errors here are shown but do not stop training).
export function saveRun() {
  if (!saving)
    saving = save().finally(() => {
      saving = null;
    });
  return saving;
}

async function save() {
  if (!P.run) return;
  const t0 = performance.now();
  try {
    const state = await job('run_state', () => P.engine.run_state());
    const rec = { ...P.run, state, steps: S.steps, total: P.run.total, savedAt: Date.now() };
    await store.put('run', rec);
    lastSave = performance.now();
    saveCost = lastSave - t0;
    S.saveMs = Math.round(saveCost);
    S.saves += 1;
    S.savedStep = S.steps;
    $('s-saved').textContent = savedText(S.steps, rec.savedAt);
  } catch (e) {
    lastSave = performance.now();
    $('s-saved').textContent = `not saved: ${errText(e)}`;
  }
}

export async function finishRun(how) {
  const r = P.run;
  // Stopped before a single step: there is nothing to keep, and the model the student has stays.
  if (how === 'stopped' && S.steps === 0) return dropRun(r);
  try {
    const label = `${r.label}, ${S.steps} steps${how === 'stopped' ? ' (stopped early)' : ''}`;
    const bytes = await job('finish', () => P.engine.finish(label));
    P.run = null;
    const kept = await store.put(`model:${r.variant}`, { bytes, label, savedAt: Date.now() }).then(
      () => true,
      () => false,
    );
    await store.del('run').catch(() => {});
    releaseRun();
    // The run's last save said an earlier step: the finished model is what this browser keeps now.
    if (kept)
      $('s-saved').textContent =
        `the model, step ${S.steps.toLocaleString()} at ${fmt.clock(Date.now())}`;
    await emit('models'); // before the run shows as finished: its model is in S.models then
    S.finished += 1;
    const lastLoss = r.losses.length ? r.losses[r.losses.length - 1][1] : NaN;
    S.losses = r.losses;
    S.total = r.total;
    S.history.push({
      label: `${r.kind} ${r.variant}${how === 'stopped' ? ' (stopped)' : ''}`,
      points: r.losses,
      total: r.total,
      recall: r.recall,
    });
    // A run that ran to its end while focus was on its Pause (or Stop) button: focus goes to the
    // status line, which says it ended and what is next, not to Pretrain, where one more Enter
    // meant for Pause would start a new run.
    if (
      how === 'finished' &&
      ['btn-pause', 'btn-resume', 'btn-stop'].includes(
        document.activeElement && document.activeElement.id,
      )
    )
      $('train-status').focus();
    // No ETA once the run is over.
    $('progress-text').textContent =
      `${r.kind} ${r.variant}: ${how} at step ${S.steps.toLocaleString()} of ${r.total.toLocaleString()}`;
    setStatus(
      'idle',
      `${r.kind === 'pretrain' ? 'Pretraining' : 'Finetuning'} ${how}: ${S.steps} steps, last ` +
        `loss ${fmt.loss(lastLoss)}. ` +
        (r.kind === 'pretrain'
          ? 'Next: Finetune (it starts from this model).'
          : 'Next: Evaluate below, or Ask at the top of the page.'),
    );
    // Finetune next starts from this model; a middle or full preset takes its pretrained finetune settings.
    if (r.kind === 'pretrain') {
      $('h-from').value = 'model';
      $('h-from').dispatchEvent(new Event('change'));
    }
  } catch (e) {
    await failed(e, 'could not keep the model');
  }
}

async function dropRun(r) {
  try {
    await job('drop run', () => P.engine.drop_run());
  } catch (e) {
    await failed(e, 'could not stop the run');
    return;
  }
  P.run = null;
  await store.del('run').catch(() => {});
  releaseRun();
  $('progress-text').textContent = `${r.kind} ${r.variant}: stopped before the first step`;
  setStatus(
    'idle',
    `${r.kind === 'pretrain' ? 'Pretraining' : 'Finetuning'} stopped before the first step: ` +
      `nothing to keep, your models are unchanged.`,
  );
}

// A run error: a lost device, a non-finite loss, or anything else. The saved state stays offered.
export async function failed(e, what) {
  const msg = errText(e);
  const lost = await P.engine.device_lost();
  // The progress line says where the run ended, with no ETA (it kept the last one after a
  // non-finite loss stopped the run).
  if (P.run)
    $('progress-text').textContent =
      `${P.run.kind} ${P.run.variant}: stopped by an error at ` +
      `step ${S.steps.toLocaleString()} of ${(P.run.total || 0).toLocaleString()}`;
  P.run = null;
  releaseRun(); // the saved state stays offered, here and in the page's other tabs
  if (lost) {
    await P.engine.reset_device();
    S.deviceLost = lost;
    await emit('models');
  }
  S.error = lost ? `device lost: ${lost}` : msg;
  const saved = await store.get('run').catch(() => null);
  const keep = saved
    ? ` The last checkpoint (step ${saved.steps} of ${saved.total}, ` +
      `saved ${fmt.clock(saved.savedAt)}) is kept: “Resume training” above continues from it.`
    : '';
  const head = lost
    ? `The GPU device was lost (${lost}); ${what}.`
    : msg.toLowerCase().startsWith(what)
      ? `${msg[0].toUpperCase()}${msg.slice(1)}.`
      : `${what[0].toUpperCase()}${what.slice(1)}: ${msg}`;
  showBox('train-error', `<p>${esc(head)}${esc(keep)}</p>`);
  // The saved run is offered before the page says it is idle (reading it can wait ~150 ms for a
  // save's IndexedDB write), so whoever sees "idle" sees the Resume button too.
  await offerSaved();
  setStatus('idle', lost ? 'The GPU device was lost.' : 'Not training.');
}

// Why a start is refused while another tab has a run open.
const ELSEWHERE =
  'another tab of this page has a training run open (running or paused); a browser trains one run ' +
  'at a time, since its tabs share the saved state. Stop that run in its tab, or close the tab, then start here';

// The saved run in the banner (with Resume and Discard, or, while another tab has it open, what
// that tab is doing); the record, with `elsewhere` set in that case, or null. While a record or
// another tab's run exists and this tab has none, the banner follows the other tab (every 2 s).
let watching = null;
let wasElsewhere = false;
export async function offerSaved() {
  const elsewhere = !P.run && (await otherTabHoldsRun());
  const rec = await store.get('run').catch(() => null);
  wasElsewhere = elsewhere;
  const watch = !P.run && (rec || elsewhere);
  if (watch && !watching) watching = setInterval(followOtherTab, 2000);
  if (!watch && watching) {
    clearInterval(watching);
    watching = null;
  }
  if (!rec || P.run) {
    $('resume-banner').hidden = true;
    return elsewhere ? { elsewhere } : rec;
  }
  const at = `step ${rec.steps} of ${rec.total}, saved ${new Date(rec.savedAt).toLocaleString()}`;
  $('resume-text').textContent = elsewhere
    ? `A ${rec.kind} run of the ${rec.variant} model is open in another tab of this page ` +
      `(${at}): that tab trains and saves it. Here Ask, Evaluate and the demos work as usual; ` +
      `to train here, stop that run in its tab or close the tab.`
    : `A ${rec.kind} run of the ${rec.variant} model is saved in this browser: ${at}.`;
  for (const id of ['resume-saved', 'discard-saved']) $(id).hidden = elsewhere;
  $('resume-banner').hidden = false;
  if (elsewhere) return { ...rec, elsewhere };
  // The form shows the saved run's settings while it waits (they were the preset's defaults until
  // Resume was pressed).
  restoreForm(rec.form);
  if (!S.losses.length) {
    S.losses = rec.losses || [];
    S.total = rec.total;
    redrawChart();
  }
  return rec;
}

// What the Train card says while no run of this tab's is open.
export function savedStatus(rec) {
  if (rec && rec.elsewhere)
    return 'A run is open in another tab of this page: it trains there. This tab asks, evaluates and runs the demos.';
  if (rec)
    return 'A saved run can be resumed: press Resume (or see the note at the top), or start a new one.';
  return measured() ? READY : MEASURING;
}

// Only a change of hands redraws the banner here (offerSaved shows the saved run's settings in the
// form: every 2 s it would undo what the student types).
async function followOtherTab() {
  if (P.run || reading || S.status !== 'idle') return;
  const before = wasElsewhere;
  if (!before && !(await otherTabHoldsRun())) return;
  const rec = await offerSaved();
  if (wasElsewhere !== before && S.status === 'idle' && !P.run) {
    setStatus(
      'idle',
      before && !wasElsewhere
        ? `The other tab let go of its run. ${savedStatus(rec)}`
        : savedStatus(rec),
    );
  }
}

export async function resumeSaved() {
  const rec = await store.get('run').catch(() => null);
  if (!rec) {
    $('resume-banner').hidden = true;
    return;
  }
  if (S.deviceLost) await restoreModels(); // the models lived on the lost device
  S.deviceLost = null;
  await startRun(rec.kind, rec);
}

export function wireTraining() {
  on('failed', ({ error, what }) => failed(error, what));
  $('btn-pretrain').addEventListener('click', () => startRun('pretrain'));
  $('btn-finetune').addEventListener('click', () => startRun('finetune'));
  $('btn-pause').addEventListener('click', () => {
    if (S.status === 'running') setStatus('pausing', 'Pausing…');
  });
  $('btn-resume').addEventListener('click', () => {
    if (S.status === 'idle' && !P.run) {
      resumeSaved();
      return;
    }
    if (S.status !== 'paused' || !P.run) return;
    setStatus('running', `Continuing ${P.run.kind} from step ${S.steps}.`);
    loop();
  });
  $('btn-stop').addEventListener('click', () => {
    if (S.status === 'running') setStatus('stopping', 'Stopping…');
    else if (S.status === 'paused') {
      setStatus('stopping', 'Stopping…');
      finishRun('stopped');
    }
  });
  $('resume-saved').addEventListener('click', resumeSaved);
  $('discard-saved').addEventListener('click', async () => {
    await store.del('run').catch(() => {});
    $('resume-banner').hidden = true;
    // Its curve goes with it (the chart showed it as "saved run" while it waited).
    if (!S.history.length) {
      S.losses = [];
      S.total = 0;
      redrawChart();
    }
    $('s-saved').textContent = '—';
    setStatus(
      'idle',
      'The saved run was discarded. Press Pretrain to start one with the chosen preset.',
    );
  });
  new ResizeObserver(() => redrawChart()).observe($('chart'));
  // Leaving or hiding the page saves the run at once (best effort on a reload or close: the write
  // may not finish before the page goes, which is why chunks save often too).
  const saveNow = () => {
    if (P.run && ['running', 'pausing', 'stopping'].includes(S.status)) saveRun();
  };
  window.addEventListener('pagehide', saveNow);
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'hidden') saveNow();
  });
}
