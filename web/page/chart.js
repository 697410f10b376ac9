// The live loss chart: one canvas, loss against step, redrawn from the whole history each time (at
// most a few thousand points per curve, thinned to the canvas width). Several curves (pretraining,
// then finetuning, ...) share the axes, each in its own colour with a legend; the ticks are round
// numbers (1, 2 or 5 × 10^k). Colours come from CSS custom properties and the Okabe–Ito palette.
// A pretraining curve may carry the probe's recall ([step, %], web/page/recall.js): dashed, in its
// curve's colour, on a second axis (0–100%) at the right.
import { canvas2d, niceTicks } from './ui.js';

const COLOURS = ['#0072B2', '#D55E00', '#009E73'];

const tickText = (v) =>
  Math.abs(v) >= 1e4
    ? v.toExponential(0)
    : Math.abs(v) >= 1000
      ? v.toLocaleString()
      : String(+v.toPrecision(4));

// The legend's labels: runs of the same kind ("pretrain vanilla" twice) numbered in order, so that
// no two curves read the same ("pretrain vanilla 1 (stopped)", "pretrain vanilla 2").
export function legendLabels(series) {
  const base = series.map((s) => s.label.replace(/ \(stopped\)$/, ''));
  const seen = new Map();
  return series.map((s, k) => {
    if (base.filter((b) => b === base[k]).length < 2) return s.label;
    const n = (seen.get(base[k]) || 0) + 1;
    seen.set(base[k], n);
    return `${base[k]} ${n}${s.label.endsWith(' (stopped)') ? ' (stopped)' : ''}`;
  });
}

// series: [{label, points: [[step, loss]...], total, recall?: [[step, %]...]}], the last one the run going on.
export function drawLoss(canvas, series) {
  const w = canvas.clientWidth || 800,
    h = canvas.clientHeight || 220;
  const g = canvas2d(canvas, w, h);
  const css = getComputedStyle(canvas);
  const fg = css.getPropertyValue('--fg').trim() || '#1d232b';
  const muted = css.getPropertyValue('--muted').trim() || '#5b6673';
  const line = css.getPropertyValue('--line').trim() || '#d8dde3';
  const withRecall = series.some((s) => s.recall && s.recall.length);
  const R = withRecall ? 44 : 16,
    T = 22,
    B = 36;
  g.font = '11px system-ui, sans-serif';
  g.fillStyle = muted;
  // A diverging run can report a NaN or an infinite loss: it is left out of the scale and the curve.
  const labels = legendLabels(series);
  const curves = series.map((s, k) => ({
    ...s,
    label: labels[k],
    colour: COLOURS[k % COLOURS.length],
    points: s.points.filter(([, l]) => Number.isFinite(l)),
  }));
  const all = curves.flatMap((c) => c.points);
  if (!all.length) {
    g.fillText('The loss appears here while training.', 52, h / 2);
    return;
  }
  const maxStep = Math.max(
    1,
    ...curves.map((c) =>
      Math.max(c.total || 0, c.points.length ? c.points[c.points.length - 1][0] : 0),
    ),
  );
  let lo = Infinity,
    hi = -Infinity;
  for (const [, l] of all) {
    lo = Math.min(lo, l);
    hi = Math.max(hi, l);
  }
  if (hi - lo < 1e-6) {
    hi += 0.5;
    lo = Math.max(0, lo - 0.5);
  }
  const yt = niceTicks(Math.max(0, lo - (hi - lo) * 0.05), hi + (hi - lo) * 0.05, 4);
  lo = Math.min(lo, yt[0]);
  hi = Math.max(hi, yt[yt.length - 1]);
  const xt = niceTicks(0, maxStep, Math.max(2, Math.floor((w - 80) / 90)));
  const xMax = Math.max(maxStep, xt[xt.length - 1]);
  const L = Math.max(44, 28 + Math.max(...yt.map((v) => g.measureText(tickText(v)).width)));
  const x = (s) => L + ((w - L - R) * s) / xMax;
  const y = (l) => T + ((h - T - B) * (hi - l)) / (hi - lo);
  g.strokeStyle = line;
  g.lineWidth = 1;
  g.textAlign = 'right';
  g.textBaseline = 'middle';
  for (const v of yt) {
    g.beginPath();
    g.moveTo(L, y(v));
    g.lineTo(w - R, y(v));
    g.stroke();
    g.fillText(tickText(v), L - 6, y(v));
  }
  g.textAlign = 'center';
  g.textBaseline = 'top';
  for (const s of xt) g.fillText(tickText(s), x(s), h - B + 6);
  g.save();
  g.translate(10, T + (h - T - B) / 2);
  g.rotate(-Math.PI / 2);
  g.fillText('loss', 0, 0);
  g.restore();
  g.textAlign = 'center';
  g.fillText('step', L + (w - L - R) / 2, h - 13);
  // legend along the top
  g.textAlign = 'left';
  g.textBaseline = 'middle';
  let lx = L;
  for (const c of curves) {
    g.fillStyle = c.colour;
    g.fillRect(lx, 6, 14, 3);
    g.fillStyle = fg;
    g.fillText(c.label, lx + 18, 8);
    lx += 30 + g.measureText(c.label).width;
  }
  // the curves, thinned to about one point per pixel
  for (const c of curves) {
    if (!c.points.length) continue;
    const every = Math.max(1, Math.floor(c.points.length / (w - L - R)));
    g.strokeStyle = c.colour;
    g.lineWidth = 1.6;
    g.beginPath();
    c.points.forEach(([s, l], i) => {
      if (i % every && i !== c.points.length - 1) return;
      if (i === 0) g.moveTo(x(s), y(l));
      else g.lineTo(x(s), y(l));
    });
    g.stroke();
    const [ls, ll] = c.points[c.points.length - 1];
    g.fillStyle = c.colour;
    g.beginPath();
    g.arc(x(ls), y(ll), 3, 0, 2 * Math.PI);
    g.fill();
  }
  if (withRecall) drawRecall(g, curves, series, { x, L, R, T, B, w, h, muted, fg });
}

// The probe's recall: a right-hand axis 0–100% and one dashed line with points per pretraining curve.
function drawRecall(g, curves, series, { x, R, T, B, w, h, muted, fg }) {
  const yr = (p) => T + ((h - T - B) * (100 - p)) / 100;
  g.fillStyle = muted;
  g.textAlign = 'left';
  g.textBaseline = 'middle';
  for (const v of [0, 50, 100]) g.fillText(`${v}%`, w - R + 6, yr(v));
  g.save();
  g.translate(w - 6, T + (h - T - B) / 2);
  g.rotate(Math.PI / 2);
  g.textAlign = 'center';
  g.fillText('recall (probe)', 0, 0);
  g.restore();
  series.forEach((s, k) => {
    const pts = (s.recall || []).filter(([, p]) => Number.isFinite(p));
    if (!pts.length) return;
    g.strokeStyle = curves[k].colour;
    g.fillStyle = curves[k].colour;
    g.setLineDash([5, 3]);
    g.lineWidth = 1.4;
    g.beginPath();
    pts.forEach(([st, p], i) => (i ? g.lineTo(x(st), yr(p)) : g.moveTo(x(st), yr(p))));
    g.stroke();
    g.setLineDash([]);
    for (const [st, p] of pts) g.fillRect(x(st) - 2.5, yr(p) - 2.5, 5, 5);
  });
  g.fillStyle = fg;
}
