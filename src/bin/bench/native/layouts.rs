//! `--layouts ROWS`: the training step on real batches, padded, trimmed and packed.

use super::BlockOn;
use attnlab::bench;
use attnlab::{Device, Result};
use std::time::Instant;

/// `--layouts ROWS` (`--trim ROWS` is the same): the training step on real batches, laid out
/// three ways side by side: padded to 127 columns (the reference's step), trimmed after the
/// batch's longest row (the previous step), and packed to the rows' real tokens (what training
/// runs now). The batches are the first `BATCHES` batches of ROWS examples in training order,
/// span-corruption examples of `wiki.txt` (pretrain) and questions of
/// `birth_places_train.tsv` (finetune): the course's files from `--data DIR`, else the
/// embedded corpus. Each timing cycles through the batches; `--kind pretrain|finetune` runs one.
pub(super) fn time_layouts(
    dev: &std::rc::Rc<Device>,
    rows: usize,
    repeats: usize,
    size: bench::StepSize,
    variants: &[attnlab::model::Variant],
    data: Option<&str>,
    kinds: &[&str],
) -> Result<()> {
    use attnlab::data::{CharCorruptionDataset, NameDataset, Vocab};
    use attnlab::model::Gpt;
    use attnlab::train::run::{default_corpus, trim_batch};
    use attnlab::train::{TrainConfig, Trainer};
    const BATCHES: usize = 4;
    let t = 127;
    let (wiki, train) = match data {
        Some(dir) => {
            let read = |f: &str| {
                std::fs::read_to_string(std::path::Path::new(dir).join(f))
                    .map_err(|e| attnlab::Error::Msg(format!("{dir}/{f}: {e}")))
            };
            (read("wiki.txt")?, read("birth_places_train.tsv")?)
        }
        None => {
            let c = default_corpus(false);
            (c.wiki, c.train_tsv)
        }
    };
    let vocab = Vocab::from_text(&wiki, "wiki.txt")?;
    let names = NameDataset::new(train.as_bytes(), "birth_places_train.tsv", &vocab)?;
    let corrupt = CharCorruptionDataset::new(&wiki, "wiki.txt", &vocab, 0)?;
    say!(
        "training step on real batches ({}; {size:?} size), {BATCHES} batches of {rows} rows \
         in training order, cycled for {repeats} steps after a warm-up step on each",
        data.unwrap_or("embedded corpus")
    );
    say!(
        "{:<12} {:<9} {:>6} {:>6} {:>9} {:>9} {:>9} {:>8} {:>8}",
        "variant",
        "batch",
        "real",
        "trimT",
        "full ms",
        "trim ms",
        "packed ms",
        "pk/trim",
        "pk/full"
    );
    for &variant in variants {
        for &kind in kinds {
            let mut batches = vec![];
            let (mut real, mut trim_t) = (0usize, 0usize);
            for b in 0..BATCHES {
                let (mut x, mut y) = (vec![], vec![]);
                for i in b * rows..(b + 1) * rows {
                    let (a, c) = if kind == "pretrain" {
                        corrupt.get(i % corrupt.len(), 0)?
                    } else {
                        names.get(i % names.len())?
                    };
                    x.extend(a);
                    y.extend(c);
                }
                let lens = attnlab::model::layout::target_lengths(&y, rows, t);
                real += lens.iter().sum::<usize>();
                let (tx, ty, tt) = trim_batch(&x, &y, rows, t);
                trim_t += tt;
                batches.push((x, y, tx, ty, tt));
            }
            let time = |how: u8| -> Result<f64> {
                let mut tr = Trainer::new(
                    Gpt::new(dev, size.config(variant), 1)?,
                    TrainConfig::finetune_scratch(),
                    0,
                )?;
                let mut one = |k: usize| -> Result<attnlab::Tensor> {
                    let (x, y, tx, ty, tt) = &batches[k % BATCHES];
                    match how {
                        0 => tr.step_counting(x, y, rows, t, rows * t),
                        1 => tr.step_counting(tx, ty, rows, *tt, rows * t),
                        _ => tr.step_packed(x, y, rows, t, rows * t),
                    }
                };
                // Warm up on every batch once, so that each batch's buffer sizes are pooled.
                for k in 0..BATCHES {
                    one(k)?.to_vec_f32().await_blocking()?;
                }
                let t0 = Instant::now();
                for k in 0..repeats {
                    one(k)?;
                }
                pollster::block_on(dev.sync())?;
                Ok(t0.elapsed().as_secs_f64() / repeats as f64)
            };
            let (full, cut, packed) = (time(0)?, time(1)?, time(2)?);
            say!(
                "{:<12} {:<9} {:>5.0}% {:>6} {:>9.1} {:>9.1} {:>9.1} {:>8.2} {:>8.2}",
                variant.name(),
                kind,
                100.0 * real as f64 / (BATCHES * rows * t) as f64,
                trim_t / BATCHES,
                full * 1e3,
                cut * 1e3,
                packed * 1e3,
                packed / cut,
                packed / full
            );
        }
    }
    Ok(())
}
