// The page's one heatmap renderer (paintCells) with its one colour map (viridis: perceptually even
// and readable with colour blindness) and its legend, used by Ask's attention maps here and by the
// demos' heatmaps (web/demos/draw.js).
// An attention map is a T×T array of probabilities, row = the position that reads (the query),
// column = the position it reads (the key); only the causal lower triangle can be non-zero.

// viridis at 9 stops, interpolated; t in [0, 1].
const VIRIDIS = [
  [68, 1, 84],
  [71, 44, 122],
  [59, 81, 139],
  [44, 113, 142],
  [33, 144, 141],
  [39, 173, 129],
  [92, 200, 99],
  [170, 220, 50],
  [253, 231, 37],
];
export function viridis(t) {
  const x = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0)) * (VIRIDIS.length - 1);
  const i = Math.min(VIRIDIS.length - 2, Math.floor(x));
  const f = x - i;
  const c = VIRIDIS[i].map((v, k) => Math.round(v + f * (VIRIDIS[i + 1][k] - v)));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

// Attention weights are coloured on a square-root scale, so that small weights stay visible.
const weightColour = (p) => viridis(Math.sqrt(Math.min(1, Math.max(0, p))));
const MASKED = '#eceff3'; // the causal mask's upper triangle: no weight at all, not a zero weight
const show = (c) => (c === ' ' ? '␣' : c);

function hidpi(canvas, w, h) {
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(w * dpr);
  canvas.height = Math.round(h * dpr);
  canvas.style.width = `${w}px`;
  canvas.style.height = `${h}px`;
  const g = canvas.getContext('2d');
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  return g;
}

// The one heatmap renderer: rows [r0, r1) × cols of the row-major matrix m as cells of `cell` px from
// (x, y) (row r0 at the top), each coloured by colour(value); a masked(i, j) cell gets MASKED
// instead. `overlap` px widens every cell so that neighbours leave no hairline seam.
export function paintCells(
  g,
  m,
  cols,
  [r0, r1],
  { x = 0, y = 0, cell, colour, masked = null, overlap = 0 },
) {
  for (let i = r0; i < r1; i++) {
    for (let j = 0; j < cols; j++) {
      g.fillStyle = masked && masked(i, j) ? MASKED : colour(m[i * cols + j]);
      g.fillRect(x + j * cell, y + (i - r0) * cell, cell + overlap, cell + overlap);
    }
  }
}

// The causal mask: a query row reads no later column.
const causal = (i, j) => j > i;

// The colour scale: a bar from 0 to 1 with its ticks, on the square-root scale of Ask's maps, or
// linear (the demos' heatmaps, which colour weights in [0, 1] directly).
export function drawLegend(canvas, width = 240, { linear = false } = {}) {
  const h = 34,
    x0 = 6,
    bw = width - 12;
  const g = hidpi(canvas, width, h);
  g.clearRect(0, 0, width, h);
  const pos = (v) => (linear ? v : Math.sqrt(v));
  for (let i = 0; i < bw; i++) {
    const t = i / (bw - 1);
    g.fillStyle = linear ? viridis(t) : weightColour(t * t);
    g.fillRect(x0 + i, 2, 1.5, 12);
  }
  g.strokeStyle = '#5b6673';
  g.strokeRect(x0 + 0.5, 2.5, bw - 1, 11);
  g.fillStyle = '#5b6673';
  g.font = '11px system-ui, sans-serif';
  g.textBaseline = 'top';
  for (const v of linear ? [0, 0.25, 0.5, 0.75, 1] : [0, 0.05, 0.25, 0.5, 1]) {
    const x = x0 + pos(v) * (bw - 1);
    g.fillRect(x, 14, 1, 4);
    g.textAlign = v === 0 ? 'left' : v === 1 ? 'right' : 'center';
    g.fillText(String(v), x, 19);
  }
}

// A large map with the characters on both axes, `rows` = [first, last) query rows to show (the
// answer's rows of a long question, say). Cells never shrink below MIN_CELL px, nor the characters
// on the axes (drawn at the cell's size up to 13 px), so they stay legible (the readout names each
// cell in full); a wider map scrolls sideways in its column (.map-scroll). Returns the geometry for
// cellAt.
export const MIN_CELL = 9;
export function drawMap(canvas, map, tokens, promptLen, width, rows = [0, tokens.length]) {
  const T = tokens.length;
  const [r0, r1] = rows;
  const label = 16;
  // The whole question across the width where MIN_CELL px cells allow: two maps side by side then
  // show the same span at the same scale (at 12 px one scrolled and the other did not).
  const cell = Math.max(MIN_CELL, Math.min(20, Math.floor((width - label - 4) / T)));
  const w = label + cell * T + 2,
    h = label + cell * (r1 - r0) + 2;
  const g = hidpi(canvas, w, h);
  g.fillStyle = '#fff';
  g.fillRect(0, 0, w, h);
  paintCells(g, map, T, rows, { x: label, y: label, cell, colour: weightColour, masked: causal });
  // where the question ends (after its ⁇)
  g.strokeStyle = '#d55e00';
  g.lineWidth = 2;
  if (promptLen < T) {
    const p = label + promptLen * cell;
    g.beginPath();
    g.moveTo(p, label);
    g.lineTo(p, h);
    if (promptLen > r0 && promptLen < r1) {
      const q = label + (promptLen - r0) * cell;
      g.moveTo(label, q);
      g.lineTo(w, q);
    }
    g.stroke();
  }
  g.fillStyle = '#1d232b';
  g.font = `${Math.min(13, cell)}px ui-monospace, Menlo, Consolas, monospace`;
  g.textAlign = 'center';
  g.textBaseline = 'middle';
  for (let j = 0; j < T; j++) g.fillText(show(tokens[j]), label + j * cell + cell / 2, label / 2); // keys along the top
  for (let i = r0; i < r1; i++)
    g.fillText(show(tokens[i]), label / 2, label + (i - r0) * cell + cell / 2); // queries down the side
  return { label, cell, r0, r1, T };
}

// The cell under a mouse position on a map drawn by drawMap: {i, j} (query row, key column) or null.
export function cellAt(geom, canvas, ev) {
  const r = canvas.getBoundingClientRect();
  const x = ev.clientX - r.left - geom.label,
    y = ev.clientY - r.top - geom.label;
  if (x < 0 || y < 0) return null;
  const j = Math.floor(x / geom.cell),
    i = geom.r0 + Math.floor(y / geom.cell);
  return j < geom.T && i < geom.r1 ? { i, j } : null;
}

// A focus ring around cell {i, j} of a map drawn by drawMap (the keyboard's cursor).
export function markCell(canvas, geom, { i, j }) {
  if (i < geom.r0 || i >= geom.r1 || j >= geom.T) return;
  const g = canvas.getContext('2d');
  g.strokeStyle = '#000';
  g.lineWidth = 2;
  g.strokeRect(
    geom.label + j * geom.cell + 1,
    geom.label + (i - geom.r0) * geom.cell + 1,
    geom.cell - 2,
    geom.cell - 2,
  );
  g.strokeStyle = '#fff';
  g.lineWidth = 1;
  g.strokeRect(
    geom.label + j * geom.cell + 2.5,
    geom.label + (i - geom.r0) * geom.cell + 2.5,
    geom.cell - 5,
    geom.cell - 5,
  );
}

// A small map without labels (for picking a layer/head).
export function drawThumb(canvas, map, T, px) {
  const g = hidpi(canvas, px, px);
  const c = px / T;
  paintCells(g, map, T, [0, T], {
    cell: c,
    colour: weightColour,
    masked: causal,
    overlap: Math.ceil(c) - c,
  });
}
