//! The GPT's configuration: the assignment's sizes as the default, and the tiny preset used in CI.

/// Which attention the blocks use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// CausalSelfAttention: softmax(q·kᵀ/√d) with a causal mask.
    Vanilla,
    /// SynthesizerAttention: scores from ReLU(x·A + b1)·B + b2, no keys or queries.
    Synthesizer,
}

impl Variant {
    pub fn name(&self) -> &'static str {
        match self {
            Variant::Vanilla => "vanilla",
            Variant::Synthesizer => "synthesizer",
        }
    }

    /// The variant a user named ("vanilla" or "synthesizer").
    pub fn from_name(name: &str) -> crate::Result<Variant> {
        match name {
            "vanilla" => Ok(Variant::Vanilla),
            "synthesizer" => Ok(Variant::Synthesizer),
            v => Err(crate::Error::Msg(format!(
                "unknown attention variant '{v}'; choose vanilla or synthesizer"
            ))),
        }
    }
}

/// The longest block a model may have: attention keeps (B, heads, T, T) scores, so memory grows
/// with T²; the assignment uses 128.
pub const MAX_BLOCK_SIZE: usize = 1024;

#[derive(Clone, Debug, PartialEq)]
pub struct GptConfig {
    pub variant: Variant,
    pub vocab_size: usize,
    pub block_size: usize,
    pub n_layer: usize,
    pub n_head: usize,
    pub n_embd: usize,
    pub embd_pdrop: f32,
    pub resid_pdrop: f32,
    pub attn_pdrop: f32,
}

impl GptConfig {
    /// The assignment's model: 4 layers, 8 heads, width 256, block 128 (run.py's GPTConfig).
    pub fn assignment(variant: Variant, vocab_size: usize) -> GptConfig {
        GptConfig {
            variant,
            vocab_size,
            block_size: 128,
            n_layer: 4,
            n_head: 8,
            n_embd: 256,
            embd_pdrop: 0.1,
            resid_pdrop: 0.1,
            attn_pdrop: 0.1,
        }
    }

    /// A model small enough to train in CI on either backend (a software GPU included): 2 layers, 4 heads, width 64.
    pub fn tiny(variant: Variant, vocab_size: usize) -> GptConfig {
        GptConfig {
            n_layer: 2,
            n_head: 4,
            n_embd: 64,
            ..GptConfig::assignment(variant, vocab_size)
        }
    }

    /// The longest context the model reads: block_size (synthesizer block_size − 1, the columns
    /// of its w2).
    pub fn max_context(&self) -> usize {
        match self.variant {
            Variant::Vanilla => self.block_size,
            Variant::Synthesizer => self.block_size - 1,
        }
    }

    pub fn head_size(&self) -> usize {
        self.n_embd / self.n_head.max(1)
    }

    /// Reject impossible combinations with a message that says which value to change.
    pub fn validate(&self) -> crate::Result<()> {
        let bad = |m: String| Err(crate::Error::Msg(m));
        if self.n_head == 0 || !self.n_embd.is_multiple_of(self.n_head) {
            return bad(format!(
                "n_embd = {} is not divisible by n_head = {}; choose a width that is \
                 a multiple of the head count",
                self.n_embd, self.n_head
            ));
        }
        if self.block_size < 2 || self.vocab_size < 2 || self.n_layer == 0 {
            return bad(format!(
                "block_size ({}) and vocab_size ({}) must be at least 2 and n_layer \
                 ({}) at least 1",
                self.block_size, self.vocab_size, self.n_layer
            ));
        }
        if self.block_size > MAX_BLOCK_SIZE {
            return bad(format!(
                "block_size = {} is beyond the limit of {MAX_BLOCK_SIZE} (attention \
                 memory grows with its square); the assignment uses 128",
                self.block_size
            ));
        }
        for (name, p) in [
            ("embd_pdrop", self.embd_pdrop),
            ("resid_pdrop", self.resid_pdrop),
            ("attn_pdrop", self.attn_pdrop),
        ] {
            if !(0.0..1.0).contains(&p) {
                return bad(format!("{name} = {p} must be in [0, 1)"));
            }
        }
        Ok(())
    }
}
