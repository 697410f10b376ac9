// A demo's state in the address: #e3?s=50&lv=-6 … (parseHash, writeHash), and the checks a shared
// link goes through before it sets a demo's controls (applyParams): a link is user input.
export function parseHash() {
  const m = location.hash.match(/^#(e\d+|s2[a-c])(?:\?(.*))?$/);
  if (!m) return null;
  return { id: m[1], params: new URLSearchParams(m[2] || '') };
}

// A shared link is user input: every value is checked against its control (ranges clamped and
// snapped to the step, selects limited to their options, text capped); values no control owns
// (seeds, dragged points) must be small finite numbers. Anything else is ignored, keeping the default.
const NUMS = /^-?\d{1,6}(\.\d{1,6})?$/;
export function applyParams(item, st, params) {
  const byKey = new Map(item.controls.filter((c) => c.key).map((c) => [c.key, c]));
  for (const [k, v] of params) {
    if (!(k in item.defaults)) continue;
    const d = item.defaults[k];
    const c = byKey.get(k);
    if (c && c.type === 'range') {
      const x = Number(v);
      if (!Number.isFinite(x)) continue;
      const snapped =
        c.min + Math.round((Math.min(c.max, Math.max(c.min, x)) - c.min) / c.step) * c.step;
      st[k] = Math.min(c.max, Math.max(c.min, +snapped.toFixed(6)));
    } else if (c && c.type === 'select') {
      const hit = c.options.find(([val]) => String(val) === v);
      if (hit) st[k] = hit[0];
    } else if (typeof d === 'boolean') {
      st[k] = v === '1' || v === 'true';
    } else if (c && c.type === 'text') {
      st[k] = v.slice(0, 200);
    } else if (typeof d === 'number') {
      const x = Number(v);
      if (Number.isInteger(x) && x >= 0 && x < 2 ** 31) st[k] = x;
    } else if (typeof d === 'string') {
      // Point lists "x,y;x,y": at most 16 points with coordinates in [-10, 10].
      const ok =
        v === '' ||
        (v.length <= 400 &&
          v.split(';').length <= 16 &&
          v.split(';').every((p) => {
            const xs = p.split(',');
            return xs.length === 2 && xs.every((x) => NUMS.test(x) && Math.abs(Number(x)) <= 10);
          }));
      if (ok) st[k] = v;
    }
  }
}

export function writeHash(d) {
  const p = new URLSearchParams();
  for (const k of Object.keys(d.item.defaults)) {
    const v = d.st[k];
    p.set(
      k,
      typeof v === 'boolean' ? (v ? '1' : '0') : typeof v === 'number' ? String(+v.toFixed(4)) : v,
    );
  }
  history.replaceState(null, '', `#${d.item.id}?${p}`);
}
