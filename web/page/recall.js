// The probe's recall during pretraining (the handout's section 2, live): every few epochs of a Pretrain
// run the engine asks the model being trained to fill the masked birthplaces of a fixed sample of
// people of the finetuning file (s2_recall in src/wasm/section2.rs, the library's probe with the
// key/value cache). The points go on the loss chart's second axis and the last one into the stats.
// Bounded so a quick run stays quick: at most 32 people, about ten probes a run, and none while the
// probes so far took more than 5% of the run's time; never while the user is pausing or stopping.
import { $, P, S, data, job } from './core.js';

const SAMPLE = 32;
const SHARE = 0.05;

export async function probeRecall(chunk) {
  const r = P.run;
  if (!r || r.kind !== 'pretrain' || !data.train) return;
  // Pause and Stop come first: a probe waits for the next chunk that is not being paused.
  if (S.status === 'pausing' || S.status === 'stopping') return;
  const last = chunk.reports[chunk.reports.length - 1];
  if (!last) return;
  r.recall = r.recall || [];
  // The first probe after `every` epochs (an untrained model recalls nothing; probing it would
  // only hold up the run's first seconds), then every `every`, and at the end.
  const every = Math.max(1, Math.ceil(last.epochs / 10));
  const p = (r.probe = r.probe || { every, next: every, ms: 0, t0: performance.now() });
  const completed = chunk.done ? last.epochs : last.epoch - 1;
  if (completed < p.next && !chunk.done) return;
  if (p.ms > SHARE * (performance.now() - p.t0) && !chunk.done) return;
  p.next = completed + p.every;
  const t = performance.now();
  try {
    const got = await job('recall', () =>
      P.engine.s2_recall(data.train.name, data.train.text, SAMPLE),
    );
    if (!got) return;
    r.recall.push([chunk.steps, got.percent]);
    $('s-recall').textContent =
      `${got.percent.toFixed(0)}% (${got.recalled} of ${got.asked}, epoch ${completed})`;
  } catch (e) {
    $('s-recall').textContent = `not measured: ${String((e && e.message) || e)}`;
  } finally {
    p.ms += performance.now() - t;
  }
}
