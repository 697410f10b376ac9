// The Evaluate card's report (web/page/eval.js runs the evaluation): the score with run.py's line
// and the London baseline, the table of questions and predictions (each person a button that asks
// it in Ask), the page's earlier evaluations side by side, and the predictions as a download in
// the command line's --outputs_path format.
import { $, S } from './core.js';
import { builtinPerson } from './data.js';
import { esc, rowsHtml, score, showPred } from './ui.js';

// The scored evaluations of this page, newest last, so that two models (pretrained or not, yours
// or the shipped one) can be read side by side after the second report replaced the first.
const HISTORY_MAX = 8;
export function remember(rep) {
  if (!rep.score) return;
  const h = (S.evalHistory = S.evalHistory || []);
  h.push({
    model: rep.model,
    file: rep.file,
    asked: rep.rows.length,
    total: rep.inFile,
    score: rep.score,
  });
  if (h.length > HISTORY_MAX) h.shift();
  showHistory();
}

function showHistory() {
  const h = S.evalHistory || [];
  const box = $('eval-history');
  box.hidden = h.length < 2;
  if (h.length < 2) return;
  const rows = h.map((e) => ({
    cells: [
      e.model,
      e.asked < e.total ? `${e.file} (first ${num(e.asked)} of ${num(e.total)})` : e.file,
      { cls: 'num', text: score(e.score[0], e.score[1]) },
    ],
  }));
  box.querySelector('tbody').innerHTML = rowsHtml(rows.reverse());
}

export function showEval(rep) {
  const gold = !!rep.score;
  $('eval-result').hidden = false;
  $('eval-scores').hidden = !gold;
  $('eval-filter-label').hidden = !gold;
  if (!gold) $('eval-filter').value = 'all';
  if (gold) {
    const [c, t] = rep.score;
    $('eval-acc-label').textContent =
      rep.rows.length < rep.inFile
        ? `accuracy on the first ${num(rep.rows.length)} of ${num(rep.inFile)} questions ` +
          `of ${rep.file} (the rest not asked)`
        : `accuracy on ${rep.file}`;
    $('eval-acc').textContent = score(c, t);
    $('eval-line').textContent = rep.line;
    $('eval-london').textContent = rep.london ? score(rep.london[0], rep.london[1]) : '—';
    $('eval-london-line').textContent = rep.london_line || '';
  }
  // A model of the built-in corpus asked about other people (the course's files): it never saw
  // them, so its score says little; said once here, beside the score. A file of mostly built-in
  // people (a copy of the built-in dev set, whatever its name) is not such a file.
  const known = rep.rows.filter((r) => builtinPerson(r.question)).length;
  const strangers = /built-in corpus/.test(rep.model) && known < rep.rows.length / 2;
  const note = $('eval-strangers');
  note.hidden = !strangers;
  note.textContent = strangers
    ? `The ${rep.model.split(' · ').pop()} learned the made-up people of the built-in corpus; ` +
      `the people of ${rep.file} are new to it, ` +
      "so it guesses (expect about London's score or less). The course model (Models card) " +
      "was trained on the course's files."
    : '';
  const skipped = $('eval-skipped');
  const notes = [rep.skipped, rep.cropped].filter(Boolean);
  skipped.hidden = !notes.length;
  skipped.textContent = notes.map((n) => `${n}.`).join(' ');
  const only = $('eval-predictions-only');
  only.hidden = gold;
  only.textContent = gold
    ? ''
    : `Predictions only: ${rep.file} has no answers (the course keeps the test answers), so ` +
      `there is nothing to score here. ` +
      'Download the predictions to hand them in or to score them where the answers are.';
  $('eval-table').querySelector('thead').innerHTML = gold
    ? '<tr><th class="num">line</th><th>who (the ' +
      'question)</th><th>answer</th><th>prediction</th><th><span ' +
      'class="long">right?</span><abbr class="short" title="right?">✓?</abbr></th></tr>'
    : '<tr><th class="num">line</th><th>who (the question)</th><th>prediction</th></tr>';
  filterEval();
}

export function filterEval() {
  const rep = S.evalReport;
  if (!rep) return;
  const gold = !!rep.score;
  const mode = $('eval-filter').value;
  const q = $('eval-search').value.trim().toLowerCase();
  const rows = rep.rows.filter(
    (r) =>
      (mode === 'all' || (mode === 'right' ? r.correct === true : r.correct === false)) &&
      (!q ||
        `${r.question} ${r.gold || ''} ${r.prediction}${r.lacks ? ' skipped' : ''}`
          .toLowerCase()
          .includes(q)),
  );
  const shown = rows.slice(0, 1000);
  $('eval-table').querySelector('tbody').innerHTML = rowsHtml(
    shown.map((r) => ({
      cls: r.correct === false ? 'wrong' : '',
      cells: gold
        ? [
            { cls: 'num', text: r.line },
            { html: askButton(r.question) },
            r.gold ?? '',
            { html: predicted(r) },
            { cls: r.correct ? 'ok' : 'bad', text: r.correct ? '✓' : '✗' },
          ]
        : [{ cls: 'num', text: r.line }, { html: askButton(r.question) }, { html: predicted(r) }],
    })),
  );
  $('eval-count').textContent =
    `${num(rows.length)} of ${num(rep.rows.length)} shown${rows.length > shown.length ? ' (first 1000)' : ''}`;
}

export const num = (n) => n.toLocaleString('en');

// A row's question as a button that asks it in the Ask card, showing just the person's name where
// the question has the course's form.
function askButton(q) {
  const who = /^Where was (.+) born\?$/.exec(q);
  return (
    `<button type="button" class="cell-ask" data-question="${esc(q)}" title="Ask this in ` +
    `the Ask card and see where the model looked">${esc(who ? who[1] : q)}</button>`
  );
}

// A row's prediction; a question skipped for a character the model lacks says so.
function predicted(r) {
  return r.lacks
    ? `<span class="muted">(skipped: no “${esc(r.lacks)}” in its vocabulary)</span>`
    : showPred(r.prediction);
}

// The predictions as the command line writes them with --outputs_path: each followed by a newline.
export function predictionsText(rep) {
  return rep.rows.map((r) => `${r.prediction}\n`).join('');
}

export function downloadPredictions() {
  const rep = S.evalReport;
  if (!rep) return;
  const url = URL.createObjectURL(
    new Blob([predictionsText(rep)], { type: 'text/plain;charset=utf-8' }),
  );
  const a = document.createElement('a');
  a.href = url;
  a.download = `${rep.stem}.${rep.file.replace(/\.[^.]*$/, '').replace(/[^\w.-]+/g, '_')}.predictions`;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}
