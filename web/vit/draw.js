// The drawing pad: the user draws with a mouse, pen or finger on a large canvas; `toImage()` turns the
// strokes into the model's 28×28 input the way the generated digits are framed (the ink's bounding box
// scaled so its longer side is 18 pixels, centred), white ink on black, values in [0, 1].
export const SIDE = 28;

export function makePad(canvas, onStroke) {
  const ctx = canvas.getContext('2d');
  let drawing = false;
  let last = null;
  let inked = false;
  const clear = () => {
    ctx.fillStyle = '#000';
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    inked = false;
  };
  const at = (e) => {
    const r = canvas.getBoundingClientRect();
    return [
      (e.clientX - r.left) * (canvas.width / r.width),
      (e.clientY - r.top) * (canvas.height / r.height),
    ];
  };
  const line = (a, b) => {
    ctx.strokeStyle = '#fff';
    ctx.lineCap = 'round';
    ctx.lineJoin = 'round';
    ctx.lineWidth = canvas.width / 9;
    ctx.beginPath();
    ctx.moveTo(a[0], a[1]);
    ctx.lineTo(b[0], b[1]);
    ctx.stroke();
    inked = true;
  };
  canvas.addEventListener('pointerdown', (e) => {
    drawing = true;
    last = at(e);
    line(last, last);
    canvas.setPointerCapture(e.pointerId);
  });
  canvas.addEventListener('pointermove', (e) => {
    if (!drawing) return;
    const p = at(e);
    line(last, p);
    last = p;
  });
  const end = () => {
    if (!drawing) return;
    drawing = false;
    onStroke();
  };
  canvas.addEventListener('pointerup', end);
  canvas.addEventListener('pointercancel', end);
  clear();

  // Show a 28×28 image (values in [0, 1]) on the pad, e.g. a held-out sample.
  const show = (pixels) => {
    const small = document.createElement('canvas');
    small.width = small.height = SIDE;
    const sctx = small.getContext('2d');
    const img = sctx.createImageData(SIDE, SIDE);
    for (let i = 0; i < SIDE * SIDE; i++) {
      const v = Math.round(255 * pixels[i]);
      img.data.set([v, v, v, 255], 4 * i);
    }
    sctx.putImageData(img, 0, 0);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(small, 0, 0, canvas.width, canvas.height);
    inked = true;
  };

  // The model's input, or null when nothing is drawn.
  const toImage = () => {
    if (!inked) return null;
    const { width: w, height: h } = canvas;
    const data = ctx.getImageData(0, 0, w, h).data;
    let [x0, y0, x1, y1] = [w, h, -1, -1];
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) {
        if (data[4 * (y * w + x)] > 40) {
          if (x < x0) x0 = x;
          if (x > x1) x1 = x;
          if (y < y0) y0 = y;
          if (y > y1) y1 = y;
        }
      }
    if (x1 < 0) return null;
    const bw = x1 - x0 + 1;
    const bh = y1 - y0 + 1;
    const s = 18 / Math.max(bw, bh);
    const small = document.createElement('canvas');
    small.width = small.height = SIDE;
    const sctx = small.getContext('2d');
    sctx.fillStyle = '#000';
    sctx.fillRect(0, 0, SIDE, SIDE);
    sctx.imageSmoothingEnabled = true;
    sctx.imageSmoothingQuality = 'high';
    sctx.drawImage(canvas, x0, y0, bw, bh, 14 - (bw * s) / 2, 14 - (bh * s) / 2, bw * s, bh * s);
    const px = sctx.getImageData(0, 0, SIDE, SIDE).data;
    const out = new Float32Array(SIDE * SIDE);
    for (let i = 0; i < out.length; i++) out[i] = px[4 * i] / 255;
    return out;
  };
  return { clear, toImage, show, isEmpty: () => !inked };
}
