// Attention heatmaps for the Ask panel. map: Float32Array-like of T×T probabilities, row = the
// position that attends (query), column = the position attended to (key); only the causal lower
// triangle is non-zero. Characters label both axes; ⁇ marks the end of the question and of the answer.
const show = (c) => (c === ' ' ? '␣' : c);

function colour(p) {
  // white → deep blue, with a square root so small weights stay visible
  const t = Math.sqrt(Math.min(1, Math.max(0, p)));
  const r = Math.round(255 - t * (255 - 23));
  const g = Math.round(255 - t * (255 - 63));
  const b = Math.round(255 - t * (255 - 160));
  return `rgb(${r},${g},${b})`;
}

// A large map with the characters on both axes, fitting `width` CSS pixels.
export function drawMap(canvas, map, tokens, promptLen, width) {
  const T = tokens.length;
  const label = 14;
  // Cells never shrink below 8 px, so the characters stay readable; a long answer makes the map
  // wider than its column, and the column scrolls sideways (.map-scroll).
  const cell = Math.max(8, Math.min(16, Math.floor((width - label - 4) / T)));
  const size = label + cell * T + 2;
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(size * dpr);
  canvas.height = Math.round(size * dpr);
  canvas.style.width = `${size}px`;
  canvas.style.height = `${size}px`;
  const g = canvas.getContext('2d');
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.fillStyle = '#fff';
  g.fillRect(0, 0, size, size);
  for (let i = 0; i < T; i++) {
    for (let j = 0; j <= i; j++) {
      g.fillStyle = colour(map[i * T + j]);
      g.fillRect(label + j * cell, label + i * cell, cell, cell);
    }
  }
  // separator after the prompt
  g.strokeStyle = '#c62828';
  g.lineWidth = 1;
  if (promptLen < T) {
    const p = label + promptLen * cell;
    g.beginPath(); g.moveTo(p, label); g.lineTo(p, size); g.moveTo(label, p); g.lineTo(size, p); g.stroke();
  }
  if (cell >= 7) {
    g.fillStyle = '#1d232b';
    g.font = `${Math.min(12, cell)}px ui-monospace, Menlo, Consolas, monospace`;
    g.textAlign = 'center';
    g.textBaseline = 'middle';
    for (let i = 0; i < T; i++) {
      const c = show(tokens[i]);
      g.fillText(c, label + i * cell + cell / 2, label / 2); // keys along the top
      g.fillText(c, label / 2, label + i * cell + cell / 2); // queries down the side
    }
  }
}

// A small map without labels (for picking a layer/head).
export function drawThumb(canvas, map, T, px) {
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(px * dpr);
  canvas.height = Math.round(px * dpr);
  canvas.style.width = `${px}px`;
  canvas.style.height = `${px}px`;
  const g = canvas.getContext('2d');
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.fillStyle = '#fff';
  g.fillRect(0, 0, px, px);
  const c = px / T;
  for (let i = 0; i < T; i++) {
    for (let j = 0; j <= i; j++) {
      g.fillStyle = colour(map[i * T + j]);
      g.fillRect(j * c, i * c, Math.ceil(c), Math.ceil(c));
    }
  }
}
