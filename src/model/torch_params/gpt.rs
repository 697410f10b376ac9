//! The assignment's GPT in a state_dict: its configuration inferred from the names and shapes,
//! checked against what the caller expects, then the model built.

use super::{escape, msg, read_state_dict, TorchTensor};
use crate::device::Device;
use crate::error::Result;
use crate::model::checkpoint;
use crate::model::config::{GptConfig, Variant};
use crate::model::gpt::Gpt;
use crate::model::params::layout;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::rc::Rc;

/// What the caller knows about the model a file should hold. `Default` expects nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct Expected<'a> {
    /// The attention variant asked for; `None` takes the file's.
    pub variant: Option<Variant>,
    /// The number of heads. A vanilla model's shapes do not show it: `None` means the
    /// assignment's 8. A synthesizer's is checked against `w2` (`None`: taken from `w2`).
    pub n_head: Option<usize>,
    /// The size of the vocabulary built from the corpus, and the corpus's name for messages.
    pub vocab: Option<(usize, &'a str)>,
}

/// Up to six names (escaped: they come from the file), and how many more.
fn list(names: &[String]) -> String {
    let mut s: Vec<String> = names.iter().take(6).map(|n| escape(n)).collect();
    let more = names.len().saturating_sub(6);
    if more > 0 {
        s.push("...".into());
    }
    format!(
        "{}{}",
        s.join(", "),
        if more > 0 {
            format!(" ({more} more)")
        } else {
            String::new()
        }
    )
}

/// The GPT configuration a state_dict implies, checked against `want` and against every name and
/// shape of `params::layout` (plus the optional causal `mask` buffers). Dropout is the
/// assignment's 0.1; set it on the model's `cfg` to train with another.
pub fn config_of(sd: &[(String, TorchTensor)], want: &Expected, what: &str) -> Result<GptConfig> {
    let by_name: HashMap<&str, &TorchTensor> = sd.iter().map(|(n, t)| (n.as_str(), t)).collect();
    let shape = |n: &str| by_name.get(n).map(|t| t.shape.as_slice());
    let first: Vec<String> = sd.iter().map(|(n, _)| n.clone()).collect();
    let not_gpt = |why: String| {
        msg(format!(
            "{what} is a state_dict but not of the assignment's GPT: {why} (its names: {}); \
             expected tok_emb.weight, pos_emb, blocks.0.ln1.weight, ..., head.weight",
            list(&first)
        ))
    };
    let (vocab_size, n_embd) = match shape("tok_emb.weight") {
        Some(&[v, c]) if v > 0 && c > 0 => (v, c),
        Some(s) => {
            return Err(not_gpt(format!(
                "tok_emb.weight is {s:?}, not (vocab, width)"
            )))
        }
        None => return Err(not_gpt("it has no tok_emb.weight".into())),
    };
    let block_size = match shape("pos_emb") {
        Some(&[1, t, c]) if c == n_embd => t,
        Some(s) => {
            return Err(not_gpt(format!(
                "pos_emb is {s:?}, not (1, block, {n_embd}) as tok_emb.weight's width says"
            )))
        }
        None => return Err(not_gpt("it has no pos_emb".into())),
    };
    let blocks: BTreeSet<usize> = sd
        .iter()
        .filter_map(|(n, _)| n.strip_prefix("blocks.")?.split('.').next()?.parse().ok())
        .collect();
    let n_layer = blocks.len();
    if n_layer == 0 || blocks.last() != Some(&(n_layer - 1)) {
        return Err(not_gpt(format!(
            "its blocks are numbered {:?}, expected 0, 1, ...",
            blocks
        )));
    }
    let vanilla = by_name.contains_key("blocks.0.attn.key.weight");
    let synth = by_name.contains_key("blocks.0.attn.w2");
    let variant =
        match (vanilla, synth) {
            (true, false) => Variant::Vanilla,
            (false, true) => Variant::Synthesizer,
            (true, true) => {
                return Err(not_gpt(
                    "it has both vanilla (attn.key) and synthesizer (attn.w2) attention".into(),
                ))
            }
            (false, false) => return Err(not_gpt(
                "its attention has neither key/query/value (vanilla) nor w1/w2/b2 (synthesizer)"
                    .into(),
            )),
        };
    if let Some(v) = want.variant {
        if v != variant {
            let how = match variant {
                Variant::Vanilla => "attn.key/query/value",
                Variant::Synthesizer => "attn.w1/w2/b2",
            };
            return Err(msg(format!(
                "{what} holds a {} model (its blocks have {how}) but a {} model was asked for; \
                 give the variant it was trained as",
                variant.name(),
                v.name()
            )));
        }
    }
    let n_head = match variant {
        // Not stored: the command's head count must divide the width read from the shapes.
        Variant::Vanilla => match want.n_head.unwrap_or(8) {
            h if h > 0 && n_embd % h == 0 => h,
            h => {
                return Err(msg(format!(
                    "{what} holds a vanilla model of width {n_embd}, which {h} heads do not \
                     divide: a .params file does not store the head count, so give the one it \
                     was trained with (a divisor of {n_embd}; the course's models have 8)"
                )))
            }
        },
        Variant::Synthesizer => {
            let hs = match shape("blocks.0.attn.w2") {
                Some(&[hs, _]) if hs > 0 => hs,
                s => {
                    return Err(not_gpt(format!(
                        "blocks.0.attn.w2 is {s:?}, not (head size, block - 1)"
                    )))
                }
            };
            if n_embd % hs != 0 {
                return Err(msg(format!(
                    "{what}: blocks.0.attn.w2 has {hs} rows (the head size), which does not divide \
                     the width {n_embd}"
                )));
            }
            let h = n_embd / hs;
            if let Some(asked) = want.n_head {
                if asked != h {
                    return Err(msg(format!(
                        "{what} holds a synthesizer model with {h} heads (w2 has {hs} rows = \
                         width {n_embd} / {h}) but {asked} heads were asked for: give {h}, or no \
                         head count (a synthesizer's is read from its weights)"
                    )));
                }
            }
            h
        }
    };
    let cfg = GptConfig {
        variant,
        vocab_size,
        block_size,
        n_layer,
        n_head,
        n_embd,
        ..GptConfig::assignment(variant, vocab_size)
    };
    cfg.validate()
        .map_err(|e| msg(format!("{what}: the model it holds is not usable: {e}")))?;
    if let Some((v, corpus)) = want.vocab {
        if v != vocab_size {
            return Err(msg(format!(
                "{what} was trained with a vocabulary of {vocab_size} characters (tok_emb.weight \
                 has {vocab_size} rows), but the corpus {corpus} gives {v}: a .params file does \
                 not store its vocabulary, which comes from the pretraining corpus, so give the \
                 one it was trained with (pretrain_corpus_path on the command line, the Data \
                 card's wiki.txt in the page; for the course's models, the course's wiki.txt, \
                 256 characters)"
            )));
        }
    }
    let expected = layout(&cfg);
    let mut known: HashSet<String> = expected.iter().map(|(n, _, _)| n.clone()).collect();
    let masks: Vec<String> = (0..n_layer)
        .map(|l| format!("blocks.{l}.attn.mask"))
        .collect();
    known.extend(masks.iter().cloned());
    let missing: Vec<String> = expected
        .iter()
        .filter(|(n, _, _)| !by_name.contains_key(n.as_str()))
        .map(|(n, _, _)| n.clone())
        .collect();
    let extra: Vec<String> = sd
        .iter()
        .filter(|(n, _)| !known.contains(n))
        .map(|(n, _)| n.clone())
        .collect();
    if !missing.is_empty() || !extra.is_empty() {
        let mut parts = vec![];
        if !missing.is_empty() {
            parts.push(format!("it lacks {}", list(&missing)));
        }
        if !extra.is_empty() {
            parts.push(format!("it has {} that the model does not", list(&extra)));
        }
        return Err(msg(format!(
            "{what} does not hold the parameters of a {} GPT ({n_layer} layers, width {n_embd}, \
             block {block_size}): {}",
            variant.name(),
            parts.join("; and ")
        )));
    }
    for (name, want_shape, _) in &expected {
        let have = &by_name[name.as_str()].shape;
        if have != want_shape {
            return Err(msg(format!(
                "{what}: tensor '{name}' has shape {have:?}, expected {want_shape:?} for a {} GPT \
                 with vocab {vocab_size}, block {block_size}, {n_layer} layers, {n_head} heads, \
                 width {n_embd}",
                variant.name()
            )));
        }
    }
    // The causal mask buffers are not parameters; when present they must be the causal mask,
    // which is what the model here always applies.
    let t = block_size;
    for m in &masks {
        if let Some(mask) = by_name.get(m.as_str()) {
            if mask.shape != [1, 1, t, t] {
                return Err(msg(format!(
                    "{what}: buffer '{m}' has shape {:?}, expected [1, 1, {t}, {t}]",
                    mask.shape
                )));
            }
            let causal = mask
                .values
                .iter()
                .enumerate()
                .all(|(i, &v)| v == if i % t <= i / t { 1.0 } else { 0.0 });
            if !causal {
                return Err(msg(format!(
                    "{what}: buffer '{m}' is not the causal (lower-triangular) mask; this model \
                     attends differently and cannot be run here"
                )));
            }
        }
    }
    Ok(cfg)
}

/// Read a `torch.save(model.state_dict())` file into a model on `dev`: the state_dict is read and
/// every check of `config_of` passes before anything is uploaded, so a refused file changes
/// nothing the caller holds.
pub fn from_bytes(dev: &Rc<Device>, bytes: &[u8], want: &Expected, what: &str) -> Result<Gpt> {
    let sd = read_state_dict(bytes, what)?;
    let cfg = config_of(&sd, want, what)?;
    let mut by_name: HashMap<String, TorchTensor> = sd.into_iter().collect();
    checkpoint::build(dev, cfg, what, |name, _| {
        by_name
            .remove(name)
            .map(|t| t.values)
            .ok_or_else(|| msg(format!("{what} has no tensor '{name}'")))
    })
}
