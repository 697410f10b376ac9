// Drawing helpers for the demos: HiDPI canvases of fixed aspect ratio (so nothing reflows while a
// control moves), a 2-D plane with points and arrows, bars, heatmaps and line plots.
// Colours: Okabe–Ito for categories, viridis for heatmaps — both readable with colour blindness.

export const OKABE = [
  '#E69F00',
  '#56B4E9',
  '#009E73',
  '#F0E442',
  '#0072B2',
  '#D55E00',
  '#CC79A7',
  '#000000',
];
// Categories whose meaning is fixed across demos.
export const C = {
  a: '#0072B2',
  b: '#D55E00',
  mid: '#009E73',
  out: '#000000',
  other: '#999999',
  cpu: '#CC79A7',
  q: '#E69F00',
};

// The page's one heatmap renderer and colour map (web/page/heatmap.js).
import { paintCells, viridis } from '../page/heatmap.js';
import { canvas2d, niceTicks } from '../page/ui.js';

export { viridis };

// A canvas that keeps its CSS aspect ratio and draws in CSS pixels on a devicePixelRatio backing store.
export function canvas(el, aspect) {
  const cv = document.createElement('canvas');
  cv.style.aspectRatio = String(aspect);
  cv.className = 'demo-canvas';
  el.appendChild(cv);
  return cv;
}

export function begin(cv) {
  const w = cv.clientWidth || 600;
  const h = cv.clientHeight || Math.round(w / 1.6);
  const ctx = canvas2d(cv, w, h);
  ctx.font = `${w < 420 ? 11 : 13}px system-ui, sans-serif`;
  ctx.textBaseline = 'middle';
  pending = { ctx, w, h, dots: [], labels: [], taken: [], planes: [] };
  return { ctx, w, h };
}

// Point labels are placed after the whole picture is drawn (placeLabels, called by demos.js), each
// beside its point where it covers no other point and no other label, inside its point's plane
// (inside the canvas where no place around the point fits the plane): six places around the
// point, then the same six a little further out; where every one is taken, the one it overlaps
// least.
let pending = null;

export function placeLabels() {
  if (!pending) return null;
  const { ctx, dots, labels, w: cw, h: ch, taken, planes } = pending;
  pending = null;
  const boxes = [...taken];
  const overlap = (b, x, y, w, h) =>
    Math.max(0, Math.min(b.x + b.w, x + w) - Math.max(b.x, x)) *
    Math.max(0, Math.min(b.y + b.h, y + h) - Math.max(b.y, y));
  const covered = (b) =>
    boxes.reduce((a, o) => a + overlap(b, o.x, o.y, o.w, o.h), 0) +
    dots.reduce((a, d) => a + overlap(b, d.x - d.r, d.y - d.r, 2 * d.r, 2 * d.r), 0);
  const crowded = []; // labels that could not be placed clear of the others (for the tests)
  const strays = []; // labels drawn outside their point's plane (for the tests)
  const within = (c, b) =>
    c.x >= b.x && c.y >= b.y && c.x + c.w <= b.x + b.w && c.y + c.h <= b.y + b.h;
  const canvas = { x: 0, y: 0, w: cw, h: ch };
  for (const l of labels) {
    const w = ctx.measureText(l.text).width,
      h = 12;
    const around = (r) => [
      [r + 3, -r - h / 2],
      [r + 3, r - h / 2],
      [-r - 3 - w, -r - h / 2],
      [-r - 3 - w, r - h / 2],
      [-w / 2, -r - h - 3],
      [-w / 2, r + 3],
    ];
    const at = [...around(l.r), ...around(l.r + 10)].map(([dx, dy]) => ({
      x: l.x + dx,
      y: l.y + dy,
      w,
      h,
    }));
    const home = planes.find(
      (b) => l.x >= b.x && l.x <= b.x + b.w && l.y >= b.y && l.y <= b.y + b.h,
    );
    const inPlane = home ? at.filter((c) => within(c, home)) : [];
    const fits = inPlane.length ? inPlane : at.filter((c) => within(c, canvas));
    const b =
      fits.find((c) => covered(c) === 0) ||
      fits.reduce((best, c) => (best && covered(best) <= covered(c) ? best : c), null) ||
      at[0];
    if (covered(b) > 0) crowded.push(l.text);
    if (home && !within(b, home)) strays.push(l.text);
    boxes.push(b);
    ctx.fillStyle = l.color || '#1d232b';
    ctx.textAlign = 'left';
    ctx.textBaseline = 'middle';
    ctx.fillText(l.text, b.x, b.y + h / 2);
  }
  return { labels: labels.length, crowded, strays };
}

// A label for the point p (drawn `radius` pixels wide), placed with the others by placeLabels.
export function label(ctx, p, text, radius = 6, color = '#1d232b') {
  if (pending && pending.ctx === ctx)
    pending.labels.push({ text, x: p[0], y: p[1], r: radius, color });
  else {
    ctx.fillStyle = color;
    ctx.textAlign = 'left';
    ctx.fillText(text, p[0] + radius + 3, p[1] - radius);
  }
}

// A dashed ring round the point p (the one the arrow keys move); no other label is placed under it.
export function ring(ctx, p, radius = 12) {
  ctx.save();
  ctx.setLineDash([3, 3]);
  ctx.strokeStyle = '#1d232b';
  ctx.lineWidth = 1.5;
  ctx.beginPath();
  ctx.arc(p[0], p[1], radius, 0, 2 * Math.PI);
  ctx.stroke();
  ctx.restore();
  if (!pending || pending.ctx !== ctx) return;
  pending.dots.push({ x: p[0], y: p[1], r: radius + 1 });
  // The ringed point's own label goes outside the ring.
  for (const l of pending.labels)
    if (Math.hypot(l.x - p[0], l.y - p[1]) < 1) l.r = Math.max(l.r, radius + 1);
}

// A title that fits `max` pixels: whole, else without its parenthesis, else cut with an ellipsis.
export function fitText(ctx, text, max) {
  if (ctx.measureText(text).width <= max) return text;
  const short = text.replace(/\s*\([^)]*\)\s*/g, ' ').trim();
  if (ctx.measureText(short).width <= max) return short;
  let t = short;
  while (t.length > 1 && ctx.measureText(`${t}…`).width > max) t = t.slice(0, -1);
  return `${t}…`;
}

// A sentence broken into lines of at most `max` pixels (at spaces), for text drawn in a canvas that
// can be as narrow as a phone.
export function wrapLines(ctx, text, max) {
  const out = [];
  let line = '';
  for (const word of text.split(' ')) {
    const next = line ? `${line} ${word}` : word;
    if (line && ctx.measureText(next).width > max) {
      out.push(line);
      line = word;
    } else line = next;
  }
  if (line) out.push(line);
  return out;
}

// A square data window [-r, r]² mapped into the box (x, y, size).
export function plane(ctx, box, r, title) {
  const { x, y, s } = box;
  const map = (p) => [x + ((p[0] + r) / (2 * r)) * s, y + ((r - p[1]) / (2 * r)) * s];
  const unmap = (px, py) => [((px - x) / s) * 2 * r - r, r - ((py - y) / s) * 2 * r];
  ctx.strokeStyle = '#d8dde3';
  ctx.lineWidth = 1;
  ctx.strokeRect(x, y, s, s);
  if (pending && pending.ctx === ctx) pending.planes.push({ x, y, w: s, h: s });
  ctx.beginPath();
  const [ox, oy] = map([0, 0]);
  ctx.moveTo(x, oy);
  ctx.lineTo(x + s, oy);
  ctx.moveTo(ox, y);
  ctx.lineTo(ox, y + s);
  ctx.stroke();
  if (title) {
    ctx.fillStyle = '#5b6673';
    ctx.textAlign = 'left';
    ctx.fillText(title, x + 4, y + 10);
    // Point labels keep off the title.
    if (pending && pending.ctx === ctx)
      pending.taken.push({ x: x + 4, y: y + 4, w: ctx.measureText(title).width, h: 12 });
  }
  return { map, unmap, r, box };
}

export function dot(ctx, p, color, text, radius = 6, hollow = false) {
  ctx.beginPath();
  ctx.arc(p[0], p[1], radius, 0, 2 * Math.PI);
  if (hollow) {
    ctx.lineWidth = 2.5;
    ctx.strokeStyle = color;
    ctx.stroke();
  } else {
    ctx.fillStyle = color;
    ctx.fill();
    ctx.lineWidth = 1;
    ctx.strokeStyle = '#fff';
    ctx.stroke();
  }
  if (pending && pending.ctx === ctx) pending.dots.push({ x: p[0], y: p[1], r: radius });
  if (text) label(ctx, p, text, radius);
}

// A cross marker (distinguishable by shape, not only colour).
export function cross(ctx, p, color, size = 6) {
  ctx.strokeStyle = color;
  ctx.lineWidth = 2.5;
  ctx.beginPath();
  ctx.moveTo(p[0] - size, p[1] - size);
  ctx.lineTo(p[0] + size, p[1] + size);
  ctx.moveTo(p[0] - size, p[1] + size);
  ctx.lineTo(p[0] + size, p[1] - size);
  ctx.stroke();
}

export function arrow(ctx, a, b, color, width = 2) {
  const dx = b[0] - a[0],
    dy = b[1] - a[1];
  const len = Math.hypot(dx, dy);
  if (len < 1) return;
  const ux = dx / len,
    uy = dy / len;
  ctx.strokeStyle = color;
  ctx.fillStyle = color;
  ctx.lineWidth = width;
  ctx.beginPath();
  ctx.moveTo(a[0], a[1]);
  ctx.lineTo(b[0] - ux * 8, b[1] - uy * 8);
  ctx.stroke();
  ctx.beginPath();
  ctx.moveTo(b[0], b[1]);
  ctx.lineTo(b[0] - ux * 10 - uy * 5, b[1] - uy * 10 + ux * 5);
  ctx.lineTo(b[0] - ux * 10 + uy * 5, b[1] - uy * 10 - ux * 5);
  ctx.closePath();
  ctx.fill();
}

// Vertical bars of values in [lo, hi] in the box; colors per bar (or one); labels under the bars.
export function bars(
  ctx,
  box,
  values,
  { lo = 0, hi = 1, colors = C.a, labels = [], title = '', ref = null, marks = null } = {},
) {
  const { x, y, w, h } = box;
  const n = values.length;
  const top = y + 16,
    base = y + h - 16;
  const yOf = (v) => base - ((Math.min(hi, Math.max(lo, v)) - lo) / (hi - lo || 1)) * (base - top);
  ctx.strokeStyle = '#d8dde3';
  ctx.lineWidth = 1;
  ctx.beginPath();
  ctx.moveTo(x, yOf(0));
  ctx.lineTo(x + w, yOf(0));
  ctx.stroke();
  const bw = w / Math.max(1, n);
  values.forEach((v, i) => {
    ctx.fillStyle = Array.isArray(colors) ? colors[i % colors.length] : colors;
    const y0 = yOf(0),
      y1 = yOf(v);
    ctx.fillRect(
      x + i * bw + bw * 0.15,
      Math.min(y0, y1),
      bw * 0.7,
      Math.max(1, Math.abs(y1 - y0)),
    );
    if (marks && marks[i] !== undefined) {
      ctx.strokeStyle = '#000';
      ctx.lineWidth = 2;
      ctx.beginPath();
      ctx.moveTo(x + i * bw + bw * 0.05, yOf(marks[i]));
      ctx.lineTo(x + i * bw + bw * 0.95, yOf(marks[i]));
      ctx.stroke();
    }
  });
  // Labels under the bars: the marked ones (* or ★) first, then every step-th one (the step the
  // widest label needs, so the shown ones are evenly spaced: 1 3 5 … 15, not 1 … 9 11 13 15) that
  // keeps clear of those already placed, so none runs into another.
  const placed = [];
  ctx.fillStyle = '#5b6673';
  ctx.textAlign = 'center';
  const widest = Math.max(
    0,
    ...labels.filter((l) => l !== undefined).map((l) => ctx.measureText(String(l)).width),
  );
  const step = Math.max(1, Math.ceil((widest + 4) / bw));
  const order = labels
    .map((l, i) => i)
    .filter((i) => labels[i] !== undefined)
    .filter((i) => /\*|★/.test(labels[i]) || i % step === 0)
    .sort((a, b) => Number(/\*|★/.test(labels[b])) - Number(/\*|★/.test(labels[a])) || a - b);
  for (const i of order) {
    const t = String(labels[i]),
      cx = x + (i + 0.5) * bw,
      half = ctx.measureText(t).width / 2 + 2;
    if (placed.some(([a, b]) => cx - half < b && a < cx + half)) continue;
    placed.push([cx - half, cx + half]);
    ctx.fillText(t, cx, base + 9);
  }
  if (ref !== null) {
    ctx.setLineDash([5, 4]);
    ctx.strokeStyle = '#1d232b';
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(x, yOf(ref));
    ctx.lineTo(x + w, yOf(ref));
    ctx.stroke();
    ctx.setLineDash([]);
  }
  if (title) {
    ctx.fillStyle = '#5b6673';
    ctx.textAlign = 'left';
    ctx.fillText(fitText(ctx, title, w), x, y + 6);
  }
}

// A (rows × cols) heatmap of values in [lo, hi] (the page's renderer, viridis), with its title,
// optional row/column labels, a hatched upper triangle and the numbers in large cells.
export function heatmap(
  ctx,
  box,
  m,
  rows,
  cols,
  {
    lo = 0,
    hi = 1,
    title = '',
    rowLabels = null,
    colLabels = null,
    hatchUpper = false,
    numbers = false,
  } = {},
) {
  const { x, y, w, h } = box;
  const lab = rowLabels ? 16 : 0;
  const top = y + (title ? 16 : 0) + (colLabels ? 14 : 0);
  const cs = Math.min((w - lab) / cols, (h - (top - y)) / rows);
  const x0 = x + lab;
  const scale = (v) => (v - lo) / (hi - lo || 1);
  paintCells(ctx, m, cols, [0, rows], {
    x: x0,
    y: top,
    cell: cs,
    colour: (v) => viridis(scale(v)),
    overlap: 0.5,
  });
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      const v = m[i * cols + j];
      if (hatchUpper && j > i) {
        ctx.strokeStyle = 'rgba(255,255,255,0.55)';
        ctx.lineWidth = 1;
        ctx.beginPath();
        ctx.moveTo(x0 + j * cs, top + (i + 1) * cs);
        ctx.lineTo(x0 + (j + 1) * cs, top + i * cs);
        ctx.stroke();
      }
      if (numbers && cs > 26) {
        ctx.fillStyle = scale(v) > 0.6 ? '#000' : '#fff';
        ctx.textAlign = 'center';
        ctx.fillText(
          Math.abs(v) < 0.005 ? '0' : v.toFixed(2),
          x0 + (j + 0.5) * cs,
          top + (i + 0.5) * cs,
        );
      }
    }
  }
  ctx.strokeStyle = '#1d232b';
  ctx.lineWidth = 1;
  ctx.strokeRect(x0, top, cols * cs, rows * cs);
  ctx.fillStyle = '#5b6673';
  if (title) {
    ctx.textAlign = 'left';
    ctx.fillText(fitText(ctx, title, w), x, y + 7);
  }
  if (rowLabels && cs >= 10) {
    ctx.textAlign = 'right';
    rowLabels.forEach((l, i) => ctx.fillText(l, x0 - 3, top + (i + 0.5) * cs));
  }
  if (colLabels) {
    // Every step-th label where the cells are narrower than the labels (T = 16 ran "101112…" together);
    // a marked label ("7*") is always shown and its neighbours within the step give way.
    ctx.textAlign = 'center';
    const widest = Math.max(...colLabels.map((l) => ctx.measureText(l).width));
    const step = Math.max(1, Math.ceil((widest + 3) / cs));
    const marked = colLabels.map((l, j) => (/\*$/.test(l) ? j : -1)).filter((j) => j >= 0);
    colLabels.forEach((l, j) => {
      const isMarked = marked.includes(j);
      if (!isMarked && (j % step !== 0 || marked.some((m) => Math.abs(m - j) < step))) return;
      ctx.fillText(l, x0 + (j + 0.5) * cs, top - 7);
    });
  }
  return { cs, x0, top };
}

// Line plot of several series over xs; log10 y when `log`. series: [{ys, color, dash, label}].
// Ticks are round numbers (1, 2 or 5 × 10^k; whole decades on a log axis) placed where their values
// are; the series' labels form a legend above the plot, never over the curves.
export function lines(
  ctx,
  box,
  xs,
  series,
  { log = false, lo = null, hi = null, title = '', xlabel = '', marker = null, hlines = [] } = {},
) {
  const { x, y, w, h } = box;
  const legend = series.filter((s) => s.label);
  // The legend's entries in rows that fit the width (one row cut "reference (f64)" at the edge).
  const rowsOf = [];
  let rx = 0;
  for (const s of legend) {
    const ew = 34 + ctx.measureText(s.label).width;
    if (rx > 0 && rx + ew > w - 44) {
      rowsOf.push([]);
      rx = 0;
    }
    if (!rowsOf.length) rowsOf.push([]);
    rowsOf[rowsOf.length - 1].push(s);
    rx += ew;
  }
  const L = 44,
    B = 28,
    T = legend.length ? 18 + 14 * rowsOf.length : 18;
  const tr = (v) => (log ? Math.log10(Math.max(v, 1e-300)) : v);
  const all = series.flatMap((s) => s.ys.map(tr)).filter(Number.isFinite);
  let ymin = lo !== null ? lo : Math.min(...all),
    ymax = hi !== null ? hi : Math.max(...all);
  if (!(ymax > ymin)) {
    ymax = ymin + 1;
  }
  const xmin = xs[0],
    xmax = xs[xs.length - 1];
  const px = (v) => x + L + ((v - xmin) / (xmax - xmin || 1)) * (w - L - 8);
  const py = (v) =>
    y + T + (1 - (Math.min(ymax, Math.max(ymin, tr(v))) - ymin) / (ymax - ymin)) * (h - T - B);
  const pyT = (t) => y + T + (1 - (t - ymin) / (ymax - ymin)) * (h - T - B);
  ctx.strokeStyle = '#d8dde3';
  ctx.lineWidth = 1;
  ctx.strokeRect(x + L, y + T, w - L - 8, h - T - B);
  ctx.fillStyle = '#5b6673';
  ctx.textAlign = 'right';
  for (const t of yTicks(ymin, ymax, log))
    ctx.fillText(log ? decade(t) : tickText(t), x + L - 4, pyT(t));
  const xt = niceTicks(xmin, xmax, w < 420 ? 3 : 5);
  xt.forEach((v, k) => {
    const at = px(v);
    ctx.textAlign = at > x + w - 24 ? 'right' : k === 0 && at < x + L + 8 ? 'left' : 'center';
    ctx.fillText(tickText(v), at, y + h - B + 10);
  });
  ctx.textAlign = 'center';
  if (xlabel) ctx.fillText(xlabel, x + L + (w - L) / 2, y + h - 6);
  if (title) {
    ctx.textAlign = 'left';
    ctx.fillText(fitText(ctx, title, w - L), x + L, y + 7);
  }
  rowsOf.forEach((row, r) => {
    let lx = x + L;
    const ly = y + 21 + 14 * r;
    for (const s of row) {
      ctx.strokeStyle = s.color;
      ctx.lineWidth = 2;
      ctx.setLineDash(s.dash || []);
      ctx.beginPath();
      ctx.moveTo(lx, ly);
      ctx.lineTo(lx + 18, ly);
      ctx.stroke();
      ctx.setLineDash([]);
      ctx.fillStyle = s.color;
      ctx.textAlign = 'left';
      ctx.fillText(fitText(ctx, s.label, x + w - lx - 22), lx + 22, ly);
      lx += 34 + ctx.measureText(s.label).width;
    }
  });
  for (const hl of hlines) {
    ctx.setLineDash([5, 4]);
    ctx.strokeStyle = hl.color || '#1d232b';
    ctx.beginPath();
    ctx.moveTo(x + L, py(hl.y));
    ctx.lineTo(x + w - 8, py(hl.y));
    ctx.stroke();
    ctx.setLineDash([]);
    if (hl.label) {
      ctx.fillStyle = hl.color || '#1d232b';
      ctx.textAlign = 'right';
      ctx.fillText(hl.label, x + w - 10, py(hl.y) - 8);
    }
  }
  series.forEach((s) => {
    ctx.strokeStyle = s.color;
    ctx.lineWidth = 2;
    ctx.setLineDash(s.dash || []);
    ctx.beginPath();
    let started = false;
    s.ys.forEach((v, i) => {
      if (!Number.isFinite(tr(v))) return;
      if (!started) {
        ctx.moveTo(px(xs[i]), py(v));
        started = true;
      } else ctx.lineTo(px(xs[i]), py(v));
    });
    ctx.stroke();
    ctx.setLineDash([]);
  });
  if (marker !== null) {
    ctx.strokeStyle = '#1d232b';
    ctx.setLineDash([2, 3]);
    ctx.beginPath();
    ctx.moveTo(px(marker), y + T);
    ctx.lineTo(px(marker), y + h - B);
    ctx.stroke();
    ctx.setLineDash([]);
  }
}

// Round tick values: 1, 2 or 5 × 10^k on a linear axis; whole decades (every one, or every 2nd, 3rd,
// ... so that at most 6 show) on a log axis, whose values are then exponents.
export function yTicks(lo, hi, log) {
  if (!log) return niceTicks(lo, hi, 4);
  const span = Math.floor(hi) - Math.ceil(lo);
  const step = Math.max(1, Math.ceil(span / 5));
  const out = [];
  for (let e = Math.floor(hi); e >= Math.ceil(lo); e -= step) out.push(e);
  return out.reverse();
}

const SUP = {
  '-': '⁻',
  0: '⁰',
  1: '¹',
  2: '²',
  3: '³',
  4: '⁴',
  5: '⁵',
  6: '⁶',
  7: '⁷',
  8: '⁸',
  9: '⁹',
};
const decade = (e) =>
  e === 0 ? '1' : e === 1 ? '10' : `10${String(e).replace(/./g, (c) => SUP[c])}`;
const tickText = (v) => String(+v.toPrecision(6));

// A table of numbers: a header row, then rows whose first cell names the quantity. An empty header
// cell still says what its column holds, to screen readers.
export const table = (head, rows, cls = '') =>
  `<table class="demo-table${cls ? ` ${cls}` : ''}"><thead><tr>` +
  `${head.map((h) => `<th>${h === '' ? '<span class="sr-only">quantity</span>' : h}</th>`).join('')}` +
  `</tr></thead><tbody>` +
  `${rows.map((r) => `<tr>${r.map((c, i) => `<td${i ? ' class="num"' : ''}>${c}</td>`).join('')}</tr>`).join('')}` +
  `</tbody></table>`;

export const fmt = (v, d = 4) =>
  v === undefined || v === null || Number.isNaN(v)
    ? '—'
    : Math.abs(v) !== 0 && (Math.abs(v) < 1e-3 || Math.abs(v) >= 1e5)
      ? v.toExponential(2)
      : v.toFixed(d);
