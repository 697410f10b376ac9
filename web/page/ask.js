// The Ask card: one question to every model, the answers and their attention maps.
import { $, P, S, errText, esc, job, setStatus, showBox, showPred } from './core.js';
import { drawMap, drawThumb } from './heatmap.js';
import { goldFor } from './data.js';

// Ask

export async function ask() {
  const text = $('ask-text').value;
  showBox('ask-error', null);
  S.askError = null;
  const variants = S.models.map((m) => m.variant);
  if (!variants.length) { showBox('ask-error', '<p>There is no model yet; train one or load a checkpoint.</p>'); return; }
  $('btn-ask').disabled = true;
  const out = {};
  const errs = [];
  for (const v of variants) {
    try { out[v] = await job('ask', () => P.wasm.page_ask(v, text)); } catch (e) { errs.push(`${v}: ${errText(e)}`); }
  }
  S.ask = out;
  if (errs.length) { S.askError = errs.join('\n'); showBox('ask-error', errs.map((m) => `<p>${esc(m)}</p>`).join('')); }
  showAnswers(out);
  setStatus(S.status);
}

export function showAnswers(out) {
  const root = $('ask-result');
  root.innerHTML = '';
  for (const [variant, a] of Object.entries(out)) {
    const gold = goldFor(a.question);
    const col = document.createElement('div');
    col.className = 'ask-col';
    col.innerHTML = `<h3>${esc(variant)}</h3>
      <p class="question">${esc(a.question)}</p>
      <p class="answer">→ <strong>${showPred(a.prediction)}</strong>${gold ? ` <span class="muted small">(${esc(gold.file)} says ${esc(gold.answer)}` +
        ` <span class="${gold.answer.trim() === a.prediction ? 'ok' : 'bad'}">${gold.answer.trim() === a.prediction ? '✓' : '✗'}</span>)</span>` : ''}</p>
      <p class="muted small">Attention of layer <select class="pick-layer">${a.maps.map((_, i) => `<option value="${i}">${i + 1}</option>`).join('')}</select>
        head <select class="pick-head">${Array.from({ length: a.n_head }, (_, i) => `<option value="${i}">${i + 1}</option>`).join('')}</select>:
        row = the character reading, column = the character it reads; the red line ends the question.</p>
      <div class="map-scroll"><canvas class="big-map"></canvas></div>
      <div class="thumbs"></div>`;
    root.appendChild(col);
    const T = a.tokens.length;
    const big = col.querySelector('.big-map');
    const selL = col.querySelector('.pick-layer'), selH = col.querySelector('.pick-head');
    const mapOf = (l, h) => a.maps[l].subarray ? a.maps[l].subarray(h * T * T, (h + 1) * T * T) : a.maps[l].slice(h * T * T, (h + 1) * T * T);
    const drawBig = () => drawMap(big, mapOf(+selL.value, +selH.value), a.tokens, a.prompt_len, Math.min(560, col.clientWidth || 560));
    selL.value = String(a.maps.length - 1);
    const thumbs = col.querySelector('.thumbs');
    a.maps.forEach((_, l) => {
      const row = document.createElement('div');
      row.className = 'thumb-row';
      row.innerHTML = `<span class="muted small">layer ${l + 1}</span>`;
      for (let h = 0; h < a.n_head; h++) {
        const c = document.createElement('canvas');
        c.title = `layer ${l + 1}, head ${h + 1}`;
        c.className = 'thumb';
        drawThumb(c, mapOf(l, h), T, 48);
        c.addEventListener('click', () => { selL.value = String(l); selH.value = String(h); drawBig(); });
        row.appendChild(c);
      }
      thumbs.appendChild(row);
    });
    selL.addEventListener('change', drawBig);
    selH.addEventListener('change', drawBig);
    drawBig();
  }
}

export function wireAsk() {
  $('btn-ask').addEventListener('click', ask);
  $('ask-shipped').addEventListener('click', (e) => {
    const b = e.target.closest('button[data-ask]');
    if (b && !$('btn-ask').disabled) { $('ask-text').value = b.dataset.ask; ask(); }
  });
  $('ask-text').addEventListener('keydown', (e) => { if (e.key === 'Enter' && !$('btn-ask').disabled) ask(); });
}

// ---------------------------------------------------------------------------------------------
