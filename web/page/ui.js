// The page's one set of UI helpers (the training cards, the Benchmark card, the demos and app.js):
// HTML escaping, error text, message boxes, table rows, and numbers, times and scores as people
// read them. Nothing here touches the wasm module, so the demos can import it without waiting.

export const esc = (s) =>
  String(s).replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c],
  );
export const errText = (e) => String((e && e.message) || e);

// Fill (html) or hide (null) a message box such as #train-error.
export function showBox(id, html) {
  const el = document.getElementById(id);
  if (html) {
    el.innerHTML = html;
    el.hidden = false;
  } else {
    el.hidden = true;
    el.innerHTML = '';
  }
}

// Table rows from plain values: cells are escaped unless given as {html}; {num: true} aligns right.
export function rowsHtml(rows) {
  const cell = (c) => {
    if (c && typeof c === 'object')
      return `<td${c.cls ? ` class="${c.cls}"` : ''}>${c.html !== undefined ? c.html : esc(c.text)}</td>`;
    return `<td>${esc(c ?? '')}</td>`;
  };
  return rows
    .map((r) => `<tr${r.cls ? ` class="${r.cls}"` : ''}>${r.cells.map(cell).join('')}</tr>`)
    .join('');
}

// A prediction as text, with an empty or all-blank one said in words (an untrained model often
// answers 32 spaces, which would otherwise look like a missing cell).
export function showPred(p) {
  if (!p) return '<span class="muted">(no answer)</span>';
  if (!p.trim())
    return `<span class="muted">(${p.length} space${p.length === 1 ? '' : 's'})</span>`;
  return esc(p);
}

// A duration in seconds as people say it: "4.2 s", "42 s", "12 min 05 s", "3 h 05 min", "46 days 13 h".
export function duration(s) {
  if (!Number.isFinite(s) || s < 0) return '—';
  if (s < 10) return `${s < 1 ? s.toFixed(2) : s.toFixed(1)} s`;
  s = Math.round(s);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  if (s < 86400)
    return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
  const d = Math.floor(s / 86400);
  return `${d} day${d === 1 ? '' : 's'} ${Math.floor((s % 86400) / 3600)} h`;
}

// A score the way people read it: "2 of 30 correct (6.7%)".
export function score(correct, total) {
  if (!total) return 'no questions';
  return `${correct.toLocaleString()} of ${total.toLocaleString()} correct (${((100 * correct) / total).toFixed(1)}%)`;
}

// A facts file's {correct, total} as a percentage ("8.8%") or a count ("12 of 136"), or said to be
// unmeasured.
export const pctOf = (o) =>
  o && Number.isFinite(o.correct) && o.total > 0
    ? `${((100 * o.correct) / o.total).toFixed(1)}%`
    : 'not measured';
export const countOf = (o) =>
  o && Number.isFinite(o.correct) ? `${o.correct} of ${o.total}` : 'not measured';

// Round axis ticks covering [lo, hi]: steps of 1, 2 or 5 × 10^k, about `n` of them.
export function niceTicks(lo, hi, n = 5) {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / Math.max(1, n);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const steps = [1, 2, 5, 10].map((m) => m * mag);
  const ticks = (step) => {
    const out = [];
    for (let v = Math.ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step)
      out.push(+v.toFixed(12));
    return out;
  };
  let i = steps.findIndex((s) => s >= raw);
  if (i < 0) i = steps.length - 1;
  let out = ticks(steps[i]);
  // A range just under two steps wide (1 … 99 in steps of 50) gets one tick: take the next smaller step.
  while (out.length < 2 && n >= 2 && i > 0) out = ticks(steps[--i]);
  return out;
}

// A count with its noun: "1 question", "136 questions" (`many` where the plural is not noun + s).
export const counted = (n, one, many = `${one}s`) =>
  `${Math.round(n).toLocaleString('en')} ${n === 1 ? one : many}`;

export const fmt = {
  loss: (x) =>
    !Number.isFinite(x) ? String(x) : Math.abs(x) >= 1e4 ? x.toExponential(3) : x.toFixed(4),
  lr: (x) => x.toExponential(3),
  int: (x) => Math.round(x).toLocaleString(),
  time: duration,
  // A step's time: milliseconds below a second, else as a duration ("4 min 29 s", not "269017").
  step: (ms) =>
    !Number.isFinite(ms)
      ? '—'
      : ms < 1000
        ? `${ms < 10 ? ms.toFixed(2) : Math.round(ms)} ms`
        : duration(ms / 1000),
  clock: (t) => new Date(t).toLocaleTimeString(),
};

// A canvas's 2-D context drawing in CSS pixels (w × h) on a devicePixelRatio backing store, resized
// only when the size changed, and cleared: the loss chart's and the demos' charts'.
export function canvas2d(canvas, w, h) {
  const dpr = window.devicePixelRatio || 1;
  if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
  }
  const g = canvas.getContext('2d');
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, w, h);
  return g;
}
