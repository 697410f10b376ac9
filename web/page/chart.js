// The live loss chart: one canvas, loss against step, redrawn from the whole history each time (at
// most a few thousand points, thinned to the canvas width). Colours come from CSS custom properties.
export function drawLoss(canvas, points, totalSteps) {
  const dpr = window.devicePixelRatio || 1;
  const w = canvas.clientWidth || 800, h = canvas.clientHeight || 220;
  if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
  }
  const g = canvas.getContext('2d');
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, w, h);
  const css = getComputedStyle(canvas);
  const fg = css.getPropertyValue('--fg').trim() || '#1d232b';
  const muted = css.getPropertyValue('--muted').trim() || '#5b6673';
  const line = css.getPropertyValue('--line').trim() || '#d8dde3';
  const accent = css.getPropertyValue('--accent').trim() || '#2f5fd0';
  const R = 16, T = 10, B = 26;
  let L = 52;
  g.font = '11px system-ui, sans-serif';
  g.fillStyle = muted;
  if (!points.length) {
    g.fillText('The loss appears here while training.', L, h / 2);
    return;
  }
  const maxStep = Math.max(totalSteps || 0, points[points.length - 1][0], 1);
  // A diverging run can report a NaN or an infinite loss: it is left out of the scale and the curve.
  points = points.filter(([, l]) => Number.isFinite(l));
  if (!points.length) return;
  let lo = Infinity, hi = -Infinity;
  for (const [, l] of points) { lo = Math.min(lo, l); hi = Math.max(hi, l); }
  if (hi - lo < 1e-6) { hi += 0.5; lo = Math.max(0, lo - 0.5); }
  const pad = (hi - lo) * 0.05;
  lo = Math.max(0, lo - pad); hi += pad;
  const label = (v) => (Math.abs(v) >= 1000 ? v.toExponential(1) : v.toFixed(2));
  // room for the widest tick label and the rotated axis title
  L = Math.max(L, 28 + g.measureText(label(hi)).width);
  const x = (s) => L + ((w - L - R) * s) / maxStep;
  const y = (l) => T + ((h - T - B) * (hi - l)) / (hi - lo);
  // grid and axes
  g.strokeStyle = line;
  g.lineWidth = 1;
  g.textAlign = 'right';
  g.textBaseline = 'middle';
  for (let i = 0; i <= 4; i++) {
    const v = lo + ((hi - lo) * i) / 4;
    g.beginPath(); g.moveTo(L, y(v)); g.lineTo(w - R, y(v)); g.stroke();
    g.fillText(label(v), L - 6, y(v));
  }
  g.textAlign = 'center';
  g.textBaseline = 'top';
  for (let i = 0; i <= 4; i++) {
    const s = Math.round((maxStep * i) / 4);
    g.fillText(String(s), x(s), h - B + 6);
  }
  g.textAlign = 'left';
  g.textAlign = 'center';
  g.fillText('step', L + ((w - L - R) * 3) / 8, h - B + 6);
  g.save();
  g.translate(10, T + (h - T - B) / 2);
  g.rotate(-Math.PI / 2);
  g.textAlign = 'center';
  g.fillText('loss', 0, 0);
  g.restore();
  // the curve, thinned to about one point per pixel
  const every = Math.max(1, Math.floor(points.length / (w - L - R)));
  g.strokeStyle = accent;
  g.lineWidth = 1.6;
  g.beginPath();
  points.forEach(([s, l], i) => {
    if (i % every && i !== points.length - 1) return;
    if (i === 0) g.moveTo(x(s), y(l)); else g.lineTo(x(s), y(l));
  });
  g.stroke();
  const [ls, ll] = points[points.length - 1];
  g.fillStyle = fg;
  g.beginPath(); g.arc(x(ls), y(ll), 3, 0, 2 * Math.PI); g.fill();
}
