//! `--decode [TSV]`: the evaluation's greedy decoding without and with the key/value cache.

use super::{clock, BlockOn};
use attnlab::bench;
use attnlab::{Device, Result};

/// `--decode [TSV]`: the first 500 questions of TSV as the evaluation's prompts, decoded by a
/// random full-size model of each variant without and with the key/value cache.
pub(super) fn time_decode(dev: &std::rc::Rc<Device>, tsv: Option<&str>) -> Result<()> {
    use attnlab::data::{parse_tsv, prompt_for, TsvMode, Vocab};
    use attnlab::model::Variant;
    let course = "../shared/data/cs224n-a5/birth_dev.tsv";
    let path = tsv.unwrap_or(course);
    let (what, bytes) = match std::fs::read(path) {
        Ok(b) => (path.to_string(), b),
        Err(e) if tsv.is_none() => {
            say!("{course}: {e}; using the built-in corpus's training questions");
            let c = attnlab::train::run::default_corpus(false);
            ("built-in train.tsv".to_string(), c.train_tsv.into_bytes())
        }
        Err(e) => return Err(attnlab::Error::Msg(format!("cannot read {path}: {e}"))),
    };
    let rows = parse_tsv(&bytes, &what, TsvMode::AnswersOptional)?;
    // The questions' characters (⁇, which every prompt ends with, is always in a vocabulary).
    let text: String = rows.iter().map(|r| r.prompt_text()).collect();
    let vocab = Vocab::from_text(&text, &what)?;
    let prompts = rows
        .iter()
        .take(500)
        .map(|r| vocab.encode_in(&prompt_for(&r.prompt_text()), &what))
        .collect::<Result<Vec<_>>>()?;
    let vocab_size = vocab.len().max(256);
    let cfg = attnlab::model::GptConfig::assignment(Variant::Vanilla, vocab_size);
    say!(
        "greedy decoding, {} questions of {what}, {} tokens each, {} layers, {} heads, width {}, \
         vocab {vocab_size}, random weights",
        prompts.len(),
        attnlab::train::run::EVAL_STEPS,
        cfg.n_layer,
        cfg.n_head,
        cfg.n_embd
    );
    say!(
        "{:<12} {:>12} {:>12} {:>9} {:>10}",
        "variant",
        "uncached s",
        "cached s",
        "speed-up",
        "same"
    );
    let clock = clock();
    for variant in [Variant::Vanilla, Variant::Synthesizer] {
        let r = bench::bench_decode(dev, variant, vocab_size, &prompts, &clock).await_blocking()?;
        say!(
            "{:<12} {:>12.2} {:>12.2} {:>8.1}x {:>10}",
            r.variant,
            r.uncached_s,
            r.cached_s,
            r.uncached_s / r.cached_s,
            if r.same { "yes" } else { "NO" }
        );
    }
    Ok(())
}
