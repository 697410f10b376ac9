// The ViT card's pictures, all on canvases: the input with its patch grid, an attention map overlaid
// on the input, the position-embedding similarities, the loss/accuracy chart and the confusion matrix.
const S = 28;

// Draw a 28×28 image (values in [0, 1]) in grey over the whole canvas.
export function drawImage(canvas, pixels) {
  const ctx = canvas.getContext('2d');
  const cell = canvas.width / S;
  for (let y = 0; y < S; y++)
    for (let x = 0; x < S; x++) {
      const v = Math.round(255 * (pixels ? pixels[y * S + x] : 0));
      ctx.fillStyle = `rgb(${v},${v},${v})`;
      ctx.fillRect(x * cell, y * cell, Math.ceil(cell), Math.ceil(cell));
    }
}

// The patch grid over the image, each patch numbered in reading order (the order of the tokens).
export function drawPatches(canvas, pixels, grid) {
  drawImage(canvas, pixels);
  const ctx = canvas.getContext('2d');
  const w = canvas.width / grid;
  ctx.strokeStyle = '#f0b45c';
  ctx.lineWidth = 1.5;
  ctx.fillStyle = '#f0b45c';
  ctx.font = `${Math.max(9, Math.round(w / 4))}px system-ui, sans-serif`;
  for (let i = 0; i < grid; i++)
    for (let j = 0; j < grid; j++) {
      ctx.strokeRect(j * w, i * w, w, w);
      ctx.fillText(String(i * grid + j + 1), j * w + 3, i * w + Math.max(10, w / 4));
    }
}

// `weights` (grid²) over the patches, scaled to their maximum, in red over the image; `mark` (a patch
// index or -1) is outlined.
export function drawOverlay(canvas, pixels, weights, grid, mark) {
  drawImage(canvas, pixels);
  const ctx = canvas.getContext('2d');
  const w = canvas.width / grid;
  const max = Math.max(...weights, 1e-12);
  for (let k = 0; k < grid * grid; k++) {
    const a = 0.75 * (weights[k] / max);
    ctx.fillStyle = `rgba(230, 60, 40, ${a.toFixed(3)})`;
    ctx.fillRect((k % grid) * w, Math.floor(k / grid) * w, w, w);
  }
  if (mark >= 0) {
    ctx.strokeStyle = '#2f9fd0';
    ctx.lineWidth = 3;
    ctx.strokeRect((mark % grid) * w + 1.5, Math.floor(mark / grid) * w + 1.5, w - 3, w - 3);
  }
}

// For each patch i, a small grid² map of its position embedding's cosine similarity with every patch
// (sim is N×N, N = grid²), placed where patch i is: learned positions that know the 2-D layout make
// each small map bright around its own place.
export function drawPositions(canvas, sim, grid) {
  const ctx = canvas.getContext('2d');
  const n = grid * grid;
  const big = canvas.width / grid;
  const small = (big - 4) / grid;
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  for (let i = 0; i < n; i++) {
    const ox = (i % grid) * big + 2;
    const oy = Math.floor(i / grid) * big + 2;
    for (let j = 0; j < n; j++) {
      const v = sim[i * n + j];
      // −1 blue … 0 white … +1 red.
      const r = v >= 0 ? 255 : Math.round(255 * (1 + v));
      const b = v <= 0 ? 255 : Math.round(255 * (1 - v));
      const g = Math.round(255 * (1 - Math.abs(v)));
      ctx.fillStyle = `rgb(${r},${g},${b})`;
      ctx.fillRect(
        ox + (j % grid) * small,
        oy + Math.floor(j / grid) * small,
        Math.ceil(small),
        Math.ceil(small),
      );
    }
  }
}

// Loss (left axis, log-free, from 0 to the first loss) and held-out accuracy (right axis, 0–100%).
export function drawChart(canvas, losses, accs, total) {
  const ctx = canvas.getContext('2d');
  const { width: w, height: h } = canvas;
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, w, h);
  ctx.strokeStyle = '#d8dde3';
  ctx.strokeRect(30, 10, w - 60, h - 30);
  const top = Math.max(2.5, ...losses.map((p) => p[1]));
  const x = (s) => 30 + ((w - 60) * s) / Math.max(total, 1);
  ctx.fillStyle = '#5b6673';
  ctx.font = '10px system-ui, sans-serif';
  ctx.fillText(top.toFixed(1), 2, 16);
  ctx.fillText('0', 18, h - 20);
  ctx.fillText('100%', w - 28, 16);
  ctx.fillText(`${total} steps`, w / 2 - 20, h - 6);
  const plot = (pts, y, color) => {
    ctx.strokeStyle = color;
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    pts.forEach(([s, v], i) => (i ? ctx.lineTo(x(s), y(v)) : ctx.moveTo(x(s), y(v))));
    ctx.stroke();
    ctx.fillStyle = color;
    for (const [s, v] of pts) ctx.fillRect(x(s) - 1.5, y(v) - 1.5, 3, 3);
  };
  plot(losses, (v) => 10 + (h - 30) * (1 - v / top), '#2f5fd0');
  plot(accs, (v) => 10 + (h - 30) * (1 - v), '#17803d');
}

// The confusion matrix as a table: rows true digit, columns predicted, the diagonal highlighted.
export function fillConfusion(table, confusion) {
  const k = confusion.length;
  let html =
    '<caption>rows: true digit · columns: predicted</caption><thead><tr><th><span ' +
    'class="sr-only">true digit, predicted digit</span></th>';
  for (let c = 0; c < k; c++) html += `<th>${c}</th>`;
  html += '</tr></thead><tbody>';
  const max = Math.max(1, ...confusion.flat());
  confusion.forEach((row, t) => {
    html += `<tr><th>${t}</th>`;
    row.forEach((v, p) => {
      const level = v === 0 ? 0 : Math.min(4, 1 + Math.floor((4 * v) / max));
      html += `<td class="${t === p ? 'diag' : 'off'} lvl${level}">${v}</td>`;
    });
    html += '</tr>';
  });
  table.innerHTML = `${html}</tbody>`;
}
