// The Ask card: one question to every model, the answers and their attention maps.
import { $, P, S, data, job, setStatus } from './core.js';
import { errText, esc, pctOf, showBox, showPred } from './ui.js';
import { MIN_CELL, cellAt, drawLegend, drawMap, drawThumb, markCell } from './heatmap.js';
import { builtinDev, builtinPerson, goldFor } from './data.js';
import { askable } from './models.js';
import { loadOnDemand, offeredInAsk } from './ondemand.js';
import { SHIPPED_LABEL, exampleNames } from './shipped.js';
import { on } from './events.js';

// Ask

// A name clicked in the evaluation's table while a question is being answered: asked as soon as
// that answer is shown (whatever the box then holds, the name or what was typed over it).
let askAgain = false;

export async function ask() {
  const text = $('ask-text').value;
  showBox('ask-error', null);
  S.askError = null;
  // Every model: each variant's current one and the one kept beside it for comparison (by slot:
  // "vanilla", "vanilla:kept"), each answer headed by its variant and where it came from.
  const models = askable();
  if (!models.length) {
    showBox('ask-error', '<p>There is no model yet; train one or load a checkpoint.</p>');
    return;
  }
  $('btn-ask').disabled = true;
  const out = {};
  const errs = [];
  for (const m of models) {
    try {
      out[m.slot] = { ...(await job('ask', () => P.engine.ask(m.slot, text))), model: m };
    } catch (e) {
      errs.push([m.slot.replace(':kept', ', kept'), errText(e)]);
    }
  }
  S.ask = out;
  // Said to a screen reader in one line (the maps below are read cell by cell from the keyboard).
  $('ask-live').textContent = Object.values(out)
    .map((a) => `${a.model.variant}${a.model.kept ? ', kept' : ''}: ${a.prediction || 'no answer'}`)
    .join('; ');
  if (errs.length) {
    const msgs = askErrors(errs);
    S.askError = msgs.join('\n');
    showBox('ask-error', msgs.map((m) => `<p>${esc(m)}</p>`).join(''));
  }
  await showAnswers(out);
  setStatus(S.status);
  if (askAgain && !$('btn-ask').disabled) {
    askAgain = false;
    await ask();
    return;
  }
  bringAnswer();
}

// The answer where the eye is: the page scrolls the least that shows the answers (their tops
// first, where they are taller than the window), and focus moves to the first answer's heading, so
// a screen reader reads it and the keyboard goes on from there. Without answers, the error box.
export function bringAnswer() {
  const target = $('ask-result').querySelector('.ask-col') ? $('ask-result') : $('ask-error');
  if (target.hidden) return;
  const r = target.getBoundingClientRect();
  const margin = 8;
  const top = r.top - margin;
  const below = r.bottom + margin - window.innerHeight;
  const dy = top < 0 ? top : below > 0 ? Math.min(below, top) : 0;
  const smooth = !window.matchMedia('(prefers-reduced-motion: reduce)').matches;
  if (dy) window.scrollBy({ top: dy, behavior: smooth ? 'smooth' : 'auto' });
  const head = target.querySelector('.ask-col h3');
  if (head) head.focus({ preventScroll: true });
}

// The library names a character the vocabulary lacks as `character 'é' (U+00E9) at column …`.
const OOV = /character (.+?) \(U\+([0-9A-F]{4,6})\) at (?:line|column)/;

// One message per distinct error: a character no model knows is named once ("“é” (U+00E9) is not
// a character the models know …"); errors that differ between the models are given per model.
export function askErrors(errs) {
  const oov = errs.map(([v, m]) => [v, m, m.match(OOV)]);
  const chars = [...new Set(oov.map(([, , o]) => (o ? o[2] : null)))];
  if (chars.length === 1 && chars[0] !== null) {
    const ch = String.fromCodePoint(parseInt(chars[0], 16));
    // "vanilla, kept" reads as "the kept vanilla model".
    const named = errs.map(([v]) => v.replace(/^(\w+), kept$/, 'kept $1'));
    const who =
      errs.length === askable().length
        ? errs.length > 1
          ? 'the models'
          : 'the model'
        : `the ${named.join(' and ')} model`;
    return [
      `“${ch}” (U+${chars[0]}) is not a character ${who} know${who.endsWith('s') ? '' : 's'}: ` +
        `its vocabulary comes from the text it was pretrained on. Type the name without it (e.g. ` +
        `with a plain letter instead).`,
    ];
  }
  // Per model, a character it lacks is said the same plain way (the library's column counts the
  // whole built question, not what was typed, and its advice is for a vocabulary being built).
  const plain = (m) => {
    const o = m.match(OOV);
    return o
      ? `“${String.fromCodePoint(parseInt(o[2], 16))}” (U+${o[2]}) is not a character it knows ` +
          `(its vocabulary comes from the text it was pretrained on): type the name without it`
      : m;
  };
  const seen = new Map();
  for (const [v, m] of errs) {
    const p = plain(m);
    seen.set(p, [...(seen.get(p) || []), v]);
  }
  if (seen.size === 1) return [[...seen.keys()][0]];
  return [...seen].map(([m, vs]) => `${vs.join(' and ')}: ${m}`);
}

// The question's person: "Where was NAME born?" gives NAME; another question is taken whole.
// The question's person ("Where was NAME born?" gives NAME), or null for a question of another form.
const personOf = (question) => {
  const m = /^Where was (.+) born\?$/.exec(question.trim());
  return m ? m[1].trim() : null;
};

// Whether `text` mentions `name` as a whole (not inside a longer word).
export function mentions(text, name) {
  if (!name) return true;
  const word = (c) => c !== undefined && /[\p{L}\p{N}]/u.test(c);
  for (let i = text.indexOf(name); i >= 0; i = text.indexOf(name, i + 1)) {
    if (!word(text[i - 1]) && !word(text[i + name.length])) return true;
  }
  return false;
}

// The pretraining text model m read, as far as the page can tell: the built-in wiki.txt for a
// model of the built-in corpus; for another, the Data card's pretraining text when it is not the
// built-in one and gives the model's vocabulary size (the vocabulary is that text's characters,
// as run.py builds it); null when neither holds (then nothing is said against its answer).
function pretrainingOf(m) {
  if (!P.embedded || m.builtin_text === undefined) return null;
  if (m.builtin_text) return { name: 'the built-in corpus', text: P.embedded.wiki };
  const w = data.wiki;
  const other = w && typeof w.text === 'string' && !/^built-in /.test(w.name);
  return other && w.vocab === m.vocab_size ? { name: w.name, text: w.text } : null;
  return null;
}

// Why an answer is only a guess: the pretraining text the model read never mentions the person
// (for a model of another text, the built-in people are such ones); '' when nothing is known.
export function stranger(m, question) {
  const who = personOf(question);
  if (!who) return '';
  if (m.builtin_text === false && builtinPerson(question)) {
    return (
      `The model never read about ${who} (one of the built-in corpus’s made-up people; it was pretrained ` +
      'on another text): this is a guess.'
    );
  }
  const read = pretrainingOf(m);
  if (!read || mentions(read.text, who)) return '';
  const why =
    read.name === 'the built-in corpus'
      ? 'the built-in corpus does not mention them'
      : `${read.name}, its pretraining text, does not mention them`;
  return `The model never read about ${who} (${why}): this is a guess.`;
}

const HOW_TO_READ =
  'Each row is the character the model is at (the query); each column a character it may look at (the key), ' +
  'and the colour how much weight it gives it. The question ends with ⁇, the mask ' +
  'character: the answer is written one character ' +
  'at a time after it, each read off the row before, and a second ⁇ ends it (the orange ' +
  'line marks the end of the question). ' +
  'Only the lower-left triangle is coloured because of the causal mask: a position sees ' +
  'itself and what came before, never what follows.';

// Resolves once every map and thumbnail is drawn (the answer's final height, for bringAnswer).
export function showAnswers(out) {
  const root = $('ask-result');
  root.innerHTML = '';
  $('ask-how').textContent = HOW_TO_READ;
  $('ask-how-box').hidden = !Object.keys(out).length;
  const entries = Object.entries(out);
  const longest = Math.max(0, ...entries.map(([, a]) => a.tokens.length));
  // Answers side by side, unless the longest one's map would not fit a column at MIN_CELL px cells
  // (their characters' size; 20 px for its labels and border): then one under the other, each the
  // card's width, rather than smaller characters or a map that scrolls in a half-width column.
  root.classList.remove('stacked');
  if (entries.length > 1 && (root.clientWidth - 24) / 2 < 20 + MIN_CELL * longest)
    root.classList.add('stacked');
  // Every column is in place before any is drawn: the maps and thumbnails are sized to their
  // column's width, and a first column measured alone took the whole card's.
  const cols = entries.map(() => {
    const c = document.createElement('div');
    c.className = 'ask-col';
    root.appendChild(c);
    return c;
  });
  for (const [k, [variant, a]] of entries.entries()) {
    const gold = goldFor(a.question);
    const col = cols[k];
    const T = a.tokens.length;
    const answerRows = [Math.max(0, a.prompt_len - 1), T];
    const m = a.model || { variant, kept: false, label: '' };
    const option = (i, n) => `<option value="${i}">${i + 1} of ${n}</option>`;
    col.innerHTML =
      `<h3 tabindex="-1">${esc(m.variant)}${m.kept ? ', kept for comparison' : ''}</h3>
      ${m.label ? `<p class="muted small model-from">${esc(m.label)}</p>` : ''}
      <p class="question">${esc(a.question)}</p>
      <p class="answer">→ <strong>${showPred(a.prediction)}</strong>${
        gold
          ? ` <span class="muted small">(${esc(gold.file)} says ${esc(gold.answer)}` +
            ` <span class="${gold.answer.trim() === a.prediction ? 'ok' : 'bad'}">` +
            `${gold.answer.trim() === a.prediction ? '✓' : '✗'}</span>)</span>`
          : ''
      }</p>
      ${stranger(m, a.question) ? `<p class="muted small stranger">${esc(stranger(m, a.question))}</p>` : ''}
      <p class="map-pick small"><label>layer <select class="pick-layer">` +
      `${a.maps.map((_, i) => option(i, a.maps.length)).join('')}</select></label>
        <label>head <select class="pick-head">` +
      `${Array.from({ length: a.n_head }, (_, i) => option(i, a.n_head)).join('')}</select></label>
        <label>rows <select class="pick-rows"><option value="answer">the answer’s (from ` +
      `⁇ on)</option><option value="all">all ${T}</option></select></label></p>
      <div class="map-legend"><canvas class="legend" aria-hidden="true"></canvas><span ` +
      `class="muted small">attention weight (square-root scale; grey: masked)</span></div>
      <div class="map-scroll"><canvas class="big-map" tabindex="0" role="application" ` +
      `aria-roledescription="attention map" aria-label="attention map: use the arrow keys to ` +
      `move from cell to cell and read each weight below"></canvas></div>
      <p class="map-wide muted small" hidden>The map is wider than this column: it ` +
      `opens at its right end (the answer); scroll it sideways, or move along it with the ` +
      `arrow keys.</p>
      <p class="map-readout small" aria-live="polite">Point at a cell (or focus the map ` +
      `and use the arrow keys) to read its weight.</p>
      <div class="thumbs"></div>`;
    const big = col.querySelector('.big-map');
    const readout = col.querySelector('.map-readout');
    const scroller = col.querySelector('.map-scroll');
    const selL = col.querySelector('.pick-layer'),
      selH = col.querySelector('.pick-head'),
      selR = col.querySelector('.pick-rows');
    const mapOf = (l, h) =>
      a.maps[l].subarray
        ? a.maps[l].subarray(h * T * T, (h + 1) * T * T)
        : a.maps[l].slice(h * T * T, (h + 1) * T * T);
    let geom = null;
    // The keyboard's cell: arrows move it (Home/End: the row's ends), the readout follows.
    let cursor = null;
    const drawBig = () => {
      const rows = selR.value === 'all' ? [0, T] : answerRows;
      geom = drawMap(
        big,
        mapOf(+selL.value, +selH.value),
        a.tokens,
        a.prompt_len,
        Math.min(900, col.clientWidth || 620),
        rows,
      );
      if (cursor) {
        cursor.i = Math.min(geom.r1 - 1, Math.max(geom.r0, cursor.i));
        markCell(big, geom, cursor);
      }
      col.querySelector('.map-wide').hidden = scroller.scrollWidth <= scroller.clientWidth + 1;
    };
    // The keyboard's cell stays in view where the map scrolls sideways.
    const keepInView = ({ j }) => {
      const x = geom.label + j * geom.cell;
      if (x - geom.label < scroller.scrollLeft) scroller.scrollLeft = Math.max(0, x - geom.label);
      else if (x + geom.cell > scroller.scrollLeft + scroller.clientWidth)
        scroller.scrollLeft = x + geom.cell - scroller.clientWidth;
    };
    const name = (c) => (c === ' ' ? 'a space' : c === '⁇' ? '⁇ (the mask character)' : `“${c}”`);
    const read = (c) => {
      const w = c.j <= c.i ? mapOf(+selL.value, +selH.value)[c.i * T + c.j] : null;
      const text =
        w === null
          ? `${name(a.tokens[c.i])} (position ${c.i + 1}) cannot see ${name(a.tokens[c.j])} ` +
            `(position ${c.j + 1}): it comes later (masked)`
          : `${name(a.tokens[c.i])} (position ${c.i + 1}) gives ${name(a.tokens[c.j])} ` +
            `(position ${c.j + 1}) weight ${w.toFixed(3)}`;
      readout.textContent = text;
      big.title = text;
      S.askHover = { variant, i: c.i, j: c.j, weight: w, text };
    };
    // Pointer events: a mouse's hover, and on a touch screen the cell a finger touches (a tap
    // sends no hover; a drag across the map reads the cells it crosses).
    const readAt = (ev) => {
      const c = geom && cellAt(geom, big, ev);
      if (c) read(c);
    };
    big.addEventListener('pointermove', readAt);
    big.addEventListener('pointerdown', readAt);
    big.addEventListener('keydown', (ev) => {
      if (!geom) return;
      const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
      const c = cursor || { i: geom.r0, j: 0 };
      let { i, j } = c;
      if (moves[ev.key]) {
        i += moves[ev.key][0];
        j += moves[ev.key][1];
      } else if (ev.key === 'Home') j = 0;
      else if (ev.key === 'End') j = i;
      else return;
      ev.preventDefault();
      cursor = {
        i: Math.min(geom.r1 - 1, Math.max(geom.r0, i)),
        j: Math.min(geom.T - 1, Math.max(0, j)),
      };
      drawBig();
      keepInView(cursor);
      read(cursor);
    });
    drawLegend(col.querySelector('.legend'), 200);
    selL.value = String(a.maps.length - 1);
    // Long answers: the rows of the answer only, unless the whole map fits; the same choice in
    // every column (the longest decides), so two models' maps show the same rows.
    selR.value = longest > 40 ? 'answer' : 'all';
    const thumbs = col.querySelector('.thumbs');
    // A layer's heads on one row beside its label where the column allows (8 heads of 48 px wrapped
    // as 6 + 2 in each of two columns side by side), never below 28 px.
    const thumbPx = Math.max(
      28,
      Math.min(48, Math.floor(((col.clientWidth || 620) - 60) / a.n_head) - 7),
    );
    a.maps.forEach((_, l) => {
      const row = document.createElement('div');
      row.className = 'thumb-row';
      row.innerHTML = `<span class="muted small">layer ${l + 1}</span>`;
      for (let h = 0; h < a.n_head; h++) {
        const c = document.createElement('canvas');
        c.title = `layer ${l + 1}, head ${h + 1}: click to show it large`;
        c.className = 'thumb';
        // A button to the keyboard and to screen readers too (Enter or Space shows it large). The
        // heads are one Tab stop: the arrows move between them (left/right a head, up/down a layer).
        c.tabIndex = l === 0 && h === 0 ? 0 : -1;
        c.dataset.layer = String(l);
        c.dataset.head = String(h);
        c.setAttribute('role', 'button');
        c.setAttribute('aria-label', `show layer ${l + 1}, head ${h + 1} large`);
        // One task per thumbnail: many heads of a long answer would otherwise be one long task.
        setTimeout(() => drawThumb(c, mapOf(l, h), T, thumbPx), 0);
        const pick = () => {
          selL.value = String(l);
          selH.value = String(h);
          drawBig();
        };
        c.addEventListener('click', pick);
        c.addEventListener('keydown', (ev) => {
          if (ev.key === 'Enter' || ev.key === ' ') {
            ev.preventDefault();
            pick();
            return;
          }
          const d = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] }[
            ev.key
          ];
          if (!d) return;
          ev.preventDefault();
          const nl = Math.min(a.maps.length - 1, Math.max(0, l + d[0])),
            nh = Math.min(a.n_head - 1, Math.max(0, h + d[1]));
          const next = thumbs.querySelector(`canvas.thumb[data-layer="${nl}"][data-head="${nh}"]`);
          if (!next) return;
          for (const t of thumbs.querySelectorAll('canvas.thumb')) t.tabIndex = -1;
          next.tabIndex = 0;
          next.focus();
        });
        row.appendChild(c);
      }
      thumbs.appendChild(row);
    });
    for (const sel of [selL, selH, selR]) sel.addEventListener('change', drawBig);
    drawBig();
    scroller.scrollLeft = scroller.scrollWidth; // a map wider than its column opens at the answer
  }
  // After the thumbnails' tasks (queued above, in order).
  return new Promise((resolve) => setTimeout(resolve, 0));
}

// ---------------------------------------------------------------------------------------------
// What Ask answers with: one line naming the models and their dev scores (with a link to the
// Models card to change them), a line of names to ask about, and the models the page offers to
// load for Ask (each loaded by one click).

// The facts the page has of model m (the shipped model's, the course model's, the shipped
// synthesizer's), matched by label: {name, facts} or null.
function factsOf(m) {
  const sh = S.shipped;
  if (sh && sh.facts && m.label === (sh.label || sh.facts.label || SHIPPED_LABEL)) {
    return { name: 'shipped model', facts: sh.facts };
  }
  for (const [id, name] of [
    ['course', 'course model'],
    ['synth', 'shipped synthesizer'],
  ]) {
    const C = S[id];
    if (C && C.facts && m.label === C.facts.label) return { name, facts: C.facts };
  }
  return null;
}

// "shipped model, 15.4% dev", "course model, 25.0% dev", "vanilla, kept: my-run.safetensors".
function shortName(m) {
  const known = factsOf(m);
  const kept = m.kept ? ' (kept)' : '';
  if (known) return `${esc(known.name)}${kept}, ${pctOf(known.facts.dev_accuracy)} dev`;
  return `${esc(m.variant)}${kept}: ${esc(m.label)}`;
}

// The dev file whose people are offered as names: the Data card's own dev file where a model of
// another text than the built-in corpus answers (the course model with the course files loaded);
// the built-in dev set where every model is of the built-in corpus. null: neither fits.
function namesSource(models) {
  const own = data.dev && !/^built-in /.test(data.dev.name) ? data.dev : null;
  if (models.some((m) => m.builtin_text === false))
    return own ? { file: own.name, text: own.text } : null;
  return P.embedded ? { file: 'the built-in dev set', text: P.embedded.dev } : null;
}

export function askNames(n) {
  const src = namesSource(askable());
  if (!src) return { file: null, names: [] };
  const rows =
    src.file === 'the built-in dev set'
      ? builtinDev()
      : src.text
          .split('\n')
          .filter((l) => l.includes('\t'))
          .map((l) => l.split('\t'));
  const names = rows
    .map(([q]) => /^Where was (.+) born\?$/.exec(q.trim()))
    .filter(Boolean)
    .map((x) => x[1]);
  return { file: src.file, names: names.slice(0, n) };
}

export function showAskWith() {
  const box = $('ask-shipped');
  const models = askable();
  if (!models.length) {
    box.hidden = true;
    box.innerHTML = '';
    return;
  }
  const f = S.shipped && S.shipped.facts;
  const standIn =
    f && f.stand_in === true && models.some((m) => factsOf(m) && factsOf(m).facts === f)
      ? ' <strong class="stand-in">(a stand-in: placeholder numbers, not a measurement)</strong>'
      : '';
  const { file, names } = askNames(3);
  const chips = names.length
    ? `Try people from ${esc(file)}: ${names
        .map((n) => `<button class="secondary small" data-ask="${esc(n)}">${esc(n)}</button>`)
        .join(' ')}`
    : 'Ask about a person from your copy of the course’s birth_dev.tsv, or give the course files in the ' +
      '<a href="#data-card">Data card</a> for names here.';
  const offers = [
    `<span id="ask-course-hint"${offeredInAsk('course') ? '' : ' hidden'}>About the course’s people: ` +
      '<button type="button" class="linkish" data-load="course">load the course model</button> ' +
      '(trained on the course’s files).</span>',
    `<span id="ask-synth-hint"${offeredInAsk('synth') ? '' : ' hidden'}>Synthesizer attention beside it: ` +
      '<button type="button" class="linkish" data-load="synth">load the shipped synthesizer</button>.</span>',
  ];
  box.innerHTML =
    `<p class="ask-with">Answering with: ${models.map(shortName).join('; ')}${standIn} · ` +
    '<a href="#models-card">change</a></p>' +
    `<p class="ask-examples muted small" id="ask-examples">${chips}</p>` +
    `<p class="ask-offers muted small">${offers.join(' ')}</p>`;
  box.hidden = false;
}

// "load the course model" in Ask: loads it at once, says so while it loads, then focus goes back
// to the question's box (the link is gone with the model in).
async function loadFromAsk(id, button) {
  button.disabled = true;
  button.textContent = 'loading…';
  const before = $('ask-text').value;
  await loadOnDemand(id, true);
  showAskWith();
  // A built-in name in the box (the first visit's) gives way to one of the offered file's people.
  const { file, names } = askNames(1);
  const builtinName = builtinPerson(`Where was ${before} born?`);
  if (names.length && file !== 'the built-in dev set' && builtinName)
    $('ask-text').value = names[0];
  $('ask-text').focus({ preventScroll: true });
}

export function wireAsk() {
  $('btn-ask').addEventListener('click', ask);
  $('ask-shipped').addEventListener('click', (e) => {
    const b = e.target.closest('button[data-ask]');
    if (b && !$('btn-ask').disabled) {
      $('ask-text').value = b.dataset.ask;
      ask();
    }
    const l = e.target.closest('button[data-load]');
    if (l && !l.disabled) loadFromAsk(l.dataset.load, l);
  });
  // Redrawn when the models change (one loaded, trained, kept) and when the data does (its names).
  on('models', showAskWith);
  on('data', showAskWith);
  $('ask-text').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !$('btn-ask').disabled) ask();
  });
  // A name in the evaluation's table: asked here at once, or right after the answer being made.
  on('ask', ({ question }) => {
    $('ask-text').value = question;
    $('ask-card').scrollIntoView({ behavior: 'smooth' });
    $('ask-text').focus({ preventScroll: true });
    if (!$('btn-ask').disabled) ask();
    else if (S.models.length) askAgain = true;
  });
}

// ---------------------------------------------------------------------------------------------
