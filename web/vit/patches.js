// The patch grid's arithmetic (no drawing, no engine): which patch a click or an arrow key picks,
// and how alike the position embeddings of neighbouring patches are. Patches are numbered in
// reading order, patch q at row ⌊q / g⌋ and column q mod g of a g × g grid; -1 stands for [CLS].

// The patch under a click at (x, y) in client pixels on an element with bounding box `rect`.
export function patchAt(x, y, rect, g) {
  const col = Math.floor(((x - rect.left) / rect.width) * g);
  const row = Math.floor(((y - rect.top) / rect.height) * g);
  return Math.max(0, Math.min(g - 1, row)) * g + Math.max(0, Math.min(g - 1, col));
}

const MOVES = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };

// The query after a key: an arrow moves one patch (from [CLS] the first arrow picks the top-left
// patch; the edges hold), Escape goes back to [CLS]; null for any other key.
export function movePatch(query, key, g) {
  if (key === 'Escape') return -1;
  const m = MOVES[key];
  if (!m) return null;
  if (query < 0) return 0;
  const row = Math.max(0, Math.min(g - 1, Math.floor(query / g) + m[0]));
  const col = Math.max(0, Math.min(g - 1, (query % g) + m[1]));
  return row * g + col;
}

// Mean cosine similarity of the position embeddings (`sim`, g² × g², row-major) between
// neighbouring patches and the rest, and within a row and within a column.
export function positionStats(sim, g) {
  const groups = { near: [], far: [], row: [], col: [] };
  for (let i = 0; i < g * g; i++)
    for (let j = 0; j < g * g; j++) {
      if (i === j) continue;
      const [yi, xi, yj, xj] = [Math.floor(i / g), i % g, Math.floor(j / g), j % g];
      const v = sim[i * g * g + j];
      (Math.abs(yi - yj) + Math.abs(xi - xj) === 1 ? groups.near : groups.far).push(v);
      if (yi === yj) groups.row.push(v);
      if (xi === xj) groups.col.push(v);
    }
  const mean = (l) => Number((l.length ? l.reduce((a, b) => a + b, 0) / l.length : 0).toFixed(2));
  return Object.fromEntries(Object.entries(groups).map(([k, l]) => [k, mean(l)]));
}
