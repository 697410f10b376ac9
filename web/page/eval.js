// The Evaluate card: run a model over a questions file and show what it predicted. A file with
// answers is scored ("2 of 30 correct (6.7%)", with the line the course's run.py prints beside it);
// a file without answers (the test inputs) gives predictions only. Before a long evaluation the
// first questions are timed and the estimate for the rest is shown, with the choice to go on.
// Predictions download in the command line's --outputs_path format: one prediction per line.
// On the CPU backend with N engines (web/helpers.js) the questions are split into N blocks: the
// page's engine decodes the first in parts, each helper one more, added in order at the end.
import { $, P, S, data, job, setStatus } from './core.js';
import { duration, errText, esc, rowsHtml, score, showBox, showPred } from './ui.js';
import { emit, on } from './events.js';
import { engines } from './steps.js';
import * as helpers from '../helpers.js';

// Questions timed before a longer evaluation, and the estimate below which it just starts.
const SAMPLE = 4;
const SAMPLE_ABOVE = 20; // questions; fewer just start
const ASK_ABOVE_S = 20;
// Seconds per question measured here, per model label (a model replaced under the same variant
// has another label).
const rates = new Map();
const rateKey = (variant) => `${variant}\n${(S.models.find((m) => m.variant === variant) || {}).label || ''}`;

// What the next evaluation would cover: {variant, which, file, max, count} or throws the user's words.
function planned() {
  const variant = $('eval-variant').value;
  const which = $('eval-file').value;
  const f = data[which];
  if (!f) throw new Error(`There is no ${which} TSV; load one above or use the built-in corpus.`);
  const raw = $('eval-max').value.trim();
  const max = raw === '' ? undefined : Number(raw);
  if (max !== undefined && !(Number.isInteger(max) && max >= 1)) {
    throw new Error(`“at most” is “${raw}”; give a whole number of questions, or leave it empty for all.`);
  }
  const rows = Number((f.info.match(/^([\d,.\s]+) questions/) || [])[1]?.replace(/\D/g, '')) || 0;
  return { variant, which, f, max, count: max ? Math.min(max, rows || max) : rows };
}

// The line under the button: how many questions, and how long they take here once measured.
export function showEstimate() {
  let line = '';
  try {
    const p = planned();
    const rate = rates.get(rateKey(p.variant));
    line = `${p.count.toLocaleString()} question${p.count === 1 ? '' : 's'} of ${p.f.name}` +
      (rate ? `: about ${duration(rate * p.count)} with the ${p.variant} model on this device (${duration(rate)} a question, measured here).`
        : `. Before a long evaluation the first ${SAMPLE} questions are timed and you see the estimate for the rest.`);
  } catch { /* no file or a bad "at most": the button says why */ }
  $('eval-estimate').textContent = line;
}

// Questions asked for in one engine call: as many as take about PART_MS here (between parts a
// demo, a question or a training chunk gets its turn).
const PART_MS = 500;

async function runEval(p, max, { sample = false } = {}) {
  const t0 = performance.now();
  let st = await job('evaluate', () => P.wasm.page_eval_begin(p.variant, p.f.name, p.f.text, max));
  const n = Math.min(engines(), st.total);
  const per = Math.ceil(st.total / n);
  let blocks = [];
  if (n > 1) {
    const bytes = await job('evaluate', () => P.wasm.page_model_bytes(p.variant));
    const cuts = Array.from({ length: n - 1 }, (_, i) => [(i + 1) * per, Math.min(st.total, (i + 2) * per)]);
    blocks = helpers.evalBlocks(bytes, [p.variant, p.f.name, p.f.text, max], cuts);
  }
  const mine = n > 1 ? per : st.total;
  const on = n > 1 ? ` (${n} engines; this one's block)` : '';
  let part = 4;
  while (st.done < mine) {
    const t1 = performance.now();
    const before = st.done;
    st = await job('evaluate', () => P.wasm.page_eval_next(Math.min(part, mine - st.done)));
    const each = (performance.now() - t1) / Math.max(1, st.done - before);
    part = Math.max(1, Math.min(64, Math.round(PART_MS / each)));
    const secs = (performance.now() - t0) / 1000;
    const left = st.done < mine ? ` · about ${duration((secs / st.done) * (mine - st.done))} left` : '';
    $('eval-status').textContent = `${sample ? 'Timing' : 'Evaluating'} the ${p.variant} model on ${p.f.name}: ${st.done} of ${mine} questions${on}${left}…`;
  }
  for (const b of blocks) {
    const got = await b;
    st = await job('evaluate', () => P.wasm.page_eval_add(got));
  }
  const rep = await job('evaluate', () => P.wasm.page_eval_report());
  const seconds = (performance.now() - t0) / 1000;
  if (rep.rows.length) rates.set(rateKey(p.variant), seconds / rep.rows.length);
  return { rep, seconds };
}

export async function evaluate(forceMax) {
  showBox('eval-error', null);
  showBox('eval-confirm', null);
  S.evalError = null;
  if (!forceMax) S.evalEstimate = null;
  let p;
  try { p = planned(); } catch (e) { showBox('eval-error', `<p>${esc(errText(e))}</p>`); return; }
  const max = forceMax || p.max;
  const count = forceMax ? Math.min(forceMax, p.count) : p.count;
  $('btn-eval').disabled = true;
  try {
    // A long evaluation: time the first questions and ask before going on.
    if (!forceMax && count > SAMPLE_ABOVE) {
      if (!rates.has(rateKey(p.variant))) await runEval(p, SAMPLE, { sample: true });
      const rate = rates.get(rateKey(p.variant));
      const est = rate * count;
      showEstimate();
      S.evalEstimate = { questions: count, seconds: est, perQuestion: rate, asked: est > ASK_ABOVE_S };
      if (est > ASK_ABOVE_S) {
        const few = Math.max(SAMPLE, Math.min(count, Math.floor(ASK_ABOVE_S / rate)));
        $('eval-status').textContent = '';
        showBox('eval-confirm', `<p>${count.toLocaleString()} questions would take about <strong>${duration(est)}</strong> with the ${esc(p.variant)} model on this device ` +
          `(the first ${SAMPLE} took ${duration(rate * SAMPLE)}). The page stays usable meanwhile; the demos and a training run take their turns between its parts.</p>` +
          `<p><button type="button" data-eval="${count}">Evaluate all ${count.toLocaleString()}</button> ` +
          `<button type="button" class="secondary" data-eval="${few}">Only the first ${few} (about ${duration(rate * few)})</button> ` +
          `<button type="button" class="secondary" data-eval="0">Cancel</button></p>`);
        return;
      }
    }
    $('eval-status').textContent = `Evaluating the ${p.variant} model on ${p.f.name}…`;
    const { rep, seconds } = await runEval(p, max);
    Object.assign(rep, { variant: p.variant, file: p.f.name, seconds });
    S.evalReport = rep;
    showEval(rep);
    $('eval-status').textContent = `${rep.rows.length} questions of ${p.f.name} in ${duration(seconds)} with the ${p.variant} model.`;
    showEstimate();
  } catch (e) {
    S.evalError = errText(e);
    showBox('eval-error', `<p>${esc(S.evalError)}</p>`);
    $('eval-status').textContent = '';
    if (await P.wasm.page_device_lost()) await emit('failed', { error: e, what: 'evaluation stopped' });
  } finally {
    setStatus(S.status);
  }
}

export function showEval(rep) {
  const gold = !!rep.score;
  $('eval-result').hidden = false;
  $('eval-scores').hidden = !gold;
  $('eval-filter-label').hidden = !gold;
  if (!gold) $('eval-filter').value = 'all';
  if (gold) {
    const [c, t] = rep.score;
    $('eval-acc-label').textContent = `accuracy on ${rep.file}`;
    $('eval-acc').textContent = score(c, t);
    $('eval-line').textContent = rep.line;
    $('eval-london').textContent = rep.london ? score(rep.london[0], rep.london[1]) : '—';
    $('eval-london-line').textContent = rep.london_line || '';
  }
  const skipped = $('eval-skipped');
  skipped.hidden = !rep.skipped;
  skipped.textContent = rep.skipped ? `${rep.skipped}.` : '';
  const only = $('eval-predictions-only');
  only.hidden = gold;
  only.textContent = gold ? '' : `Predictions only: ${rep.file} has no answers (the course keeps the test answers), so there is nothing to score here. ` +
    'Download the predictions to hand them in or to score them where the answers are.';
  $('eval-table').querySelector('thead').innerHTML = gold
    ? '<tr><th class="num">line</th><th>question</th><th>answer</th><th>prediction</th><th>right?</th></tr>'
    : '<tr><th class="num">line</th><th>question</th><th>prediction</th></tr>';
  filterEval();
}

export function filterEval() {
  const rep = S.evalReport;
  if (!rep) return;
  const gold = !!rep.score;
  const mode = $('eval-filter').value;
  const q = $('eval-search').value.trim().toLowerCase();
  const rows = rep.rows.filter((r) => (mode === 'all' || (mode === 'right' ? r.correct === true : r.correct === false))
    && (!q || `${r.question} ${r.gold || ''} ${r.prediction}`.toLowerCase().includes(q)));
  const shown = rows.slice(0, 1000);
  $('eval-table').querySelector('tbody').innerHTML = rowsHtml(shown.map((r) => ({
    cls: r.correct === false ? 'wrong' : '',
    cells: gold
      ? [{ cls: 'num', text: r.line }, r.question, r.gold ?? '', { html: showPred(r.prediction) },
        { cls: r.correct ? 'ok' : 'bad', text: r.correct ? '✓' : '✗' }]
      : [{ cls: 'num', text: r.line }, r.question, { html: showPred(r.prediction) }],
  })));
  $('eval-count').textContent = `${rows.length} of ${rep.rows.length} shown${rows.length > shown.length ? ' (first 1000)' : ''}`;
}

// The predictions as the command line writes them with --outputs_path: each followed by a newline.
export function predictionsText(rep) {
  return rep.rows.map((r) => `${r.prediction}\n`).join('');
}

function downloadPredictions() {
  const rep = S.evalReport;
  if (!rep) return;
  const url = URL.createObjectURL(new Blob([predictionsText(rep)], { type: 'text/plain;charset=utf-8' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = `${rep.variant}.${rep.file.replace(/\.[^.]*$/, '').replace(/[^\w.-]+/g, '_')}.predictions`;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

export function wireEval() {
  on('models', showEstimate);
  on('data', showEstimate);
  $('btn-eval').addEventListener('click', () => evaluate());
  $('eval-confirm').addEventListener('click', (e) => {
    const b = e.target.closest('button[data-eval]');
    if (!b) return;
    const n = Number(b.dataset.eval);
    showBox('eval-confirm', null);
    if (n > 0) evaluate(n);
  });
  for (const id of ['eval-variant', 'eval-file', 'eval-max']) $(id).addEventListener('input', showEstimate);
  $('eval-filter').addEventListener('change', filterEval);
  $('eval-search').addEventListener('input', filterEval);
  $('eval-download').addEventListener('click', downloadPredictions);
  $('eval-table').addEventListener('click', (e) => {
    const tr = e.target.closest('tbody tr');
    const q = tr && tr.children[1] && tr.children[1].textContent;
    if (q) { $('ask-text').value = q; $('ask-card').scrollIntoView({ behavior: 'smooth' }); }
  });
}
