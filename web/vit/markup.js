// The ViT card's markup (web/vit/vit.js fills and wires it): the model and training panel, the
// drawing pad, the attention map, the patches and positions, and the homework's answers.
import { EXPLAIN } from './text.js';

const PAD_LABEL =
  'drawing pad for the mouse or a finger; from the keyboard, “A held-out sample” draws a digit';
const ATTN_LABEL =
  'attention over the patches: click a patch, or use the arrow keys, to see where it looks ' +
  '(Escape: from [CLS])';

export const CARD = `
  <h2>Vision Transformer: handwritten digits</h2>
  <p class="vit-intro">The last part of NYU's Deep Learning homework 4 (CSCI-GA 2572): a Vision Transformer that
    cuts a 28×28 digit into patches and classifies it from the [CLS] token. The digits are generated here from a seed
    (pen strokes with random slant, size, width and noise), so nothing is downloaded.
    <span id="vit-status" class="vit-status">Loading…</span></p>
  <div class="vit-grid">
    <div class="vit-panel">
      <h3>Model and training</h3>
      <p id="vit-model" class="vit-muted"></p>
      <div class="vit-buttons">
        <button id="vit-load" disabled>Load the shipped model</button>
        <label>steps <input id="vit-steps" type="number" min="10" max="20000" step="10" value="600"></label>
        <button id="vit-train" data-focus-next="vit-pause" disabled>Train from scratch</button>
        <button id="vit-pause" class="secondary" disabled>Pause</button>
        <button id="vit-eval" class="secondary" data-focus-next="vit-eval" disabled>Evaluate (1000)</button>
      </div>
      <div class="vit-buttons">
        <button id="vit-save" class="secondary" disabled>Save the model</button>
        <label>or load one from <code>attnlab vit train</code>:
          <input id="vit-file" type="file" accept=".safetensors"></label>
      </div>
      <p id="vit-file-error" class="vit-status" role="alert" hidden></p>
      <canvas id="vit-chart" class="vit-chart" width="420" height="170" role="img"
        aria-label="loss (blue) and held-out accuracy (green)" hidden></canvas>
      <p id="vit-train-status" class="vit-muted"></p>
      <div class="vit-scroll wide-scroll"><table id="vit-confusion" class="vit-confusion"></table></div>
    </div>
    <div class="vit-panel">
      <h3>Draw a digit</h3>
      <canvas id="vit-pad" class="vit-pad" width="224" height="224" role="img"
        aria-label="${PAD_LABEL}"></canvas>
      <div class="vit-buttons">
        <button id="vit-clear" class="secondary">Clear</button>
        <button id="vit-sample" class="secondary">A held-out sample</button>
      </div>
      <p id="vit-pred" class="vit-pred" aria-live="polite"></p>
      <div id="vit-probs" class="vit-probs"></div>
    </div>
    <div class="vit-panel">
      <h3>Attention</h3>
      <div class="vit-buttons">
        <label>layer <select id="vit-layer"></select></label>
        <label>head <select id="vit-head"></select></label>
        <button id="vit-from-cls" class="secondary">from [CLS]</button>
      </div>
      <canvas id="vit-attn" class="vit-map" width="224" height="224" tabindex="0" role="application"
        aria-roledescription="attention map" aria-label="${ATTN_LABEL}"></canvas>
      <p id="vit-attn-caption" class="vit-muted" aria-live="polite"></p>
      <p class="vit-explain">${EXPLAIN.attention}</p>
    </div>
    <div class="vit-panel">
      <h3>Patches and positions</h3>
      <div class="vit-pair">
        <figure><canvas id="vit-patches" class="vit-map" width="224" height="224"></canvas>
          <figcaption>the input cut into patches (tokens 1…N; token 0 is [CLS])</figcaption></figure>
        <figure><canvas id="vit-pos" class="vit-map" width="224" height="224"></canvas>
          <figcaption>each patch's position embedding vs all others
            (cosine: red +1, white 0, blue −1)</figcaption></figure>
      </div>
      <p id="vit-pos-stats" class="vit-muted"></p>
      <p class="vit-explain">${EXPLAIN.positions}</p>
    </div>
  </div>
  <div class="vit-qa">${EXPLAIN.qa}</div>`;
