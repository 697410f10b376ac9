// E1–E6: one query against a few keys, and the one-head / two-head noise experiment. The exercises
// are stated in docs/attention-exercises.md; the numbers come from src/demos/.
// Each item: defaults (also the URL-fragment keys), controls, compute(engine, settings) → result from
// the kernels, draw(d) onto d.cv, numbers(d) → HTML. d.cpu says whether to show the CPU reference.
import {
  C,
  begin,
  plane,
  dot,
  label,
  ring,
  cross,
  arrow,
  bars,
  heatmap,
  lines,
  fmt,
  table,
} from './draw.js';
import { LAYER_ITEMS } from './layer-items.js';
import { L } from './labels.js';

const range = (a, b, step) =>
  Array.from({ length: Math.round((b - a) / step) + 1 }, (_, i) => +(a + i * step).toFixed(6));
// A small seeded generator (mulberry32) for the positions E1 starts from.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
// Okabe–Ito without yellow (too light on white) and orange (the query's colour).
const KEYCOL = ['#0072B2', '#D55E00', '#009E73', '#56B4E9', '#CC79A7', '#000000'];
const pts = (s) => (s ? s.split(';').map((p) => p.split(',').map(Number)) : []);
const unpts = (a) => a.map((p) => p.map((x) => +x.toFixed(2)).join(',')).join(';');
const vec = (v, d = 3) =>
  `(${Array.from(v)
    .map((x) => fmt(x, d))
    .join(', ')})`;

// ---------------------------------------------------------------------------------------------- E1
function e1Points(st) {
  const r = rng(st.seed * 7919 + st.n);
  const fresh = (n) => Array.from({ length: n }, () => [r() * 3.2 - 1.6, r() * 3.2 - 1.6]);
  let k = pts(st.k),
    v = pts(st.v),
    q = pts(st.q)[0];
  if (k.length !== st.n) k = fresh(st.n);
  if (v.length !== st.n) v = fresh(st.n);
  // Until the student moves it, the query starts where no key hides under its arrow: of twelve
  // directions at length 1.3, the one farthest from the nearest key.
  if (!q || q.length !== 2) {
    const far = (p) => Math.min(...k.map((kk) => Math.hypot(kk[0] - p[0], kk[1] - p[1])));
    const around = Array.from({ length: 12 }, (_, i) =>
      [1.3 * Math.cos((i * Math.PI) / 6), 1.3 * Math.sin((i * Math.PI) / 6)].map(
        (x) => +x.toFixed(2),
      ),
    );
    q = around.reduce((best, p) => (far(p) > far(best) ? p : best));
  }
  return { k, v, q };
}

const E1 = {
  id: 'e1',
  num: 'E1',
  short: 'copying',
  title: 'Copying: one score dominates, one value comes out',
  explain:
    `The weights α form a probability distribution over the keys. Drag the query (orange ` +
    `arrow) towards a key, or
    raise its length: once one score kⱼᵀq beats every other by a few units, αⱼ ` +
    `is almost 1 and the output c (black ring)
    sits on vⱼ — attention has copied one value. Keys and values are separate ` +
    `points: the key decides <em>who</em> is
    picked, the value decides <em>what</em> comes out.`,
  formula:
    'αᵢ = exp(β·kᵢᵀq) / Σⱼ exp(β·kⱼᵀq), &nbsp; c = Σᵢ αᵢ vᵢ, ' +
    '&nbsp; ‖c − vⱼ‖ ≤ Σᵢ≠ⱼ αᵢ‖vᵢ − vⱼ‖',
  tex:
    '\\alpha_i = \\frac{\\exp(\\beta\\, k_i^\\top q)}{\\sum_j \\exp(\\beta\\, k_j^\\top ' +
    'q)},\\quad c = \\sum_i \\alpha_i v_i,\\quad \\lVert c - v_j\\rVert \\le \\sum_{i\\ne j} ' +
    '\\alpha_i \\lVert v_i - v_j\\rVert',
  alt: 'Left: keys and the query in the plane. Right: values and the output c. Bottom: the weights α as bars.',
  aspect: 1.45,
  defaults: { n: 4, scale: 1, beta: 1, seed: 1, k: '', v: '', q: '' },
  controls: [
    { type: 'range', key: 'n', label: 'keys N', min: 2, max: 6, step: 1 },
    { type: 'range', key: 'scale', label: 'query length ×', min: 0, max: 8, step: 0.05 },
    { type: 'range', key: 'beta', label: 'β', min: 0, max: 4, step: 0.05 },
    {
      type: 'button',
      label: 'new keys and values',
      action: (st) => {
        st.seed += 1;
        st.k = '';
        st.v = '';
      },
    },
    { type: 'select', key: 'sel', label: 'arrow keys move', options: [['q', 'the query']] },
  ],
  attach(d, changed) {
    d.st.sel = 'q';
    const sel = d.el.querySelector('select');
    const fill = () => {
      const n = d.st.n;
      sel.innerHTML =
        `<option value="q">the query</option>` +
        Array.from(
          { length: n },
          (_, i) =>
            `<option value="k${i}">key ${i + 1}</option><option value="v${i}">value ${i + 1}</option>`,
        ).join('');
      sel.value = d.st.sel;
    };
    d.sync.push(fill);
    d.cv.tabIndex = 0;
    // Driven by the arrow keys: an application to a screen reader, which then passes them on.
    d.cv.setAttribute('role', 'application');
    d.cv.setAttribute('aria-roledescription', 'points to move');
    d.cv.setAttribute(
      'aria-label',
      `${E1.alt} Drag points with the mouse or finger, or focus here and use the arrow keys ` +
        `to move the item chosen in “arrow keys move”.`,
    );
    const move = (which, p) => {
      const P = e1Points(d.st);
      if (which === 'q')
        P.q = [p[0] / Math.max(d.st.scale, 1e-6), p[1] / Math.max(d.st.scale, 1e-6)];
      else P[which[0]][Number(which.slice(1))] = p;
      d.st.k = unpts(P.k);
      d.st.v = unpts(P.v);
      d.st.q = unpts([P.q]);
      changed();
    };
    const current = (which) => {
      const P = e1Points(d.st);
      return which === 'q'
        ? [P.q[0] * d.st.scale, P.q[1] * d.st.scale]
        : P[which[0]][Number(which.slice(1))];
    };
    let drag = null;
    d.cv.addEventListener('pointerdown', (ev) => {
      if (!d.geo) return;
      const r = d.cv.getBoundingClientRect();
      const x = ev.clientX - r.left,
        y = ev.clientY - r.top;
      let best = null,
        bd = 22;
      for (const h of d.geo.handles) {
        const dd = Math.hypot(h.px[0] - x, h.px[1] - y);
        if (dd < bd) {
          bd = dd;
          best = h;
        }
      }
      if (best) {
        drag = best;
        d.st.sel = best.id;
        sel.value = best.id;
        d.cv.setPointerCapture(ev.pointerId);
        ev.preventDefault();
      }
    });
    d.cv.addEventListener('pointermove', (ev) => {
      if (!drag) return;
      const r = d.cv.getBoundingClientRect();
      const p = drag.plane
        .unmap(ev.clientX - r.left, ev.clientY - r.top)
        .map((x) => Math.max(-3, Math.min(3, x)));
      move(drag.id, p);
    });
    d.cv.addEventListener('pointerup', () => {
      drag = null;
    });
    d.cv.style.touchAction = 'none';
    d.cv.addEventListener('keydown', (ev) => {
      const step = ev.shiftKey ? 0.25 : 0.05;
      const dir = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, 1], ArrowDown: [0, -1] }[
        ev.key
      ];
      if (!dir) return;
      ev.preventDefault();
      const p = current(d.st.sel);
      move(d.st.sel, [
        Math.max(-3, Math.min(3, p[0] + dir[0] * step)),
        Math.max(-3, Math.min(3, p[1] + dir[1] * step)),
      ]);
    });
  },
  compute: (engine, st) => {
    const P = e1Points(st);
    return engine.demo_copying(
      P.k.flat(),
      P.v.flat(),
      [P.q[0] * st.scale, P.q[1] * st.scale],
      st.beta,
    );
  },
  draw(d) {
    const { ctx, w, h } = begin(d.cv);
    const r = d.res,
      P = e1Points(d.snap);
    const s = Math.min((w - 12) / 2, h - 74);
    const L = plane(ctx, { x: 0, y: 0, s }, 3, 'keys kᵢ and query q');
    const R = plane(ctx, { x: w - s, y: 0, s }, 3, 'values vᵢ and output c');
    const handles = [];
    const col = (i) => KEYCOL[i % KEYCOL.length];
    P.k.forEach((k, i) => {
      const px = L.map(k);
      dot(ctx, px, col(i), `k${i + 1}`, i === r.best ? 8 : 6);
      handles.push({ id: `k${i}`, px, plane: L });
    });
    const q = [P.q[0] * d.snap.scale, P.q[1] * d.snap.scale];
    // A long query is drawn at the plane's edge (its direction is what decides the winner).
    const ql = Math.hypot(q[0], q[1]),
      qs = ql > 2.9 ? 2.9 / ql : 1;
    const qd = [q[0] * qs, q[1] * qs];
    arrow(ctx, L.map([0, 0]), L.map(qd), C.q, 3);
    label(ctx, L.map(qd), qs < 1 ? `q (‖q‖ = ${ql.toFixed(1)})` : 'q', 5, C.q);
    handles.push({ id: 'q', px: L.map(qd), plane: L });
    P.v.forEach((v, i) => {
      const px = R.map(v);
      ctx.strokeStyle = 'rgba(0,0,0,0.25)';
      ctx.lineWidth = Math.max(0.5, 6 * r.dev.alpha[i]);
      ctx.beginPath();
      ctx.moveTo(...R.map(r.dev.c));
      ctx.lineTo(...px);
      ctx.stroke();
      dot(ctx, px, col(i), `v${i + 1}`);
      handles.push({ id: `v${i}`, px, plane: R });
    });
    dot(ctx, R.map(r.dev.c), C.out, 'c', 9, true);
    if (d.cpu) cross(ctx, R.map(r.cpu.c), C.cpu, 7);
    bars(ctx, { x: 0, y: s + 4, w, h: h - s - 4 }, r.dev.alpha, {
      colors: r.dev.alpha.map((_, i) => col(i)),
      labels: r.dev.alpha.map((a, i) => `α${i + 1}=${a.toFixed(3)}`),
      title: 'α',
      marks: d.cpu ? r.cpu.alpha : null,
    });
    // The point the arrow keys move (“arrow keys move”), ringed.
    const chosen = handles.find((hd) => hd.id === d.st.sel);
    if (chosen) ring(ctx, chosen.px);
    d.geo = { handles };
  },
  numbers(d) {
    const r = d.res;
    const head = ['i', 'β·kᵢᵀq', `αᵢ (${L.k})`].concat(d.cpu ? [`αᵢ (${L.ref})`, '|Δ|'] : []);
    const rows = r.scores.map((s, i) =>
      [`${i + 1}${i === r.best ? '★' : ''}`, fmt(s, 3), fmt(r.dev.alpha[i], 6)].concat(
        d.cpu ? [fmt(r.cpu.alpha[i], 6), fmt(Math.abs(r.dev.alpha[i] - r.cpu.alpha[i]))] : [],
      ),
    );
    return (
      table(head, rows) +
      `<p class="num-line">c = ${vec(r.dev.c)}${d.cpu ? ` · CPU ${vec(r.cpu.c)}` : ''}<br>
      margin k★ᵀq − next = <b>${fmt(r.margin, 3)}</b> · ‖c − v★‖ = ` +
      `<b>${fmt(r.dist_to_best)}</b> (max‖v‖ = ${fmt(r.max_v, 2)})<br>
      <span class="muted">Check: at margin 10, ‖c − v★‖ ≤ 10⁻³·max‖v‖.</span></p>`
    );
  },
};

// ---------------------------------------------------------------------------------------------- E2
const E2_GRID = range(0, 30, 0.5);
const E2 = {
  id: 'e2',
  num: 'E2',
  short: 'average',
  title: 'Average of two: q = s·(k_a + k_b)',
  explain:
    `With orthonormal keys, a query along k_a + k_b scores s on both and 0 elsewhere. As s grows the other
    keys' weights vanish and α_a = α_b → ½, so c approaches the midpoint of v_a ` +
    `and v_b. It never gets there exactly:
    the gap shrinks like e⁻ˢ (right). The kernels work in 32-bit floats, so their ` +
    `gap stops near 10⁻⁸ while the f64
    reference keeps falling.`,
  formula:
    'α_a = α_b = eˢ / (2eˢ + N − 2), &nbsp; others 1 / (2eˢ + N − 2), &nbsp; c → ½(v_a + v_b)',
  tex:
    '\\alpha_a = \\alpha_b = \\frac{e^{s}}{2e^{s} + N - 2},\\quad \\text{others } ' +
    '\\frac{1}{2e^{s} + N - 2},\\quad c \\to \\tfrac12 (v_a + v_b)',
  alt:
    'Left: the values, their midpoint and the output c. Right: the gap between c and the ' +
    'midpoint against s, on a log scale.',
  aspect: 2,
  defaults: { n: 6, s: 3, seed: 3 },
  controls: [
    { type: 'range', key: 's', label: 'query scale s', min: 0, max: 30, step: 0.1 },
    { type: 'range', key: 'n', label: 'keys N', min: 3, max: 12, step: 1 },
    {
      type: 'button',
      label: 'new values',
      action: (st) => {
        st.seed += 1;
      },
    },
  ],
  compute: (engine, st) => engine.demo_average(st.n, st.s, st.seed, E2_GRID),
  draw(d) {
    const { ctx, w, h } = begin(d.cv);
    const r = d.res,
      v = r.values;
    const s = Math.min(h, w * 0.45);
    const P = plane(ctx, { x: 0, y: 0, s }, 1.2, 'values and c');
    for (let i = 2; i < v.length / 2; i++)
      dot(ctx, P.map([v[2 * i], v[2 * i + 1]]), C.other, `v${i + 1}`, 5);
    dot(ctx, P.map([v[0], v[1]]), C.a, 'v_a');
    dot(ctx, P.map([v[2], v[3]]), C.b, 'v_b');
    const mid = [(v[0] + v[2]) / 2, (v[1] + v[3]) / 2];
    cross(ctx, P.map(mid), C.mid);
    dot(ctx, P.map(r.dev.c), C.out, 'c', 8, true);
    if (d.cpu) cross(ctx, P.map(r.cpu.c), C.cpu, 5);
    const series = [{ ys: r.grid_gap_gpu, color: C.a, label: L.kf }];
    if (d.cpu) series.push({ ys: r.grid_gap_cpu, color: C.cpu, dash: [6, 4], label: L.reff });
    lines(ctx, { x: s + 8, y: 0, w: w - s - 8, h }, r.grid, series, {
      log: true,
      lo: -14,
      hi: 1,
      title: '‖c − ½(v_a+v_b)‖',
      xlabel: 's',
      marker: d.snap.s,
    });
  },
  numbers(d) {
    const r = d.res,
      n = d.snap.n,
      s = d.snap.s;
    const exact = Math.exp(s) / (2 * Math.exp(s) + n - 2);
    const rows = [
      ['α_a', fmt(r.dev.alpha[0], 7), d.cpu ? fmt(r.cpu.alpha[0], 7) : null],
      ['α_b', fmt(r.dev.alpha[1], 7), d.cpu ? fmt(r.cpu.alpha[1], 7) : null],
      ['each other α', fmt(r.dev.alpha[2], 7), d.cpu ? fmt(r.cpu.alpha[2], 7) : null],
      ['gap ‖c − ½(v_a+v_b)‖', fmt(r.gap_gpu), d.cpu ? fmt(r.gap_cpu) : null],
    ].map((x) => x.filter((y) => y !== null));
    return (
      table(['', L.k].concat(d.cpu ? [L.reff] : []), rows) +
      `<p class="num-line">formula: α_a = eˢ/(2eˢ+N−2) = ${fmt(exact, 7)}<br><span ` +
      `class="muted">Check: s = 20, N = 6 gives a gap ≤ 10⁻⁶·max‖v‖.</span></p>`
    );
  },
};

// ------------------------------------------------------------------------------------------ E3, E4
const NOISE_DEFAULTS = { s: 50, lv: -6, fragile: true, samples: 500, seed: 7 };
const noiseControls = [
  { type: 'range', key: 's', label: 'query scale s', min: 1, max: 100, step: 1 },
  { type: 'range', key: 'lv', label: 'log₁₀ α (key noise)', min: -8, max: -1, step: 0.5 },
  { type: 'checkbox', key: 'fragile', label: 'k_a’s length varies (Σ_a = αI + ½μ_aμ_aᵀ)' },
  {
    type: 'select',
    key: 'samples',
    label: 'samples',
    options: [
      [1, '1'],
      [100, '100'],
      [500, '500'],
      [1000, '1000'],
    ],
  },
  {
    type: 'button',
    label: 'resample keys',
    action: (st) => {
      st.seed += 1;
    },
  },
];
const noiseCompute = (engine, st) =>
  engine.demo_noise(4, st.samples, st.seed, st.s, 10 ** st.lv, st.fragile);

function scatter(ctx, P, r, key, cpuKey, showCpu) {
  const v = r.values;
  const pts = r[key];
  for (let i = 0; i < pts.length / 2; i++) {
    ctx.fillStyle = r.gamma[i] > 1 ? 'rgba(0,114,178,0.35)' : 'rgba(213,94,0,0.35)';
    const p = P.map([pts[2 * i], pts[2 * i + 1]]);
    ctx.fillRect(p[0] - 2.5, p[1] - 2.5, 5, 5);
  }
  if (showCpu) {
    const c = r[cpuKey];
    for (let i = 0; i < c.length / 2; i++) {
      const p = P.map([c[2 * i], c[2 * i + 1]]);
      ctx.strokeStyle = C.cpu;
      ctx.lineWidth = 1;
      ctx.strokeRect(p[0] - 3.5, p[1] - 3.5, 7, 7);
    }
  }
  for (let i = 2; i < v.length / 2; i++)
    dot(ctx, P.map([v[2 * i], v[2 * i + 1]]), C.other, `v${i + 1}`, 4);
  dot(ctx, P.map([v[0], v[1]]), C.a, 'v_a', 7, true);
  dot(ctx, P.map([v[2], v[3]]), C.b, 'v_b', 7, true);
  cross(ctx, P.map([(v[0] + v[2]) / 2, (v[1] + v[3]) / 2]), C.mid, 8);
}
const pct = (x) => `${(100 * x).toFixed(1)} %`;
const lastSample = (r, key) => vec(r[key].slice(-2));

const E3 = {
  id: 'e3',
  num: 'E3',
  short: 'one head',
  title: 'Why one head is fragile',
  explain:
    `Each key is random around its own direction μᵢ. The single query s·(μ_a + μ_b) ` +
    `wants the average of v_a and
    v_b (green cross). With tiny isotropic noise it gets it. Now let k_a's ` +
    `<em>length</em> vary (γ ~ N(1, ½)): its score
    becomes γs against s for k_b, and with a large s the softmax turns that small difference into a landslide — each
    sample lands on v_a (γ &gt; 1, blue squares) or on v_b (γ &lt; 1, vermilion squares), rarely in between.`,
  formula: 'k_a ≈ γμ_a, γ ~ N(1, ½); &nbsp; k_aᵀq ≈ γs, k_bᵀq ≈ s ⇒ α_a/α_b ≈ exp((γ−1)s)',
  tex:
    'k_a \\approx \\gamma\\mu_a,\\ \\gamma \\sim \\mathcal N(1, \\tfrac12);\\quad k_a^\\top ' +
    'q \\approx \\gamma s,\\ k_b^\\top q \\approx s \\;\\Rightarrow\\; \\alpha_a/\\alpha_b ' +
    '\\approx e^{(\\gamma-1)s}',
  alt:
    'Scatter of the single-head output over the samples, with v_a, v_b and their mean ' +
    'marked; right, the histogram of γ.',
  aspect: 1.6,
  defaults: { ...NOISE_DEFAULTS },
  controls: noiseControls,
  compute: noiseCompute,
  draw(d) {
    const { ctx, w, h } = begin(d.cv);
    const r = d.res;
    const s = Math.min(h, w * 0.6);
    scatter(
      ctx,
      plane(ctx, { x: 0, y: 0, s }, 1.3, 'one head: c per sample'),
      r,
      'one_gpu',
      'one_cpu',
      d.cpu,
    );
    // γ histogram over [-1, 3].
    const nb = 16,
      hist = new Array(nb).fill(0);
    r.gamma.forEach((g) => {
      const b = Math.floor(((g + 1) / 4) * nb);
      if (b >= 0 && b < nb) hist[b]++;
    });
    const mx = Math.max(1, ...hist);
    bars(
      ctx,
      { x: s + 10, y: 0, w: w - s - 10, h },
      hist.map((x) => x / mx),
      {
        colors: hist.map((_, i) => (((i + 0.5) / nb) * 4 - 1 > 1 ? C.a : C.b)),
        labels: hist.map((_, i) => (i % 4 === 0 ? String(i / 4 - 1) : '')),
        title: 'γ (k_a’s length)',
      },
    );
  },
  numbers(d) {
    const r = d.res;
    return (
      table(
        ['single head', L.k],
        [
          ['near v_a or v_b (within 0.1‖v_a−v_b‖)', pct(r.one_near_value)],
          ['near the mean', pct(r.one_near_mean)],
          [
            'last sample: γ, c',
            `${fmt(r.gamma[r.gamma.length - 1], 3)}, ${lastSample(r, 'one_gpu')}`,
          ],
        ].concat(
          d.cpu
            ? [
                [`last sample c (${L.ref})`, lastSample(r, 'one_cpu')],
                [`max |${L.k} − ${L.ref}|`, fmt(r.max_gpu_cpu)],
              ]
            : [],
        ),
      ) +
      '<p class="num-line muted">Check: 1,000 samples at s = 50 put ≥ 90 % near v_a or v_b ' +
      '(about 95 %: a sample misses only when |γ−1|·s &lt; ln 9).</p>'
    );
  },
};

const E4 = {
  id: 'e4',
  num: 'E4',
  short: 'two heads',
  title: 'Why two heads are robust',
  explain:
    `The same random keys, now with two heads: q₁ = s·μ_a looks only for k_a and q₂ = s·μ_b ` +
    `only for k_b. Whatever
    k_a's length (as long as γ &gt; 0) head 1 still picks v_a, because every other key ` +
    `scores about 0; head 2 picks v_b.
    Averaging the two heads gives the midpoint on every sample — where one head (left) jumped between the ends.`,
  formula: 'c₁ = softmax(s·Kμ_a)ᵀV ≈ v_a, &nbsp; c₂ ≈ v_b, &nbsp; c = ½(c₁ + c₂) ≈ ½(v_a + v_b)',
  tex:
    'c_1 = \\operatorname{softmax}(s\\,K\\mu_a)^\\top V \\approx v_a,\\quad c_2 \\approx ' +
    'v_b,\\quad c = \\tfrac12(c_1 + c_2) \\approx \\tfrac12(v_a + v_b)',
  alt: 'Two scatters over the same samples: left the single head, right the average of two heads.',
  aspect: 2,
  defaults: { ...NOISE_DEFAULTS },
  controls: noiseControls,
  compute: noiseCompute,
  draw(d) {
    const { ctx, w, h } = begin(d.cv);
    const s = Math.min(h, (w - 12) / 2);
    scatter(
      ctx,
      plane(ctx, { x: 0, y: 0, s }, 1.3, 'one head'),
      d.res,
      'one_gpu',
      'one_cpu',
      d.cpu,
    );
    scatter(
      ctx,
      plane(ctx, { x: w - s, y: 0, s }, 1.3, 'two heads, averaged'),
      d.res,
      'two_gpu',
      'two_cpu',
      d.cpu,
    );
  },
  numbers(d) {
    const r = d.res;
    return (
      table(
        ['', L.k],
        [
          ['one head near v_a or v_b', pct(r.one_near_value)],
          ['one head near the mean', pct(r.one_near_mean)],
          ['two heads near the mean (γ > 0)', pct(r.two_near_mean)],
          ['last sample, two heads', lastSample(r, 'two_gpu')],
        ].concat(
          d.cpu
            ? [
                [`last sample, two heads (${L.ref})`, lastSample(r, 'two_cpu')],
                [`max |${L.k} − ${L.ref}|`, fmt(r.max_gpu_cpu)],
              ]
            : [],
        ),
      ) +
      '<p class="num-line muted">Check: on 1,000 samples at s = 50, ≥ 95 % of those with γ ' +
      '&gt; 0 lie within 0.1‖v_a−v_b‖ of the mean.</p>'
    );
  },
};

// ---------------------------------------------------------------------------------------------- E5
const U = ['u_a', 'u_b', 'u_c', 'u_d'];
const UCOL = [C.a, C.b, C.mid, C.q];
const mat = (m, n, k) => {
  const row = (i) =>
    Array.from({ length: k }, (_, j) => `<td>${+m[i * k + j].toFixed(3)}</td>`).join('');
  return (
    `<table class="demo-matrix" aria-label="${n}"><caption>${n}</caption>` +
    `${Array.from({ length: k }, (_, i) => `<tr>${row(i)}</tr>`).join('')}</table>`
  );
};
const E5 = {
  id: 'e5',
  num: 'E5',
  short: 'K, Q, V',
  title: 'Why keys, queries and values are separate',
  legend: 'attention weight',
  explain:
    `Four orthogonal directions u_a…u_d of length β; x₁ = u_d + u_b, x₂ = u_a, x₃ ` +
    `= u_c + u_b. The goal: c₂ ≈ u_b
    and c₁ ≈ u_b − u_c. Without projections x₂ is its own best match (its score ` +
    `with itself is β², more than with anyone
    else), and whatever you add to x₂ to reach x₁ or x₃ also raises its ` +
    `self-score and leaks into its value — try the
    sliders. With separate matrices the query can point somewhere the value does not: Q sends x₂ to u_d (x₁'s key),
    V keeps only u_b − u_c.`,
  formula:
    'Q = λ(u_d u_aᵀ + u_c u_dᵀ)/β², &nbsp; K = I, &nbsp; V = (u_b u_bᵀ − u_c u_cᵀ)/β², ' +
    '&nbsp; cᵢ = Σⱼ softmax(qᵢᵀkⱼ) vⱼ',
  tex:
    'Q = \\lambda(u_d u_a^\\top + u_c u_d^\\top)/\\beta^2,\\quad K = I,\\quad V = (u_b ' +
    'u_b^\\top - u_c u_c^\\top)/\\beta^2,\\quad c_i = \\sum_j ' +
    '\\operatorname{softmax}(q_i^\\top k_j)\\, v_j',
  alt:
    'Left: the 3×3 attention matrix. Right: the outputs c₁, c₂, c₃ as bars along ' +
    'u_a…u_d, with the targets marked.',
  aspect: 2,
  defaults: { proj: false, lambda: 0.2, beta: 10, addc: 0, addd: 0 },
  controls: [
    { type: 'checkbox', key: 'proj', label: 'use the K, Q, V matrices (off: k = q = v = x)' },
    { type: 'range', key: 'addc', label: 'x₂ adds ·u_c', min: -2, max: 2, step: 0.05 },
    { type: 'range', key: 'addd', label: 'x₂ adds ·u_d', min: -2, max: 2, step: 0.05 },
    { type: 'range', key: 'lambda', label: 'query scale λ', min: 0, max: 0.5, step: 0.005 },
    { type: 'range', key: 'beta', label: 'length β of the u’s', min: 1, max: 15, step: 0.5 },
  ],
  compute: (engine, st) => engine.demo_separate(st.beta, st.lambda, st.proj, st.addc, st.addd),
  draw(d) {
    const { ctx, w, h } = begin(d.cv);
    const r = d.res;
    const hs = Math.min(h, w * 0.4);
    heatmap(ctx, { x: 0, y: 0, w: hs, h: hs }, r.dev.alpha, 3, 3, {
      title: 'α (row i attends to column j)',
      rowLabels: ['1', '2', '3'],
      colLabels: ['x₁', 'x₂', 'x₃'],
      numbers: true,
    });
    const targets = d.snap.proj ? [[0, 1, -1, 0], [0, 1, 0, 0], null] : [null, [0, 1, 0, 0], null];
    const gw = (w - hs - 16) / 3;
    for (let i = 0; i < 3; i++) {
      const c = r.dev.out.slice(4 * i, 4 * i + 4);
      bars(ctx, { x: hs + 16 + i * gw, y: 0, w: gw - 6, h }, c, {
        lo: -1.5,
        hi: 1.5,
        colors: UCOL,
        labels: ['a', 'b', 'c', 'd'],
        title: `c${'₁₂₃'[i]}/β`,
        marks: d.cpu ? r.cpu.out.slice(4 * i, 4 * i + 4) : targets[i] || undefined,
      });
    }
  },
  numbers(d) {
    const r = d.res;
    const rows = [];
    for (const [src, tag] of [[r.dev.out, L.k], ...(d.cpu ? [[r.cpu.out, L.ref]] : [])]) {
      for (let i = 0; i < 3; i++)
        rows.push([`c${'₁₂₃'[i]}/β ${tag}`, ...src.slice(4 * i, 4 * i + 4).map((x) => fmt(x, 3))]);
    }
    return (
      `<div class="demo-matrices">${mat(r.q, 'Q', 4)}${mat(r.k, 'K', 4)}${mat(r.v, 'V', 4)}</div>` +
      table(['outputs', 'u_a', 'u_b', 'u_c', 'u_d'], rows) +
      `<p class="num-line muted">Matrices act on coordinates along u_a…u_d (rows: output). ` +
      `Check: β = 10, λ = 0.2 gives
      c₂ within 10⁻³·β of u_b and c₁ within 10⁻³·β of u_b − ` +
      `u_c.${d.cpu ? ' Black marks: CPU values.' : ' Black marks: targets.'}</p>`
    );
  },
};

// ---------------------------------------------------------------------------------------------- E6
const E6_GRID = range(0, 2, 0.04);
const E6 = {
  id: 'e6',
  num: 'E6',
  short: 'temperature',
  title: 'Temperature β: from uniform to one-hot',
  explain:
    `The same scores through softmax_β. At β = 0 every weight is exactly 1/N and c is the plain average; as β
    grows the largest score takes over (hard attention) and the entropy of α falls steadily. Scores of random
    D-dimensional vectors spread like √D, so the transformer divides by √D (β = ` +
    `1/√d_head) to keep them at unit scale
    whatever the head size.`,
  formula:
    'αᵢ = exp(β zᵢ) / Σⱼ exp(β zⱼ), &nbsp; H(α) = −Σ αᵢ ln αᵢ, ' +
    '&nbsp; ' +
    'dH/dβ = −β·Var_α(z) ≤ 0',
  tex:
    '\\alpha_i = \\frac{e^{\\beta z_i}}{\\sum_j e^{\\beta z_j}},\\quad H(\\alpha) = ' +
    '-\\sum_i \\alpha_i \\ln \\alpha_i,\\quad \\frac{dH}{d\\beta} = ' +
    '-\\beta\\,\\mathrm{Var}_\\alpha(z) \\le 0',
  alt: 'Left: the weights α as bars with the uniform level dashed. Right: the entropy of α against β.',
  aspect: 2,
  defaults: { beta: 0.25, d: 16, n: 8, seed: 5 },
  controls: [
    { type: 'range', key: 'beta', label: 'β', min: 0, max: 2, step: 0.01 },
    { type: 'range', key: 'd', label: 'vector dimension D', min: 1, max: 256, step: 1 },
    { type: 'range', key: 'n', label: 'keys N', min: 2, max: 16, step: 1 },
    {
      type: 'button',
      label: 'β = 1/√D',
      action: (st) => {
        st.beta = +(1 / Math.sqrt(st.d)).toFixed(4);
      },
    },
    {
      type: 'button',
      label: 'new vectors',
      action: (st) => {
        st.seed += 1;
      },
    },
  ],
  compute: (engine, st) => engine.demo_temperature(st.n, st.d, st.seed, st.beta, E6_GRID),
  draw(d) {
    const { ctx, w, h } = begin(d.cv);
    const r = d.res,
      n = d.snap.n;
    const bw = w * 0.45;
    bars(ctx, { x: 0, y: 0, w: bw, h }, r.dev, {
      colors: C.a,
      labels: r.dev.map((_, i) => String(i + 1)),
      title: `α at β = ${d.snap.beta}`,
      ref: 1 / n,
      marks: d.cpu ? r.cpu : null,
    });
    const series = [{ ys: r.grid_entropy_gpu, color: C.a, label: L.k }];
    if (d.cpu) series.push({ ys: r.grid_entropy_cpu, color: C.cpu, dash: [6, 4], label: L.ref });
    lines(ctx, { x: bw + 8, y: 0, w: w - bw - 8, h }, r.grid, series, {
      lo: 0,
      hi: Math.log(n) * 1.05,
      title: 'entropy H(α) in nats',
      xlabel: 'β',
      marker: d.snap.beta,
      hlines: [{ y: Math.log(n), label: 'ln N' }],
    });
  },
  numbers(d) {
    const r = d.res,
      st = d.snap;
    return (
      table(
        ['', L.k].concat(d.cpu ? [L.ref] : []),
        [
          ['H(α)', fmt(r.entropy_gpu), d.cpu ? fmt(r.entropy_cpu) : null],
          ['max α', fmt(Math.max(...r.dev)), d.cpu ? fmt(Math.max(...r.cpu)) : null],
          [
            'α at β = 0 (1/N = ' + fmt(1 / st.n, 6) + ')',
            r.uniform_gpu ? fmt(r.uniform_gpu[0], 8) : '—',
            d.cpu ? fmt(1 / st.n, 8) : null,
          ],
        ].map((x) => x.filter((y) => y !== null)),
      ) +
      `<p class="num-line">std of raw scores ${fmt(r.score_std, 3)} vs √D ` +
      `= ${fmt(Math.sqrt(st.d), 3)}; β·std = ${fmt(st.beta * r.score_std, 3)}<br>
      <span class="muted">Check: H(α) never rises with β; β = 0 gives exactly 1/N.</span></p>`
    );
  },
};

export const ITEMS = [E1, E2, E3, E4, E5, E6, ...LAYER_ITEMS];
