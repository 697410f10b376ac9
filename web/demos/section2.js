// The handout's section 2 as three demos (#s2a, #s2b, #s2c) beside E1–E10: what pretraining gives a
// finetuned model, whether an answer was retrieved or made up, and what the model answers for names
// it never saw. The numbers come from src/train/section2.rs through the s2_* exports
// (src/wasm/section2.rs); the models are the page's: its current vanilla model (the shipped one at
// first, or the course model), a model finetuned without pretraining (the shipped one, or a file),
// and a pretrained-only model when the page has one (the shipped builtin-pretrained.* when present,
// a Pretrain run here, or a file loaded in S2a). The people asked about are those of the text the
// vanilla model was trained on: the Data card's files (the course's, served, picked or dropped)
// when its vocabulary is theirs, else the built-in corpus's.
import { C, OKABE, begin, bars, fitText, fmt, table, wrapLines } from './draw.js';
import { esc } from '../page/ui.js';
import { S, data } from '../page/core.js';

// A table that scrolls inside its card: focusable and named, so the keyboard can scroll it and a
// screen reader says what it holds (axe: scrollable-region-focusable).
const scrollBox = (label, inner) =>
  `<div class="s2-scroll" tabindex="0" role="region" aria-label="${esc(label)} (scrolls)">${inner}</div>`;
const pct = (a, b) => (b ? `${((100 * a) / b).toFixed(1)}%` : '—');
const nameOf = (q) => q.replace(/^Where was /, '').replace(/ born\?$/, '');
const NO_PRETRAINED = `No pretrained-only model of this text here yet, so there is no probe column. Get one by pressing
  <b>Pretrain</b> in the Train card (its model is kept for this demo when the run ends), or load a pretrained
  checkpoint above (<code>attnlab pretrain … --writing_params_path</code>, or the course's <code>.params</code>).
  The finetuned model cannot stand in for it: finetuning changed what it answers.`;
// The text's dev file, for the cards' lines ("the 500 dev questions of birth_dev.tsv").
const devOf = (models) =>
  models.data && !models.data.builtin ? models.data.dev : 'the built-in dev set';
const sourceLine = (models, n) => {
  const all = models.data && models.data.people === n ? 'all ' : '';
  const bios =
    models.data && !models.data.builtin ? `; their biographies from ${esc(models.data.wiki)}` : '';
  return (
    `<p class="num-line muted" data-s2="source">People: ${all}${n} dev question${n === 1 ? '' : 's'} ` +
    `of ${esc(devOf(models))}${bios}.</p>`
  );
};

// How many dev people S2a and S2b ask: all of them (0), or on a software adapter (SwiftShader, many
// times slower than a GPU or the CPU backend) the first SOFTWARE_PEOPLE, and the cards say so.
const SOFTWARE_PEOPLE = 24;
let people = 0;
export function setSoftware(software) {
  people = software ? SOFTWARE_PEOPLE : 0;
}
const peopleNote = (models) => {
  const all = models && models.data ? models.data.people : 136;
  if (!people || all <= people) return '';
  return (
    `<p class="muted small">On this software adapter the first ${people} dev people only (all of them would ` +
    `take minutes); the CPU backend or a GPU asks all ${all}.</p>`
  );
};

// The Data card's files (web/page/data.js) as the engine's candidate text: sent when they change.
let sentData = null;
async function syncData(engine) {
  const { wiki, train, dev } = data;
  if (!wiki || !train || !dev) return;
  if (sentData && sentData.wiki === wiki && sentData.train === train && sentData.dev === dev)
    return;
  await engine.s2_set_data(wiki.name, wiki.text, train.name, train.text, dev.name, dev.text);
  sentData = { wiki, train, dev };
}

// The demos' models changed (a run finished, a file was loaded): cached results are stale.
let generation = 0;
export function modelsChanged() {
  generation += 1;
}

// Computed only once the card is on screen (each asks a model ~136 questions), then cached until
// the models change.
function whenVisible(d) {
  // No f64 reference here: the numbers are a model's answers, not a kernel's.
  d.el.querySelector('.demo-cpu').style.display = 'none';
  const io = new IntersectionObserver((es) => {
    if (es.some((e) => e.isIntersecting) && !d.seen) {
      d.seen = true;
      io.disconnect();
      window.attnlabDemos.rerun(d.item.id);
    }
  });
  io.observe(d.el);
}

async function cached(d, key, f) {
  if (!d.cache || d.cache.gen !== generation || d.cache.key !== key)
    d.cache = { gen: generation, key, value: await f() };
  return d.cache.value;
}

const waiting = (d) => {
  const { ctx, w } = begin(d.cv);
  ctx.fillStyle = '#5b6673';
  ctx.textAlign = 'left';
  // The reason itself is in the card's text (waitingNote), beside or below; a recompute that has
  // its model says so (web/demos.js draws the card again when one starts).
  const text =
    d.busy && d.seen && !d.res.loading && !d.res.error
      ? 'Computing…'
      : d.res.loading
        ? 'Waiting for the page’s vanilla model, which loads with the page…'
        : d.res.error
          ? 'Not computed: the note of this card says why.'
          : 'Computed when this card comes into view…';
  ctx.fillText(text, 8, 20, w - 16);
};

// Why a card waits, in the page's text as well as on its canvas (read aloud, found by search).
const waitingNote = (d) =>
  d.res.error ? `<p class="num-line" data-s2="waiting">${esc(d.res.error)}</p>` : '';

// The page's vanilla model may still be loading (the shipped one comes with the page), or be only
// pretrained: then the card waits, saying why, and runs again when the models change.
async function needFinetuned(engine) {
  await syncData(engine);
  const m = await engine.s2_models();
  if (m.finetuned) return null;
  // The engine says why the current vanilla model cannot be compared (only pretrained, or a model of
  // another text such as the course's); without one, the shipped model is on its way.
  if (m.finetuned_why)
    return {
      waiting: true,
      error: `${m.finetuned_why[0].toUpperCase()}${m.finetuned_why.slice(1)}.`,
    };
  return {
    waiting: true,
    loading: true,
    error: 'Waiting for a vanilla model (the shipped one loads with the page)…',
  };
}

// The shipped model finetuned without pretraining, loaded into the demos' store when the demos ask
// about the built-in people and hold no such model of them.
async function ensureNoPretrain(engine) {
  const m = await engine.s2_models();
  if (m.no_pretrain || !m.data || !m.data.builtin) return;
  const r = await fetch(new URL('../models/builtin-nopretrain.safetensors', import.meta.url));
  if (!r.ok)
    throw new Error(
      `the shipped model without pretraining could not be fetched (HTTP ${r.status})`,
    );
  await engine.s2_load(
    'nopretrain',
    new Uint8Array(await r.arrayBuffer()),
    'shipped model without pretraining',
  );
}

// The shipped pretrained-only model of the built-in corpus (the shipped model before finetuning),
// for S2a's probe on a first visit: loaded when the demos ask about the built-in people and hold
// no pretrained-only model of them. The shipped model's facts name it (`pretrained_only`: a file
// name in web/models/, without extension), so a page that ships none asks for nothing; a failed
// load is said in S2a's note.
let shippedPretrained = 'unknown'; // 'unknown' | 'absent' | 'loaded' | an error message
async function ensurePretrained(engine) {
  const m = await engine.s2_models();
  if (
    m.pretrained ||
    !m.data ||
    !m.data.builtin ||
    !['unknown', 'loaded'].includes(shippedPretrained)
  )
    return;
  const shipped = S.shipped && S.shipped.facts;
  if (!shipped) return; // not read yet: asked again at the next compute
  const name = shipped.pretrained_only;
  if (typeof name !== 'string' || !/^[a-z0-9-]+$/.test(name)) {
    shippedPretrained = 'absent';
    return;
  }
  try {
    const f = await fetch(new URL(`../models/${name}.json`, import.meta.url));
    if (!f.ok) throw new Error(`${name}.json: HTTP ${f.status}`);
    const facts = await f.json();
    const r = await fetch(new URL(`../models/${name}.safetensors`, import.meta.url));
    if (!r.ok) throw new Error(`HTTP ${r.status}`);
    const label = facts.label || 'shipped pretrained-only model';
    await engine.s2_load('pretrained', new Uint8Array(await r.arrayBuffer()), label);
    shippedPretrained = 'loaded';
  } catch (e) {
    shippedPretrained = `the shipped pretrained-only model could not be loaded (${(e && e.message) || e})`;
  }
}

// The CLI's count without pretraining for the course model (its facts file, read by the Models
// card: window.__page.course), when it is the finetuned model and no such model is here to ask.
function knownWithout(models) {
  const f = window.__page && window.__page.course && window.__page.course.facts;
  return f && f.label === models.finetuned && f.no_pretraining ? f.no_pretraining : null;
}

// ---------------------------------------------------------------------------------------------- S2a
const S2A = {
  id: 's2a',
  num: 'S2a',
  short: 'pretrained or not',
  title: 'What does pretraining give the finetuned model?',
  usesModels: true,
  explain: `Two models of the same size were finetuned on the same questions; only one of them first read the
    biographies (span-corruption pretraining). Here both answer the dev questions of the text the page's vanilla model
    was trained on (the built-in corpus, or the course files loaded in the Data card with the course model). Look at
    how many each gets
    right, and at <i>which</i> people: the pretrained one can only know a birthplace it stored while reading. With a
    pretrained-only model on the page, the probe asks it to fill each person's masked birthplace in their own
    biography; the table then shows whether the right answers after finetuning are the people it had stored.`,
  formula: 'accuracy = right / dev questions · probe: fill the masked birthplace',
  alt: 'Bars: dev accuracy with and without pretraining, and the probe recall when a pretrained model is loaded.',
  aspect: 2.2,
  defaults: {},
  controls: [],
  attach(d) {
    whenVisible(d);
    const file = (role, id, label) => {
      const box = document.createElement('div');
      box.className = 'ctl';
      box.innerHTML = `<label>${label}<br><input type="file" accept=".safetensors,.params,.pt" id="${id}"></label>`;
      d.el.querySelector('.demo-controls').appendChild(box);
      box.querySelector('input').addEventListener('change', async (e) => {
        const f = e.target.files[0];
        if (!f) return;
        delete d.status.dataset.keep;
        d.status.textContent = `Loading ${f.name}…`;
        d.status.classList.remove('demo-error');
        try {
          await window.attnlabDemos.s2Load(role, new Uint8Array(await f.arrayBuffer()), f.name);
        } catch (err) {
          d.status.textContent = `Could not load ${f.name}: ${err.message || err}`;
          d.status.classList.add('demo-error');
          // Kept while the card recomputes (a recompute that ends after this would clear it).
          d.status.dataset.keep = '1';
        }
        e.target.value = '';
      });
    };
    file(
      'pretrained',
      's2a-file',
      'Pretrained-only model for the probe (one saved after Pretrain, before Finetune)',
    );
    file(
      'nopretrain',
      's2a-nopretrain-file',
      'Model finetuned without pretraining (optional: the shipped one answers for the built-in people)',
    );
  },
  async compute(engine, st, d) {
    if (!d.seen) return { waiting: true };
    const wait = await needFinetuned(engine);
    if (wait) return wait;
    await ensureNoPretrain(engine);
    await ensurePretrained(engine);
    const models = await engine.s2_models();
    return cached(d, JSON.stringify(models), async () => ({
      models,
      c: await engine.s2_compare(people),
    }));
  },
  draw(d) {
    if (d.res.waiting) return waiting(d);
    const { ctx, w, h } = begin(d.cv);
    const { c } = d.res;
    const known = c.without_model ? null : knownWithout(d.res.models);
    const vals = [c.with_correct / c.total];
    const labels = ['with pretraining'];
    const colors = [C.a];
    if (c.without_model || known) {
      vals.push(known ? known.correct / known.total : c.without_correct / c.total);
      labels.push(known ? 'without (CLI)' : 'without');
      colors.push(C.b);
    }
    if (c.probe) {
      vals.push(c.probe.recalled / Math.max(1, c.probe.asked));
      labels.push('probe recall');
      colors.push(C.mid);
    }
    const hi = Math.max(0.25, ...vals) * 1.15;
    bars(ctx, { x: 8, y: 0, w: w - 16, h }, vals, {
      lo: 0,
      hi,
      colors,
      labels,
      title: 'share of the dev people',
    });
    // Each share just above its bar (bars() spans y 16 … h − 16).
    ctx.fillStyle = '#1d232b';
    ctx.textAlign = 'center';
    const bw = (w - 16) / vals.length;
    vals.forEach((v, i) =>
      ctx.fillText(
        `${(100 * v).toFixed(1)}%`,
        8 + (i + 0.5) * bw,
        Math.max(26, h - 16 - (v / hi) * (h - 32) - 8),
      ),
    );
  },
  numbers(d) {
    if (d.res.waiting) return waitingNote(d);
    const { c, models } = d.res;
    const known = c.without_model ? null : knownWithout(models);
    const without = c.without_model
      ? [
          `without <span class="muted">(${esc(models.no_pretrain || '')})</span>`,
          `<span data-s2="without">${c.without_correct}</span> (${pct(c.without_correct, c.total)})`,
        ]
      : [
          `without <span class="muted">(${known ? 'measured by the CLI; ' : ''}no such model of this text here)</span>`,
          known
            ? `<span data-s2="without-known">${known.correct}</span> (${pct(known.correct, known.total)})`
            : '—',
        ];
    let html =
      sourceLine(models, c.total) +
      peopleNote(models) +
      table(
        ['model', 'right of ' + c.total],
        [
          [
            `with pretraining <span class="muted">(${esc(models.finetuned || '')})</span>`,
            `<span data-s2="with">${c.with_correct}</span> (${pct(c.with_correct, c.total)})`,
          ],
          without,
        ],
      );
    if (!c.without_model) {
      const on = models.data && !models.data.builtin ? models.data.train : 'the built-in questions';
      html +=
        `<p class="num-line muted" data-s2="no-without">To compare person by person, load a model finetuned on ` +
        `${esc(on)} without pretraining (<code>attnlab finetune vanilla … --writing_params_path</code> without ` +
        '<code>--reading_params_path</code>) in the field above.</p>';
    }
    if (c.probe) {
      const t = c.probe.table;
      html +=
        `<p class="num-line">Probe of <i>${esc(models.pretrained)}</i>: ${esc(c.probe.line)}</p>` +
        table(
          ['stored in pretraining ↓ · answered after finetuning →', 'right', 'wrong'],
          [
            ['stored (probe filled the place)', t[0][0], t[0][1]],
            ['not stored', t[1][0], t[1][1]],
          ],
          's2-table',
        );
    } else {
      const other = models.pretrained_other
        ? ` (The pretrained-only model here, <i>${esc(models.pretrained_other)}</i>, read another text.)`
        : '';
      const failed = ['unknown', 'absent', 'loaded'].includes(shippedPretrained)
        ? ''
        : ` (${esc(shippedPretrained)}.)`;
      html += `<p class="num-line s2-noprobe">${NO_PRETRAINED}${other}${failed}</p>`;
    }
    const mark = (a, gold) =>
      a === gold ? `<b>${esc(a)}</b> ✓` : esc(a) || '<span class="muted">(empty)</span>';
    const rows = c.rows.map((r) =>
      [esc(nameOf(r.question)), esc(r.gold), mark(r.with_pretraining, r.gold)]
        .concat(c.without_model ? [mark(r.without, r.gold)] : [])
        .concat(c.probe ? [r.stored == null ? '—' : r.stored ? 'stored' : 'no'] : []),
    );
    const heads = ['person', 'born in', 'with'].concat(
      c.without_model ? ['without'] : [],
      c.probe ? ['probe'] : [],
    );
    html += scrollBox('the dev people’s answers with and without pretraining', table(heads, rows));
    const look = c.probe
      ? 'Look for: the right answers with pretraining are people whose birthplace the ' +
        'pretrained model had stored (top-left cell); without pretraining a right answer is a ' +
        'lucky common place.'
      : 'Look for: who gets a ✓ with pretraining and who without; without pretraining a right ' +
        'answer is a lucky common place. A pretrained-only model adds a probe column: whether ' +
        'each was stored.';
    return html + `<p class="num-line muted">${look}</p>`;
  },
};

// ---------------------------------------------------------------------------------------------- S2b
const S2B = {
  id: 's2b',
  num: 'S2b',
  short: 'retrieved or made up',
  title: 'Retrieved or made up: can you tell from the answer?',
  usesModels: true,
  explain: `The finetuned model answers every question in the same fluent way, whether it read that person's
    birthplace during pretraining or is guessing a common place. Its own confidence is one clue: the probability it
    gave each character of its greedy answer. Compare the confidence of right and wrong answers below: if the two
    histograms overlap, the answer alone cannot tell you whether to trust it. Pick an answer to see the evidence —
    the person's biography, which pretraining read, and whether a pretrained model recalls the place.`,
  formula: 'confidence = Π p(cᵢ | prompt, c₁…cᵢ₋₁) over the answer’s characters',
  tex: '\\text{confidence} = \\prod_i p\\big(c_i \\mid \\text{prompt}, c_1 \\dots c_{i-1}\\big)',
  alt: 'Two histograms side by side: the confidence of right answers and of wrong answers.',
  aspect: 2.2,
  defaults: { pick: 0 },
  controls: [],
  attach(d, changed) {
    whenVisible(d);
    d.numbers.addEventListener('click', (e) => {
      const b = e.target.closest('button[data-pick]');
      if (!b) return;
      d.st.pick = Number(b.dataset.pick);
      changed();
    });
    // The list is one Tab stop: up and down (Home, End) move between the people; Enter picks.
    d.numbers.addEventListener('keydown', (e) => {
      const b = e.target.closest('button[data-pick]');
      if (!b) return;
      const all = [...d.numbers.querySelectorAll('button[data-pick]')];
      const k = all.indexOf(b);
      const to = { ArrowDown: k + 1, ArrowUp: k - 1, Home: 0, End: all.length - 1 }[e.key];
      if (to === undefined || !all[to]) return;
      e.preventDefault();
      b.tabIndex = -1;
      all[to].tabIndex = 0;
      all[to].focus();
    });
  },
  async compute(engine, st, d) {
    if (!d.seen) return { waiting: true };
    const wait = await needFinetuned(engine);
    if (wait) return wait;
    await ensurePretrained(engine);
    const models = await engine.s2_models();
    const conf = await cached(d, JSON.stringify(models), () => engine.s2_confidence(10, people));
    const order = conf.answers
      .map((_, i) => i)
      .sort((a, b) => conf.answers[b].confidence - conf.answers[a].confidence);
    const pick = order[Math.min(st.pick, order.length - 1)];
    const evidence =
      pick === undefined ? null : await engine.s2_evidence(conf.answers[pick].question);
    return { conf, order, pick, evidence, models };
  },
  draw(d) {
    if (d.res.waiting) return waiting(d);
    const { ctx, w, h } = begin(d.cv);
    const hs = d.res.conf.histogram;
    const nr = hs.right.reduce((a, b) => a + b, 0),
      nw = hs.wrong.reduce((a, b) => a + b, 0);
    const fr = hs.right.map((v) => v / Math.max(1, nr)),
      fw = hs.wrong.map((v) => v / Math.max(1, nw));
    const hi = Math.max(0.1, ...fr, ...fw) * 1.1;
    const labels = hs.right.map((_, i) => (i % 2 ? '' : (i / hs.right.length).toFixed(1)));
    const half = (w - 24) / 2;
    // Each panel is the share of its own answers in each bin (the two counts differ a lot), on one scale.
    bars(ctx, { x: 4, y: 0, w: half, h }, fr, {
      lo: 0,
      hi,
      colors: C.a,
      labels,
      title: `${nr} right (share per confidence bin)`,
    });
    bars(ctx, { x: half + 20, y: 0, w: half, h }, fw, {
      lo: 0,
      hi,
      colors: C.b,
      labels,
      title: `${nw} wrong (share per confidence bin)`,
    });
  },
  numbers(d) {
    if (d.res.waiting) return waitingNote(d);
    const { conf, order, pick, evidence, models } = d.res;
    const a = conf.answers;
    const mean = (ok) => {
      const xs = a.filter((x) => x.right === ok).map((x) => x.confidence);
      return xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : NaN;
    };
    const sep = conf.histogram.separation;
    let html =
      sourceLine(models, a.length + conf.skipped) +
      peopleNote(models) +
      table(
        ['', 'value'],
        [
          ['mean confidence, right answers', fmt(mean(true), 3)],
          ['mean confidence, wrong answers', fmt(mean(false), 3)],
          [
            'a right answer is more confident than a wrong one',
            `<span data-s2="separation">${sep == null ? '—' : (100 * sep).toFixed(0) + '%'}</span> of pairs`,
          ],
        ],
      ) +
      `<p class="num-line muted">50% would mean confidence says nothing; 100% that a ` +
      `threshold separates them perfectly.` +
      `${conf.skipped ? ` ${conf.skipped} questions use characters this model lacks and were not asked.` : ''}</p>`;
    if (evidence && pick !== undefined) {
      const x = a[pick];
      const doc = evidence.document
        ? esc(evidence.document).replace(esc(x.gold), `<mark>${esc(x.gold)}</mark>`)
        : `<span class="muted">no biography of this person in ${esc(
            models.data && !models.data.builtin ? models.data.wiki : 'the built-in corpus',
          )}</span>`;
      const probe =
        evidence.pretrained == null
          ? 'no pretrained-only model here (Pretrain in the Train card, or load one in S2a)'
          : evidence.recalled == null
            ? `not probed (the place is not in the part of the biography pretraining shows)`
            : evidence.recalled
              ? `recalled by ${esc(evidence.pretrained)}`
              : `not recalled by ${esc(evidence.pretrained)}`;
      html +=
        `<div class="s2-evidence" data-s2="evidence"><p><b>${esc(evidence.name)}</b>: answered ` +
        `<b>${esc(x.scored.prediction)}</b> ${x.right ? '✓' : `✗ (born in ${esc(x.gold)})`}, ` +
        `confidence ${fmt(x.confidence, 3)};
        per character ${x.scored.probs.map((p) => p.toFixed(2)).join(' · ')}</p>
        <p class="s2-doc">${doc}</p><p>Probe: ${probe}</p></div>`;
    }
    // One Tab stop for the list (the person picked; the arrows move between them), the picked one marked.
    const at = Math.min(d.snap.pick || 0, order.length - 1);
    const rows = order.map((i, k) => [
      `<button type="button" class="linkish" data-pick="${k}" ` +
        `tabindex="${k === at ? 0 : -1}"${k === at ? ' aria-current="true"' : ''}>` +
        `${esc(nameOf(a[i].question))}</button>`,
      `${esc(a[i].scored.prediction)} ${a[i].right ? '✓' : '✗'}`,
      fmt(a[i].confidence, 3),
    ]);
    return (
      html +
      scrollBox(
        'the people to pick from, with the answer and its confidence',
        table(['person (pick one)', 'answer', 'confidence'], rows),
      )
    );
  },
};

// ---------------------------------------------------------------------------------------------- S2c
// Plain letters only: the shipped model's vocabulary (the built-in corpus's characters) has no
// accented ones, and a default it refused would greet the student with an error.
export const DEFAULT_TYPED = 'Ada Kowalski, Zoe Bronte';
const S2C = {
  id: 's2c',
  num: 'S2c',
  short: 'unseen names',
  title: 'Names the model never saw',
  usesModels: true,
  explain: `Ask about people who do not exist: names made by the same generator as the built-in corpus's people
    (none of them in the model's text), and names you type. The model still answers, with a place. In the built-in
    corpus a name says nothing about the birthplace (they are drawn independently), so any strategy it shows is its
    own; in the course's real biographies a name can hint at a country. The chart puts
    its answers, grouped by the name's surname ending, beside the training file's answers for the same groups: look
    for one or two places taking most of the answers whatever the name, or an ending it ties to a place.`,
  formula:
    'answers(name) grouped by surname ending &nbsp; vs &nbsp; training answers by the same ending',
  alt:
    'For each surname ending, two stacked bars: the shares of places among the model’s ' +
    'answers and among the training answers.',
  aspect: 1.3,
  defaults: { count: 60, seed: 1, typed: DEFAULT_TYPED },
  controls: [
    { type: 'range', key: 'count', label: 'invented names', min: 20, max: 200, step: 20 },
    {
      type: 'button',
      label: 'new names',
      action: (st) => {
        st.seed += 1;
      },
    },
    { type: 'text', key: 'typed', label: 'your names (comma-separated)' },
  ],
  attach: (d) => whenVisible(d),
  async compute(engine, st, d) {
    if (!d.seen) return { waiting: true };
    const wait = await needFinetuned(engine);
    if (wait) return wait;
    return {
      u: await engine.s2_unseen(st.count, st.seed, st.typed),
      models: await engine.s2_models(),
    };
  },
  draw(d) {
    if (d.res.waiting) return waiting(d);
    const { ctx, w, h } = begin(d.cv);
    const { groups, train_groups: tg } = d.res.u;
    // The places coloured: the model's six most common answers; the rest grey.
    const total = new Map();
    for (const g of groups) for (const [p, n] of g.counts) total.set(p, (total.get(p) || 0) + n);
    const top = [...total.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 6)
      .map(([p]) => p);
    const colour = (p) => (top.includes(p) ? OKABE[top.indexOf(p) % OKABE.length] : '#c8cdd3');
    // The legend wraps onto as many lines as the width needs (every coloured place named); the row
    // labels get the width of the widest (at most a third of the chart, cut with an ellipsis past it).
    ctx.textAlign = 'left';
    const lineH = 16;
    let lx = 0,
      ly = 0;
    const legend = top.map((p) => {
      const t = p || '(empty)',
        ww = 14 + ctx.measureText(t).width;
      if (lx > 0 && lx + ww > w) {
        lx = 0;
        ly += lineH;
      }
      const at = { t, p, x: lx, y: ly };
      lx += ww + 8;
      return at;
    });
    for (const l of legend) {
      ctx.fillStyle = colour(l.p);
      ctx.fillRect(l.x, l.y + 6, 10, 10);
      ctx.fillStyle = '#1d232b';
      ctx.fillText(l.t, l.x + 14, l.y + 11);
    }
    const legendH = ly + 22;
    const keys = groups.map((g) => `${g.key} (${g.n})`);
    const labW = Math.min(w / 3, 8 + Math.max(0, ...keys.map((k) => ctx.measureText(k).width)));
    const caption = wrapLines(
      ctx,
      'each ending: model’s answers (thick), training answers (thin)',
      w,
    );
    const captionH = caption.length * 13 + 4;
    const rowH = (h - legendH - 8 - captionH) / Math.max(1, groups.length);
    const barW = w - labW - 8;
    const stack = (counts, n, y, bh) => {
      let x = labW;
      for (const [p, k] of counts) {
        const ww = (barW * k) / Math.max(1, n);
        ctx.fillStyle = colour(p);
        ctx.fillRect(x, y, ww, bh);
        x += ww;
      }
    };
    groups.forEach((g, i) => {
      const y = legendH + 8 + i * rowH;
      const t = tg.find((x) => x.key === g.key);
      ctx.fillStyle = '#1d232b';
      ctx.textAlign = 'right';
      ctx.fillText(fitText(ctx, keys[i], labW - 6), labW - 6, y + rowH * 0.3);
      const bh = Math.max(2, rowH * 0.36);
      stack(g.counts, g.n, y + rowH * 0.08, bh);
      if (t) stack(t.counts, t.n, y + rowH * 0.08 + bh + 1, bh * 0.7);
    });
    ctx.fillStyle = '#5b6673';
    ctx.textAlign = 'left';
    caption.forEach((line, i) => ctx.fillText(line, 0, h - 6 - (caption.length - 1 - i) * 13));
  },
  numbers(d) {
    if (d.res.waiting) return waitingNote(d);
    const { invented, typed, groups, train_groups: tg } = d.res.u;
    const { models } = d.res;
    const count = (list) => {
      const m = new Map();
      for (const g of list) for (const [p, n] of g.counts) m.set(p, (m.get(p) || 0) + n);
      return [...m.entries()].sort((a, b) => b[1] - a[1]);
    };
    const mine = count(groups),
      train = count(tg);
    const n = invented.length,
      nt = tg.reduce((s, g) => s + g.n, 0);
    const trainName =
      models.data && !models.data.builtin ? models.data.train : 'the built-in training set';
    let html =
      `<p class="num-line muted" data-s2="source">Model: ${esc(models.finetuned || '')}; ` +
      `training answers from ${esc(trainName)}.</p>` +
      table(
        ['', 'model on invented names', 'training answers'],
        [
          [
            'most common answer',
            `<span data-s2="top">${esc(mine[0] ? mine[0][0] : '—')}</span> ${mine[0] ? pct(mine[0][1], n) : ''}`,
            `${esc(train[0][0])} ${pct(train[0][1], nt)}`,
          ],
          [
            'different places',
            `<span data-s2="distinct">${mine.length}</span> in ${n} answers`,
            `${train.length} in ${nt}`,
          ],
        ],
      );
    if (typed.length) {
      const short = (n) => ([...n].length > 28 ? `${[...n].slice(0, 27).join('')}…` : n);
      html += table(
        ['your name', 'answer'],
        typed.map((t) => [
          esc(short(t.name)),
          t.refused
            ? `<span class="s2-refused">not asked: ${esc(t.refused)}</span>`
            : `${esc(t.answer)} <span class="muted">(${fmt(t.confidence, 3)}, ${esc(t.group)})</span>`,
        ]),
        's2-typed',
      );
    }
    html += scrollBox(
      'the invented names and their answers',
      table(
        ['invented name', 'ending', 'answer'],
        invented.map((u) => [esc(u.name), esc(u.group), esc(u.answer)]),
      ),
    );
    return html;
  },
};

export const S2_ITEMS = [S2A, S2B, S2C];
