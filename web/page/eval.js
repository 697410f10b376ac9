// The Evaluate card: run a model over a questions file, score it, filter the rows.
import { $, P, S, data, errText, esc, job, setStatus, showBox, showPred } from './core.js';
import { failed } from './train.js';

// ---------------------------------------------------------------------------------------------
// Evaluation

export async function evaluate() {
  const variant = $('eval-variant').value;
  const which = $('eval-file').value;
  const f = data[which];
  showBox('eval-error', null);
  S.evalError = null;
  if (!f) { showBox('eval-error', `<p>There is no ${which} TSV; load one above or use the built-in corpus.</p>`); return; }
  const raw = $('eval-max').value.trim();
  const max = raw === '' ? undefined : Number(raw);
  if (max !== undefined && !(Number.isInteger(max) && max >= 1)) {
    showBox('eval-error', `<p>“at most” is “${esc(raw)}”; give a whole number of questions, or leave it empty for all.</p>`);
    return;
  }
  $('btn-eval').disabled = true;
  $('eval-status').textContent = `Evaluating the ${variant} model on ${f.name}…`;
  const t0 = performance.now();
  try {
    const rep = await job('evaluate', () => P.wasm.page_evaluate(variant, f.name, f.text, max, (done, total) => {
      $('eval-status').textContent = `Evaluating the ${variant} model on ${f.name}: ${done} of ${total} questions…`;
    }));
    rep.variant = variant;
    rep.file = f.name;
    rep.seconds = (performance.now() - t0) / 1000;
    S.evalReport = rep;
    showEval(rep);
    $('eval-status').textContent = `${rep.rows.length} questions of ${f.name} in ${rep.seconds.toFixed(1)} s with the ${variant} model.`;
  } catch (e) {
    S.evalError = errText(e);
    showBox('eval-error', `<p>${esc(S.evalError)}</p>`);
    $('eval-status').textContent = '';
    if (P.wasm.page_device_lost()) await failed(e, 'evaluation stopped');
  } finally {
    setStatus(S.status);
  }
}

export const pct = ([c, t]) => (t ? `${((100 * c) / t).toFixed(1)}%` : '—');

export function showEval(rep) {
  $('eval-result').hidden = false;
  $('eval-acc').textContent = rep.score ? pct(rep.score) : 'no answers';
  $('eval-line').textContent = rep.score ? rep.line : 'this file has no gold answers, so only predictions are shown';
  $('eval-london').textContent = rep.london ? pct(rep.london) : '—';
  $('eval-london-line').textContent = rep.london_line || '';
  filterEval();
}

export function filterEval() {
  const rep = S.evalReport;
  if (!rep) return;
  const mode = $('eval-filter').value;
  const q = $('eval-search').value.trim().toLowerCase();
  const rows = rep.rows.filter((r) => (mode === 'all' || (mode === 'right' ? r.correct === true : r.correct === false))
    && (!q || `${r.question} ${r.gold || ''} ${r.prediction}`.toLowerCase().includes(q)));
  const shown = rows.slice(0, 1000);
  $('eval-table').querySelector('tbody').innerHTML = shown.map((r) => `<tr class="${r.correct === false ? 'wrong' : ''}">
      <td class="num">${r.line}</td><td>${esc(r.question)}</td><td>${esc(r.gold ?? '')}</td><td>${showPred(r.prediction)}</td>
      <td class="${r.correct ? 'ok' : 'bad'}">${r.correct === null ? '' : r.correct ? '✓' : '✗'}</td></tr>`).join('');
  $('eval-count').textContent = `${rows.length} of ${rep.rows.length} shown${rows.length > shown.length ? ' (first 1000)' : ''}`;
}

export function wireEval() {
  $('btn-eval').addEventListener('click', evaluate);
  $('eval-filter').addEventListener('change', filterEval);
  $('eval-search').addEventListener('input', filterEval);
  $('eval-table').addEventListener('click', (e) => {
    const tr = e.target.closest('tr');
    const q = tr && tr.children[1] && tr.children[1].textContent;
    if (q) { $('ask-text').value = q; $('ask-card').scrollIntoView({ behavior: 'smooth' }); }
  });
}

// ---------------------------------------------------------------------------------------------
