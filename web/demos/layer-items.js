// The demos about a whole attention layer, E7–E10: the causal mask (with a toy trained with and
// without it), multi-head shapes, synthesizer vs dot-product scores, and the layers one attention layer can imitate.
// E8/E9 also draw a trained model's maps once one is handed over with window.attnlabDemos.setModel(bytes). The
// exercises are stated in docs/attention-exercises.md; the numbers come from src/demos/.
import { C, OKABE, begin, bars, heatmap, lines, fmt, table, wrapLines } from './draw.js';
import { L } from './labels.js';

const maxAbs = (a, b) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);
const NO_MODEL = 'Train or load a model in the Train panel to see this.';

// E10's map titles: the offset is the point, so a narrow map shortens the words and keeps it
// ("head 1: offset −2", "head 1: −2", "h1: −2").
// One form for every head (the one the widest title fits), so the row reads alike.
function headTitle(ctx, k, offset, w, H) {
  const sign = (o) => (o < 0 ? `−${-o}` : o > 0 ? `+${o}` : '0');
  const forms = [
    (h, o) => `head ${h}: offset ${o}`,
    (h, o) => `head ${h}: ${o}`,
    (h, o) => `h${h}: ${o}`,
  ];
  const form = forms.find((f) => ctx.measureText(f(H, '−2')).width <= w) || forms[2];
  return form(k + 1, sign(offset));
}

// A trained model's maps for E8/E9, or null (with the reason) when none is loaded.
async function modelMaps(engine, variant, text) {
  if (!(await engine.demo_models()).includes(variant)) return { missing: true };
  try {
    return await engine.demo_model_maps(variant, text);
  } catch (e) {
    return { error: String(e.message || e) };
  }
}

function drawModelGrid(ctx, box, m, layer, title, headSel = null, missing = NO_MODEL) {
  const { x, y, w, h } = box;
  if (!m || m.missing || m.error) {
    ctx.fillStyle = '#5b6673';
    ctx.textAlign = 'left';
    // Wrapped to the box: side by side (E9) the two notes would otherwise run into each other.
    const words = `${title}: ${m && m.error ? m.error : missing}`.split(' ');
    let line = '',
      ly = y + 12;
    for (const word of words) {
      if (line && ctx.measureText(`${line} ${word}`).width > w) {
        ctx.fillText(line, x, ly);
        line = word;
        ly += 14;
      } else line = line ? `${line} ${word}` : word;
    }
    if (line) ctx.fillText(line, x, ly);
    return;
  }
  const t = m.t,
    L = Math.min(layer, m.layers - 1);
  const heads = headSel === null ? [...Array(m.heads).keys()] : [Math.min(headSel, m.heads - 1)];
  const per = heads.length > 4 ? 4 : heads.length;
  const rows = Math.ceil(heads.length / per);
  const cw = w / per,
    ch = (h - 16) / rows;
  ctx.fillStyle = '#5b6673';
  ctx.textAlign = 'left';
  ctx.fillText(`${title} — layer ${L + 1}`, x, y + 7);
  heads.forEach((hd, k) => {
    const off = (L * m.heads + hd) * t * t;
    const lab = t <= 24 ? m.tokens.map((s) => (s === ' ' ? '␣' : s)) : null;
    heatmap(
      ctx,
      { x: x + (k % per) * cw, y: y + 16 + Math.floor(k / per) * ch, w: cw - 8, h: ch - 4 },
      m.maps.slice(off, off + t * t),
      t,
      t,
      { title: `head ${hd + 1}`, rowLabels: cw > 160 ? lab : null },
    );
  });
}

// ---------------------------------------------------------------------------------------------- E7
const E7 = {
  id: 'e7',
  num: 'E7',
  short: 'causal mask',
  title: 'The causal mask: no peeking at the answer',
  legend: 'attention weight P (the gradient map has its own scale: middle colour = 0)',
  explain: `A decoder predicts token t+1 from tokens ≤ t, so before the softmax every score above the diagonal is
    replaced by a huge negative number: those weights come out exactly 0, and so do their gradients — nothing can
    flow from the future. Untick the mask to see each row spread over all positions. The toy below learns next-token
    prediction on random tokens: with the mask its loss stays at ln V (the next token really is unpredictable); without
    it the model learns to look one step ahead and copy the answer, and the loss collapses.`,
  formula:
    'Sᵢⱼ ← −10¹⁰ for j &gt; i, &nbsp; Pᵢ = softmax(Sᵢ) ⇒ Pᵢⱼ = 0, ' +
    '∂L/∂Sᵢⱼ = Pᵢⱼ(∂L/∂Pᵢⱼ − Σₖ Pᵢₖ ∂L/∂Pᵢₖ) = 0',
  tex:
    'S_{ij} \\leftarrow -10^{10} \\text{ for } j > i,\\quad P_i = ' +
    '\\operatorname{softmax}(S_i) \\Rightarrow P_{ij} = 0,\\quad \\frac{\\partial ' +
    'L}{\\partial S_{ij}} = P_{ij}\\Big(\\frac{\\partial L}{\\partial P_{ij}} - \\sum_k ' +
    'P_{ik}\\frac{\\partial L}{\\partial P_{ik}}\\Big) = 0',
  alt:
    'Left: the attention weights (masked cells hatched). Middle: the gradient of a random ' +
    'loss with respect to the scores. Bottom: training loss with and without the mask.',
  aspect: 1.5,
  defaults: { t: 8, seed: 9, mask: true },
  controls: [
    { type: 'checkbox', key: 'mask', label: 'causal mask on' },
    { type: 'range', key: 't', label: 'sequence length T', min: 2, max: 16, step: 1 },
    {
      type: 'button',
      label: 'new scores',
      action: (st) => {
        st.seed += 1;
      },
    },
    {
      type: 'button',
      label: 'train the toy with and without the mask',
      action: (st, d) => {
        d.trainWanted = true;
      },
    },
  ],
  async compute(engine, st, d) {
    const view = await engine.demo_mask(st.t, st.seed);
    if (d.trainWanted) {
      d.trainWanted = false;
      d.train = {
        masked: await engine.demo_train_toy(true, 80, 1),
        open: await engine.demo_train_toy(false, 80, 1),
      };
    }
    return { ...view, train: d.train || null };
  },
  draw(d) {
    const { ctx, w, h } = begin(d.cv);
    const r = d.res,
      t = r.t,
      st = d.snap;
    const top = h * 0.55;
    const p = st.mask ? r.masked_gpu : r.open_gpu;
    const lab = Array.from({ length: t }, (_, i) => String(i + 1));
    const hw = Math.min(top, w / 2 - 10);
    heatmap(ctx, { x: 0, y: 0, w: hw, h: top }, p, t, t, {
      title: st.mask ? 'weights P (masked)' : 'weights P (no mask)',
      hatchUpper: st.mask,
      rowLabels: lab,
      colLabels: lab,
      numbers: t <= 6,
    });
    const g = st.mask ? r.grad_gpu : r.open_grad_gpu,
      gm = Math.max(1e-12, ...g.map(Math.abs));
    heatmap(ctx, { x: w / 2, y: 0, w: hw, h: top }, g, t, t, {
      lo: -gm,
      hi: gm,
      title: st.mask ? '∂L/∂S (masked; 0 = middle colour)' : '∂L/∂S (no mask; 0 = middle colour)',
      hatchUpper: st.mask,
      rowLabels: lab,
      colLabels: lab,
    });
    const box = { x: 0, y: top + 6, w, h: h - top - 6 };
    if (r.train) {
      const xs = r.train.masked.losses.map((_, i) => i + 1);
      lines(
        ctx,
        box,
        xs,
        [
          { ys: r.train.masked.losses, color: C.a, label: 'with mask' },
          { ys: r.train.open.losses, color: C.b, dash: [6, 3], label: 'without mask' },
        ],
        {
          lo: 0,
          hi: 2.2,
          title: 'toy training loss',
          xlabel: 'step',
          hlines: [{ y: r.train.masked.floor, label: 'ln V' }],
        },
      );
    } else {
      ctx.fillStyle = '#5b6673';
      ctx.textAlign = 'left';
      wrapLines(
        ctx,
        `Press “train the toy …” to train it twice (80 steps each) on ${L.on}.`,
        w,
      ).forEach((line, i) => ctx.fillText(line, 0, top + 30 + 16 * i));
    }
  },
  numbers(d) {
    const r = d.res;
    // The table follows the mask switch, as the pictures do.
    const on = !d.snap || d.snap.mask !== false;
    const above = (m) => {
      let x = 0;
      for (let i = 0; i < r.t; i++)
        for (let j = i + 1; j < r.t; j++) x = Math.max(x, Math.abs(m[i * r.t + j]));
      return x;
    };
    const rows = on
      ? [
          ['largest masked weight', String(r.max_masked_weight)],
          ['largest masked gradient', String(r.max_masked_grad)],
        ]
      : [
          ['largest weight above the diagonal', fmt(above(r.open_gpu))],
          ['largest gradient above the diagonal', fmt(above(r.open_grad_gpu))],
        ];
    if (d.cpu) {
      rows.push(
        on
          ? [`max |P_${L.k} − P_${L.ref}|`, fmt(maxAbs(r.masked_gpu, r.masked_cpu))]
          : [`max |P_${L.k} − P_${L.ref}| (no mask)`, fmt(maxAbs(r.open_gpu, r.open_cpu))],
        on
          ? [`max |dS_${L.k} − dS_${L.ref}|`, fmt(maxAbs(r.grad_gpu, r.grad_cpu))]
          : [
              `max |dS_${L.k} − dS_${L.ref}| (no mask)`,
              fmt(maxAbs(r.open_grad_gpu, r.open_grad_cpu)),
            ],
      );
    }
    if (r.train) {
      const last = (l) => l.slice(-10).reduce((a, b) => a + b, 0) / 10;
      rows.push(
        ['final loss with mask', fmt(last(r.train.masked.losses), 3)],
        ['final loss without mask', fmt(last(r.train.open.losses), 3)],
        ['ln V', fmt(r.train.masked.floor, 3)],
      );
    }
    return (
      table(['', 'value'], rows) +
      (on
        ? '<p class="num-line muted">Check: masked weights and their gradients are exactly 0 (not just small).</p>'
        : '<p class="num-line muted">Without the mask the weights and gradients above the ' +
          'diagonal are not 0: each position sees, and learns from, the ones after it.</p>')
    );
  },
};

// ---------------------------------------------------------------------------------------------- E8
const E8 = {
  id: 'e8',
  num: 'E8',
  short: 'heads',
  title: 'Multi-head shapes',
  legend: 'attention weight',
  explain:
    `One projection of width C is cut into H heads of width C/H: (B, T, C) → (B, T, H, C/H) ` +
    `→ (B, H, T, C/H). Here
    the cut is a stride, not a copy — the same kernels read head h at column offset h·C/H. Each head computes its own
    T×T map on its own slice; the outputs land back side by side in (B, T, C). With a trained model loaded, type a
    question and step through its layers.`,
  formula: 'head_h = softmax(Q_h K_hᵀ/√(C/H) + mask) V_h, &nbsp; Y = [head_1 … head_H] W_O',
  tex:
    '\\mathrm{head}_h = \\operatorname{softmax}\\Big(\\frac{Q_h K_h^\\top}{\\sqrt{C/H}} + ' +
    '\\mathrm{mask}\\Big) V_h,\\quad Y = [\\mathrm{head}_1 \\cdots \\mathrm{head}_H]\\, W_O',
  alt:
    'Top: one causal attention map per head of a random layer. Bottom: the trained model’s ' +
    'maps per head, or a note to load a model.',
  aspect: 1.25,
  defaults: { h: 2, t: 6, c: 8, seed: 4, layer: 0, text: 'Where was Ada Lovelace born?' },
  controls: [
    {
      type: 'select',
      key: 'h',
      label: 'heads H',
      options: [
        [1, '1'],
        [2, '2'],
        [4, '4'],
        [8, '8'],
      ],
    },
    { type: 'range', key: 't', label: 'positions T', min: 2, max: 12, step: 1 },
    {
      type: 'select',
      key: 'c',
      label: 'width C',
      options: [
        [8, '8'],
        [16, '16'],
        [32, '32'],
      ],
    },
    {
      type: 'button',
      label: 'new weights',
      action: (st) => {
        st.seed += 1;
      },
    },
    { type: 'text', key: 'text', label: 'question for the trained model' },
    {
      type: 'range',
      key: 'layer',
      label: 'model layer',
      min: 0,
      max: 7,
      step: 1,
      show: (v) => String(v + 1),
      maxFrom: (r) => (r.model && r.model.layers ? r.model.layers - 1 : NaN),
    },
  ],
  async compute(engine, st) {
    const toy = await engine.demo_heads(st.t, st.c, st.h, st.seed);
    return { toy, model: await modelMaps(engine, 'vanilla', st.text) };
  },
  draw(d) {
    const { ctx, w, h } = begin(d.cv);
    const { toy } = d.res,
      t = toy.t,
      H = toy.h;
    const top = h * 0.42;
    const per = Math.min(H, 4),
      rows = Math.ceil(H / per);
    const cw = w / per,
      ch = top / rows;
    for (let k = 0; k < H; k++) {
      heatmap(
        ctx,
        { x: (k % per) * cw, y: Math.floor(k / per) * ch, w: cw - 10, h: ch - 6 },
        toy.maps_gpu.slice(k * t * t, (k + 1) * t * t),
        t,
        t,
        { title: `head ${k + 1} (cols ${(k * toy.c) / H}…${((k + 1) * toy.c) / H - 1})` },
      );
    }
    drawModelGrid(
      ctx,
      { x: 0, y: top + 10, w, h: h - top - 10 },
      d.res.model,
      d.snap.layer,
      'trained vanilla model',
    );
  },
  numbers(d) {
    const { toy, model } = d.res,
      st = d.snap,
      hs = toy.c / toy.h;
    const rows = [
      ['x', `(B, T, C) = (1, ${toy.t}, ${toy.c})`],
      ['q = x W_Qᵀ, split', `(1, ${toy.t}, ${toy.h}, ${hs}) → (1, ${toy.h}, ${toy.t}, ${hs})`],
      ['scores per head', `(1, ${toy.h}, ${toy.t}, ${toy.t})`],
      ['merged output', `(1, ${toy.t}, ${toy.c})`],
    ];
    if (d.cpu)
      rows.push(
        [`max |maps ${L.k} − ${L.ref}|`, fmt(maxAbs(toy.maps_gpu, toy.maps_cpu))],
        [`max |output ${L.k} − ${L.ref}|`, fmt(maxAbs(toy.out_gpu, toy.out_cpu))],
      );
    const m = model.missing
      ? NO_MODEL
      : model.error
        ? model.error
        : `${model.layers} layers × ${model.heads} heads on “${model.tokens.join('')}” (T = ${model.t})`;
    return (
      table(['step', 'shape'], rows) +
      `<p class="num-line">Model: ${m}` +
      `${!model.missing && !model.error && st.layer >= model.layers ? ` (showing its last layer)` : ''}</p>`
    );
  },
};

// ---------------------------------------------------------------------------------------------- E9
const E9 = {
  id: 'e9',
  num: 'E9',
  short: 'synthesizer',
  title: 'Synthesizer attention vs dot products',
  legend: 'attention weight',
  explain:
    `A synthesizer computes row i of its scores from xᵢ alone — ReLU(xᵢA + b₁)B + b₂ — with ` +
    `no dot product against
    the other positions. Move the content of position j: the dot-product head (left) changes every later row, because
    they all compare themselves with k_j; the synthesizer (right) changes only row j. It can learn where to look
    (one step back, the first token) but not “the position whose content matches mine”, which E5 needed.`,
  formula:
    'dot product: Sᵢⱼ = (xᵢW_Q)(xⱼW_K)ᵀ/√d &nbsp; · &nbsp; synthesizer: Sᵢ,: ' +
    '= ReLU(xᵢA + b₁)B + b₂',
  tex:
    '\\text{dot product: } S_{ij} = \\frac{(x_i W_Q)(x_j W_K)^\\top}{\\sqrt d} \\qquad ' +
    '\\text{synthesizer: } S_{i,:} = \\mathrm{ReLU}(x_i A + b_1) B + b_2',
  alt:
    'Two attention maps after position j was changed, each with bars of how much every row ' +
    'moved; below, the trained vanilla and synthesizer models side by side.',
  aspect: 1.3,
  defaults: {
    t: 7,
    j: 2,
    delta: 3,
    seed: 8,
    layer: 0,
    head: 0,
    text: 'Where was Ada Lovelace born?',
  },
  controls: [
    {
      type: 'range',
      key: 'j',
      label: 'change position j',
      min: 0,
      max: 15,
      step: 1,
      show: (v) => String(v + 1),
      maxFrom: (r, st) => st.t - 1,
    },
    { type: 'range', key: 'delta', label: 'by how much', min: 0, max: 6, step: 0.1 },
    { type: 'range', key: 't', label: 'positions T', min: 2, max: 16, step: 1 },
    {
      type: 'button',
      label: 'new weights',
      action: (st) => {
        st.seed += 1;
      },
    },
    { type: 'text', key: 'text', label: 'question for the trained models' },
    // The page ships a trained synthesizer but loads it only when asked (web/page/ondemand.js
    // listens for this event); the button goes once a synthesizer model is there.
    {
      type: 'button',
      label: 'load the shipped synthesizer model',
      hideFrom: (r) => !r.synth.missing,
      action: () => {
        window.dispatchEvent(new CustomEvent('attnlab-load-model', { detail: 'synth' }));
        return false;
      },
    },
    {
      type: 'range',
      key: 'layer',
      label: 'model layer',
      min: 0,
      max: 7,
      step: 1,
      show: (v) => String(v + 1),
      maxFrom: (r) => Math.max(r.vanilla.layers || 0, r.synth.layers || 0) - 1,
    },
    {
      type: 'range',
      key: 'head',
      label: 'model head',
      min: 0,
      max: 7,
      step: 1,
      show: (v) => String(v + 1),
      maxFrom: (r) => Math.max(r.vanilla.heads || 0, r.synth.heads || 0) - 1,
    },
  ],
  async compute(engine, st) {
    const j = Math.min(st.j, st.t - 1);
    const toy = await engine.demo_synth_vs_dot(st.t, j, st.delta, st.seed);
    return {
      toy,
      vanilla: await modelMaps(engine, 'vanilla', st.text),
      synth: await modelMaps(engine, 'synthesizer', st.text),
    };
  },
  draw(d) {
    const { ctx, w, h } = begin(d.cv);
    const { toy } = d.res,
      t = toy.t;
    const top = h * 0.5;
    const half = w / 2;
    const lab = Array.from({ length: t }, (_, i) => (i === toy.j ? `${i + 1}*` : String(i + 1)));
    for (const [k, name, map, ch] of [
      [0, 'dot product', toy.dot_after, toy.dot_row_change],
      [1, 'synthesizer', toy.synth_after, toy.synth_row_change],
    ]) {
      const x = k * half;
      const hm = Math.min(top, half * 0.62);
      heatmap(ctx, { x, y: 0, w: hm, h: top }, map, t, t, { title: name, rowLabels: lab });
      bars(ctx, { x: x + hm + 4, y: 0, w: half - hm - 12, h: top }, ch, {
        colors: ch.map((_, i) => (i === toy.j ? C.q : C.a)),
        labels: lab,
        title: 'Δ row',
        hi: 1,
      });
    }
    const y = top + 10,
      hh = h - y;
    drawModelGrid(
      ctx,
      { x: 0, y, w: half - 8, h: hh },
      d.res.vanilla,
      d.snap.layer,
      'vanilla',
      d.snap.head,
    );
    drawModelGrid(
      ctx,
      { x: half, y, w: half - 8, h: hh },
      d.res.synth,
      d.snap.layer,
      'synthesizer',
      d.snap.head,
      'press “load the shipped synthesizer model”, or train or load one in the Train panel.',
    );
  },
  numbers(d) {
    const { toy } = d.res;
    const rows = toy.dot_row_change.map((c, i) => [
      `row ${i + 1}${i === toy.j ? ' (changed)' : ''}`,
      fmt(c),
      fmt(toy.synth_row_change[i]),
    ]);
    let extra = '';
    if (d.cpu)
      extra =
        `<p class="num-line">synthesizer scores: max |${L.k} − ${L.ref}| ` +
        `= ${fmt(maxAbs(toy.synth_scores_gpu, toy.synth_scores_ref))}</p>`;
    return (
      table(['max |Δ weight| in', 'dot product', 'synthesizer'], rows) +
      extra +
      '<p class="num-line muted">Check: every synthesizer row other than j is unchanged to the last bit.</p>'
    );
  },
};

// --------------------------------------------------------------------------------------------- E10
const E10 = {
  id: 'e10',
  num: 'E10',
  short: 'imitation',
  title: 'What one self-attention layer can imitate',
  legend: 'attention weight',
  explain:
    `Give each position a one-hot positional code and let the query read it: query t = ` +
    `λ·e_src(t) matches exactly one
    key, so each position copies the value of a fixed other position. Source = itself is the identity; a shuffled
    source is a permutation; the identity pattern followed by the value/output matrices is a position-wise linear layer;
    and H heads with offsets −1, 0, +1 … are a convolution of width H (each head one ` +
    `tap). Lower λ and the copies blur.`,
  formula:
    'head_h(t) = Σⱼ softmax_j(λ·[j = src_h(t)]) W_h xⱼ ≈ W_h x[src_h(t)], &nbsp; y_t = Σ_h head_h(t)',
  tex:
    '\\mathrm{head}_h(t) = \\sum_j \\operatorname{softmax}_j\\big(\\lambda\\,[\\,j = ' +
    '\\mathrm{src}_h(t)\\,]\\big)\\, W_h x_j \\approx W_h x_{\\mathrm{src}_h(t)},\\quad y_t ' +
    '= \\sum_h \\mathrm{head}_h(t)',
  alt:
    'Top: the attention matrix of each head. Bottom: the two input channels as grey bars, ' +
    'the outputs as coloured bars, with the exact layer’s output marked.',
  aspect: 1.4,
  defaults: { kind: 'conv', width: 3, t: 8, lambda: 20, seed: 12 },
  controls: [
    {
      type: 'select',
      key: 'kind',
      label: 'imitate',
      options: [
        ['identity', 'identity'],
        ['permutation', 'a permutation'],
        ['linear', 'a position-wise linear layer'],
        ['conv', 'a convolution'],
      ],
    },
    {
      type: 'range',
      key: 'width',
      label: 'kernel width (heads)',
      min: 1,
      max: 5,
      step: 1,
      inactive: (st) => (st.kind === 'conv' ? '' : 'only a convolution has a kernel width'),
    },
    { type: 'range', key: 'lambda', label: 'sharpness λ', min: 0, max: 30, step: 0.5 },
    { type: 'range', key: 't', label: 'positions T', min: 3, max: 12, step: 1 },
    {
      type: 'button',
      label: 'new input',
      action: (st) => {
        st.seed += 1;
      },
    },
  ],
  compute: (engine, st) => engine.demo_imitate(st.kind, st.width, st.t, st.lambda, st.seed),
  draw(d) {
    const { ctx, w, h } = begin(d.cv);
    const r = d.res,
      t = r.t,
      H = r.heads;
    const top = h * 0.45;
    const cw = w / Math.max(H, 2);
    for (let k = 0; k < H; k++) {
      heatmap(
        ctx,
        { x: k * cw, y: 0, w: cw - 8, h: top },
        r.dev.alpha.slice(k * t * t, (k + 1) * t * t),
        t,
        t,
        {
          title:
            H > 1
              ? headTitle(ctx, k, k - Math.floor((H - 1) / 2), cw - 8, H)
              : 'attention (row = output position)',
        },
      );
    }
    const ch = (h - top - 8) / 2;
    for (let c = 0; c < 2; c++) {
      const y = top + 8 + c * ch;
      const inp = Array.from({ length: t }, (_, i) => r.input[i * 2 + c]);
      const out = Array.from({ length: t }, (_, i) => r.dev.out[i * 2 + c]);
      const tgt = Array.from({ length: t }, (_, i) => (d.cpu ? r.cpu.out : r.target)[i * 2 + c]);
      const lim = Math.max(1, ...inp.map(Math.abs), ...out.map(Math.abs), ...tgt.map(Math.abs));
      bars(ctx, { x: 0, y, w: w / 2 - 8, h: ch - 4 }, inp, {
        lo: -lim,
        hi: lim,
        colors: '#9aa7b8',
        labels: inp.map((_, i) => String(i + 1)),
        title: `input, channel ${c + 1}`,
      });
      bars(ctx, { x: w / 2, y, w: w / 2 - 8, h: ch - 4 }, out, {
        lo: -lim,
        hi: lim,
        colors: OKABE[4 + c * 1],
        labels: out.map((_, i) => String(i + 1)),
        title: `output, channel ${c + 1}${d.cpu ? ` (marks: ${L.ref})` : ' (marks: exact layer)'}`,
        marks: tgt,
      });
    }
  },
  numbers(d) {
    const r = d.res;
    const taps = Array.from(
      { length: r.heads },
      (_, k) =>
        `W${r.heads > 1 ? k + 1 : ''} = [${r.w
          .slice(4 * k, 4 * k + 4)
          .map((x) => x.toFixed(2))
          .join(', ')}]`,
    );
    const rows = [
      ['max |out − exact|', fmt(maxAbs(r.dev.out, r.target))],
      ['heads', String(r.heads)],
    ];
    if (d.cpu) rows.push([`max |${L.k} − ${L.ref}|`, fmt(maxAbs(r.dev.out, r.cpu.out))]);
    return (
      table(['', 'value'], rows) +
      `<p class="num-line">value maps W (2×2, row-major):<br><code>${taps.join('<br>')}</code></p>` +
      '<p class="num-line muted">The width slider only matters for the convolution. At λ = 20 ' +
      'every layer matches to 10⁻⁴.</p>'
    );
  },
};

export const LAYER_ITEMS = [E7, E8, E9, E10];
