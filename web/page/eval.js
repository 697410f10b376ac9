// The Evaluate card: run a model over a questions file and show what it predicted. A file with
// answers is scored ("2 of 30 correct (6.7%)", with the line the course's run.py prints beside it);
// a file without answers (the test inputs) gives predictions only. Before a long evaluation the
// first questions are timed and the estimate for the rest is shown, with the choice to go on.
// Predictions download in the command line's --outputs_path format: one prediction per line.
// On the CPU backend with N engines (web/helpers.js) the questions are asked in rounds: the page's
// engine answers each round's first block, every helper (holding a copy of the model) one block
// after it, and the page's engine appends them in question order (src/wasm/eval_split.rs). So the
// answered questions are always the file's first ones, in order, and the report, a stopped one
// too, is the one engine's.
import { $, P, S, data, job, setStatus } from './core.js';
import { counted, duration, errText, esc, showBox } from './ui.js';
import { emit, on } from './events.js';
import { downloadName, modelName } from './models.js';
import { engines, started } from './steps.js';
import { downloadPredictions, filterEval, num, remember, showEval } from './eval-report.js';
import * as helpers from '../helpers.js';

// Before a longer evaluation three engine calls are timed, SAMPLE, SAMPLE and 3 × SAMPLE
// questions; they count toward the run. Files of SAMPLE_ABOVE questions or fewer just start.
const SAMPLE = 4;
const TIMED = 5 * SAMPLE;
const SAMPLE_ABOVE = 20;
const ASK_ABOVE_S = 20;
// What a call of n questions costs here, t(n) = a + b·n seconds (the questions of a call are
// decoded together, so a few cost nearly as much as many: on the CPU backend 4 of the shipped
// model's took 0.26 s, 64 about 0.1 s more), fitted to the faster call of SAMPLE (a page's first
// calls of an evaluation can take a few times longer, once) and the call of 3 × SAMPLE; per model
// label (a model replaced under the same variant has another label) and count of engines.
const costs = new Map();
const costKey = (slot) =>
  `${slot}\n${(S.models.find((m) => m.slot === slot) || {}).label || ''}\n${engines()}`;

// What the next evaluation would cover: {variant, which, file, max, count} or throws the user's words.
function planned() {
  const variant = $('eval-variant').value; // the model's slot ("vanilla", "vanilla:kept")
  const m = S.models.find((x) => x.slot === variant);
  const which = $('eval-file').value;
  const f = data[which];
  if (!f) throw new Error(`There is no ${which} TSV; load one above or use the built-in corpus.`);
  const raw = $('eval-max').value.trim();
  const max = raw === '' ? undefined : Number(raw);
  if (max !== undefined && !(Number.isInteger(max) && max >= 1)) {
    throw new Error(
      `“at most” is “${raw}”; give a whole number of questions, or leave it empty for all.`,
    );
  }
  const rows = f.examples || 0;
  return {
    variant,
    name: m ? modelName(m) : variant,
    which,
    f,
    max,
    count: max ? Math.min(max, rows || max) : rows,
  };
}

// Questions asked for in one engine call: as many as take about PART_MS here, at most MAX_PART
// (between parts a demo, a question or a training chunk gets its turn).
const PART_MS = 500;
const MAX_PART = 64;

// The part size for a cost: a call of about PART_MS, or of about twice its fixed cost where that
// is larger (a call of one question would take nearly as long as a call of many); and the
// seconds `count` questions take in such parts.
function partFor({ a, b }) {
  return Math.max(1, Math.min(MAX_PART, Math.floor(Math.max(PART_MS / 1000 - a, a) / b)));
}
function secondsFor(cost, count) {
  if (!count) return 0;
  const part = Math.min(count, partFor(cost));
  return Math.ceil(count / part) * (cost.a + cost.b * part);
}

// The line under the button: how many questions, and how long they take here once measured.
export function showEstimate() {
  let line = '';
  try {
    const p = planned();
    const cost = costs.get(costKey(p.variant));
    line =
      `${p.count.toLocaleString()} question${p.count === 1 ? '' : 's'} of ${p.f.name}` +
      (cost
        ? `: about ${duration(secondsFor(cost, p.count))} with ${p.name} on this device (measured here).`
        : `. Before a long evaluation the first ${TIMED} questions are timed and you see the estimate for the rest.`);
  } catch {
    /* no file or a bad "at most": the button says why */
  }
  $('eval-estimate').textContent = line;
}

// The evaluation going on or waiting for the user's choice after its first questions were timed:
// {p (the plan), st (progress), seconds (spent so far), helpers (those answering blocks of it),
// joined (seconds from its start until they did), engines (the most that answered a round),
// byHelpers (the questions the helpers answered), why (why fewer than asked), stop (asked)}. Its
// answered questions count toward the run (the engine keeps them: eval_limit, eval_next).
let current = null;

// Let the helpers answer blocks of the evaluation `ev` once each holds a copy of the model and the
// same file (web/helpers.js evalBegin); until then the page's engine answers alone, so starting
// them (a wasm module each, the first time) never holds the evaluation up. At most one engine per
// question; none but the page's on one engine.
async function join(ev) {
  const n = Math.min(engines(), ev.st.total);
  if (n <= 1) return;
  const t0 = performance.now();
  // The model's bytes are asked for first, so they come before the first round in the queue.
  const copy = job('evaluate', () => P.engine.model_bytes(ev.p.variant));
  copy.catch(() => {}); // awaited below
  try {
    const hs = await started(n);
    if (!hs.length) return;
    const bytes = await copy;
    const { ready, why } = await helpers.evalBegin(hs, bytes, ev.p.f.name, ev.p.f.text, ev.p.max);
    if (why)
      ev.why = `${ready.length + 1} of ${hs.length + 1} engines: a helper could not take the model (${why})`;
    ev.helpers = ready;
    ev.joined = (performance.now() - t0) / 1000;
  } catch (e) {
    ev.why = `the helper engines could not take the evaluation (${errText(e)}); it ran on one engine`;
  }
}

// Questions [start, start + count) cut into n blocks as even as possible (the first ones longer,
// empty ones left out): a round's blocks, the page's engine's first, then helper i's at i + 1.
function cut(start, count, n) {
  const out = [];
  for (let i = 0, at = start; i < n; i++) {
    const size = Math.floor(count / n) + (i < count % n ? 1 : 0);
    if (size) out.push([at, at + size]);
    at += size;
  }
  return out;
}

// One round of `count` questions on the page's engine and the helpers `hs`: the page's engine
// answers the first block, the helpers the others at the same time (outside the page's queue:
// they touch nothing of the page's engine), appended here in order. A failed block ends the
// evaluation with the blocks before it kept. Returns the progress and the page's engine's block
// size.
async function round(ev, hs, count) {
  const blocks = cut(ev.st.done, count, 1 + hs.length);
  const calls = blocks.slice(1).map(([first, end], i) => helpers.evalPart(hs[i], first, end));
  for (const c of calls) c.catch(() => {}); // awaited below, in order
  const [first, end] = blocks[0];
  let st = await job('evaluate', () => P.engine.eval_next(end - first));
  for (const c of calls) {
    const block = await c;
    st = await job('evaluate', () => P.engine.eval_add(block));
  }
  return { st, mine: end - first };
}

// One round of `count` questions with its bookkeeping and the status line; returns the seconds it
// took and the page's engine's share.
async function oneRound(ev, count, label) {
  const t1 = performance.now();
  const before = ev.st.done;
  const n = 1 + ev.helpers.length;
  const { st, mine } = await round(ev, ev.helpers, count);
  const seconds = (performance.now() - t1) / 1000;
  ev.byHelpers += st.done - before - mine;
  ev.engines = Math.max(ev.engines, n);
  ev.st = st;
  S.evalAsked = (S.evalAsked || 0) + (st.done - before); // questions asked of the engines (tests)
  ev.seconds += seconds;
  const rest = st.total - st.done;
  const cost = costs.get(costKey(ev.p.variant));
  const left = rest
    ? ` · about ${duration(cost ? secondsFor(cost, rest) : (ev.seconds / st.done) * rest)} left`
    : '';
  $('eval-status').textContent =
    `${label} ${ev.p.name} ` +
    `on ${ev.p.f.name}${n > 1 ? ` on ${n} engines` : ''}: ${num(st.done)} ` +
    `of ${num(st.total)} questions${left}…`;
  return { seconds, mine };
}

// Time the calls the cost is fitted to (see SAMPLE); false when stopped or too few questions.
async function timeCost(ev) {
  const calls = [];
  for (const n of [SAMPLE, SAMPLE, 3 * SAMPLE]) {
    if (ev.stop || ev.st.total - ev.st.done < n) return false;
    calls.push(await oneRound(ev, n, 'Timing'));
  }
  // The two calls of SAMPLE: the faster one (the other may carry a one-off cost).
  const small = calls[0].seconds < calls[1].seconds ? calls[0] : calls[1];
  const large = calls[2];
  const b = Math.max(1e-4, (large.seconds - small.seconds) / Math.max(1, large.mine - small.mine));
  costs.set(costKey(ev.p.variant), { a: Math.max(0, small.seconds - b * small.mine), b });
  return true;
}

// Ask in rounds until `until` questions are answered (or all, or Stop); returns the progress.
// `part` is one engine's share of a round, grown or shrunk toward PART_MS a call, but never
// below the timed cost's part (a call's fixed cost would otherwise shrink the parts to one
// question); each round takes the helpers that have joined.
async function runParts(ev, until, label) {
  const cost = costs.get(costKey(ev.p.variant));
  const least = cost ? partFor(cost) : 1;
  let part = cost ? least : SAMPLE;
  while (ev.st.done < Math.min(until, ev.st.total) && !ev.stop) {
    const n = 1 + ev.helpers.length;
    const { seconds, mine } = await oneRound(
      ev,
      Math.min(part * n, Math.min(until, ev.st.total) - ev.st.done),
      label,
    );
    part = Math.max(
      least,
      Math.min(MAX_PART, Math.round(PART_MS / ((1000 * seconds) / Math.max(1, mine)))),
    );
  }
  return ev.st;
}

// The report of what was answered (all, or a stopped or failed evaluation's part), shown.
async function finish(ev, failed = false) {
  const rep = await job('evaluate', () => P.engine.eval_report());
  const n = ev.engines;
  // inFile: the file's questions, more than total when "at most" or "only the first N" cut the run.
  Object.assign(rep, {
    variant: ev.p.variant,
    model: ev.p.name,
    file: ev.p.f.name,
    inFile: Math.max(rep.total, ev.p.f.examples || 0),
    stem: downloadName(ev.p.variant).replace(/\.safetensors$/, ''),
    seconds: ev.seconds,
    engines: n,
    byHelpers: ev.byHelpers,
    joined: ev.joined,
    fewer: ev.why,
  });
  current = null;
  S.evalReport = rep;
  remember(rep);
  showEval(rep);
  const part = rep.rows.length < rep.total;
  const first =
    rep.rows.length < rep.inFile
      ? `the first ${num(rep.rows.length)} of the ${num(rep.inFile)} `
      : '';
  $('eval-status').textContent = part
    ? `${failed ? 'Failed' : 'Stopped'} after ${num(rep.rows.length)} of ${num(rep.total)} ` +
      `questions of ${ev.p.f.name} (${duration(ev.seconds)}, ${ev.p.name}): the results below ` +
      `are those ${num(rep.rows.length)}.`
    : `${first ? `Asked ${first}questions` : counted(rep.rows.length, 'question')} ` +
      `of ${ev.p.f.name} in ${duration(ev.seconds)} ` +
      `with ${ev.p.name}${n > 1 ? ` on ${n} engines` : ''}.`;
  if (ev.why) $('eval-status').textContent += ` (${ev.why}.)`;
  // The end, said to a screen reader (the progress above changes too often to be read out).
  $('eval-live').textContent = `${$('eval-status').textContent}${rep.score ? ` ${rep.line}` : ''}`;
  showEstimate();
  return rep;
}

function running(on) {
  $('btn-eval').disabled = on;
  $('eval-stop').hidden = !on;
  if (!on) setStatus(S.status);
}

// Evaluate the planned file; `choice` is the user's answer to the estimate (how many questions,
// 0: cancel), which continues the evaluation whose first questions were timed.
export async function evaluate(choice) {
  showBox('eval-error', null);
  showBox('eval-confirm', null);
  S.evalError = null;
  let ev = current;
  running(true);
  try {
    if (choice !== undefined) {
      if (!ev) return;
      if (choice === 0) {
        current = null;
        $('eval-status').textContent =
          `Cancelled: nothing more of ${ev.p.f.name} is ` +
          `asked${S.evalReport ? '; the report below is the one before' : ''}.`;
        return;
      }
      ev.st = await job('evaluate', () => P.engine.eval_limit(choice));
    } else {
      S.evalEstimate = null;
      let p;
      try {
        p = planned();
      } catch (e) {
        showBox('eval-error', `<p>${esc(errText(e))}</p>`);
        return;
      }
      const st = await job('evaluate', () =>
        P.engine.eval_begin(p.variant, p.f.name, p.f.text, p.max),
      );
      ev = current = {
        p,
        st,
        seconds: 0,
        helpers: [],
        joined: null,
        engines: 1,
        byHelpers: 0,
        why: '',
        stop: false,
      };
      join(ev);
      // A long evaluation: time the first questions (they count toward it) and ask before going on.
      if (st.total > SAMPLE_ABOVE) {
        const key = costKey(p.variant);
        if (!costs.has(key)) await timeCost(ev);
        if (ev.stop) {
          await finish(ev);
          return;
        }
        const cost = costs.get(key);
        const rest = st.total - ev.st.done;
        const est = cost ? secondsFor(cost, rest) : (ev.seconds / Math.max(1, ev.st.done)) * rest;
        const rate = est / Math.max(1, rest);
        showEstimate();
        S.evalEstimate = {
          questions: st.total,
          seconds: est,
          perQuestion: rate,
          asked: est > ASK_ABOVE_S,
          timed: ev.st.done,
        };
        if (est > ASK_ABOVE_S) {
          const count = st.total;
          const few = Math.max(TIMED, Math.min(count, Math.floor(ASK_ABOVE_S / rate)));
          const timed = ev.st.done
            ? ` (the first ${ev.st.done} took ${duration(ev.seconds)}; they count toward it)`
            : '';
          $('eval-status').textContent = '';
          showBox(
            'eval-confirm',
            `<p>${count.toLocaleString()} questions would take about ` +
              `<strong>${duration(est + ev.seconds)}</strong> with ${esc(p.name)} on this ` +
              `device${timed}. ` +
              'The page stays usable meanwhile; the demos and a training run take their turns between ' +
              'its parts, and Stop keeps what is answered.</p>' +
              `<p><button type="button" data-eval="${count}">Evaluate all ${count.toLocaleString()}</button> ` +
              // A shorter run is offered only where it saves most of the time.
              // (The timed questions are answered already: only what is left of the first `few` costs time.)
              (few <= count / 2
                ? `<button type="button" class="secondary" data-eval="${few}">Only the ` +
                  `first ${few.toLocaleString()} ` +
                  `${few > ev.st.done ? `(about ${duration(rate * (few - ev.st.done))} more)` : '(answered already)'}` +
                  `</button> `
                : '') +
              '<button type="button" class="secondary" data-eval="0">Cancel</button></p>',
          );
          return;
        }
      }
    }
    await runParts(ev, Infinity, 'Evaluating');
    await finish(ev);
  } catch (e) {
    const error = errText(e);
    // What was answered before the failure is kept and shown; the error is published after it
    // (window.__page.evalError then finds the partial report in place).
    if (ev && ev.st && ev.st.done) {
      try {
        await finish(ev, true);
      } catch {
        /* the report is gone with the device */
      }
    } else {
      $('eval-status').textContent = '';
    }
    S.evalError = error;
    current = null;
    showBox('eval-error', `<p>${esc(S.evalError)}</p>`);
    if (await P.engine.device_lost())
      await emit('failed', { error: e, what: 'evaluation stopped' });
  } finally {
    running(false);
  }
}

export function wireEval() {
  on('models', showEstimate);
  on('data', showEstimate);
  $('btn-eval').addEventListener('click', () => evaluate());
  // Enter in "at most" evaluates, as Enter in Ask's box asks.
  $('eval-max').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !$('btn-eval').disabled) evaluate();
  });
  $('eval-confirm').addEventListener('click', (e) => {
    const b = e.target.closest('button[data-eval]');
    if (!b) return;
    showBox('eval-confirm', null);
    const n = Number(b.dataset.eval);
    evaluate(n);
    // The box and its buttons are gone: focus goes to Stop while the evaluation runs on (evaluate
    // shows it before its first wait), or back to Evaluate when nothing more is asked.
    (n && !$('eval-stop').hidden ? $('eval-stop') : $('btn-eval')).focus();
  });
  // Stop after the part going on; what is answered is shown.
  $('eval-stop').addEventListener('click', () => {
    if (current) current.stop = true;
  });
  for (const id of ['eval-variant', 'eval-file', 'eval-max'])
    $(id).addEventListener('input', showEstimate);
  $('eval-filter').addEventListener('change', filterEval);
  $('eval-search').addEventListener('input', filterEval);
  $('eval-download').addEventListener('click', downloadPredictions);
  $('eval-table').addEventListener('click', (e) => {
    const b = e.target.closest('button[data-question]');
    if (b) emit('ask', { question: b.dataset.question });
  });
}
