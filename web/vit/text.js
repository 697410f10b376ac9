// The ViT card's words: short explanations beside its pictures, answering the homework's questions in our
// own words, and how an evaluation says the number of digits it asked.
export const EXPLAIN = {
  attention: `Attention here has no mask: every token, [CLS] included, may look at every patch, before and after
    it in reading order (the GPT on this page may only look back). Pick a layer and head to see where [CLS] gathers
    its evidence; "rollout" multiplies the layers' head-averaged maps (with the residual path added) to follow what
    reaches [CLS] at the top.`,
  positions: `The patches enter as a set: attention itself does not know which patch is where. A learned vector per
    position is added to each patch's embedding, and nobody tells the model that patch 5 sits below patch 1. The
    right picture shows, for each patch (placed where it is), how similar its learned vector is to every other
    patch's: each is red at its own place, and any pattern beyond that (neighbours, rows, columns) was learned from
    the data alone; the line above measures it. The shipped model, for one, gives neighbours and patches of the same
    row more similar vectors than the rest.`,
  qa: `<h3>The homework's questions</h3>
    <dl class="vit-dl">
      <dt>How does a ViT differ from a CNN?</dt>
      <dd>A CNN slides small filters, so each layer only mixes neighbouring pixels and the receptive field grows
        slowly; locality and translation equivariance are built in. A ViT cuts the image into patches once (here 7×7,
        a single matrix multiply over the flattened patches, which equals a convolution with stride = kernel = patch)
        and from the first layer lets any patch attend to any other. It has fewer built-in assumptions, so it needs
        more data (or easier data, like these digits) to learn what a CNN assumes.</dd>
      <dt>How does it differ from the original Transformer?</dt>
      <dd>It keeps only the encoder: no decoder, no causal mask, no token vocabulary. Tokens are linear projections
        of pixel patches, not embedding-table rows; LayerNorm comes before each sub-layer (pre-LN), as in the GPT on
        this page.</dd>
      <dt>What do the position embeddings do?</dt>
      <dd>Without them the model would give the same answer for any shuffle of the patches. The learned vectors tell
        each patch token where it came from; the picture above shows what they learned.</dd>
      <dt>How does the class come out?</dt>
      <dd>A learned [CLS] vector is put in front of the patch tokens. It has no pixels of its own, so everything it
        knows after the last layer it gathered by attention; its final state goes through a LayerNorm and one linear
        layer to ten scores, and the softmax of those gives the probabilities shown beside your drawing. Training
        minimises the cross-entropy of the true digit.</dd>
    </dl>`,
};

// The evaluations the card makes by itself (a model loaded, a run's checkpoints) stop after this
// long once they have AUTO_EVAL_MIN digits: on a software adapter 1000 digits take about a minute,
// with nothing new on the card meanwhile. The Evaluate button always asks all 1000.
export const AUTO_EVAL_MS = 5000;
export const AUTO_EVAL_MIN = 100;

// "of 1000 generated digits", or for an evaluation its time cut short: "of the first 175 generated
// digits (all 1000 take more than 5 s on this device: …)".
export function ofDigits(e, noun = '') {
  return e.n === e.asked
    ? `of ${e.n}${noun}`
    : `of the first ${e.n}${noun} (all ${e.asked} take more than ${AUTO_EVAL_MS / 1000} s on ` +
        `this device: “Evaluate (1000)” asks ${e.asked === 1000 ? 'them all' : '1000'})`;
}
