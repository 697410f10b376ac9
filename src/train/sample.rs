//! Greedy decoding as the reference's `sample(model, x, steps, sample=False)`: each step crops the
//! context to the last `block_size` tokens (synthesizer: block_size − 1, since its w2 has that many
//! columns), runs the model in eval mode without a tape, and appends the argmax of the last
//! position's logits (first maximum on ties). Only the last position's rows are read back.
//!
//! [`sample_greedy`] and [`sample_greedy_batch`] use a key/value cache (`model::Decoder`): the
//! prompt is run once, then each step runs one position per row. Prompts of one length are decoded
//! together, so every row of a chunk is at the same position and attention needs no mask. A prompt
//! whose context would outgrow the model (prompt + steps − 1 > the context) has its positions
//! shifted by the crop, which invalidates a cache: it takes the uncached path.
//!
//! The uncached path ([`sample_greedy_uncached`], [`sample_greedy_batch_uncached`]) re-runs the
//! whole context at every step; it is the crop fallback and the tests' reference. It pads prompts
//! on the right: with causal attention a position only sees itself and earlier ones, and masked keys
//! get an exact 0 weight, so the padding never changes a real position's logits; each row reads its
//! own last position, gathered on the device with the embedding kernel.
//!
//! [`sample_greedy_batch_until`] stops a chunk early once every row has produced a given token:
//! the evaluation cuts each answer at its closing ⁇, so the steps after it cannot change a
//! prediction (answers close after about 8 of the 32 steps).

use crate::autograd::Tape;
use crate::error::{Error, Result};
use crate::model::{Decoder, Gpt, Pass};
use crate::ops::embedding;
use crate::tensor::Tensor;

/// The longest context the model accepts.
pub fn max_context(model: &Gpt) -> usize {
    model.cfg.max_context()
}

/// Index of the first maximum (torch.topk's pick on ties in practice); NaN never wins.
fn argmax(row: &[f32]) -> u32 {
    let mut best = 0;
    for (i, &v) in row.iter().enumerate() {
        if v > row[best] || row[best].is_nan() {
            best = i;
        }
    }
    best as u32
}

/// One decoding step for several contexts at once: the next (greedy) token of each.
/// Every context must be 1..=max_context long; shorter ones are right-padded with PAD.
async fn next_tokens(model: &Gpt, rows: &[&[u32]]) -> Result<Vec<u32>> {
    let dev = model.params[0].var.device().clone();
    let v = model.cfg.vocab_size;
    let t = rows.iter().map(|r| r.len()).max().unwrap_or(0);
    if rows.is_empty() || rows.iter().any(|r| r.is_empty()) || t > max_context(model) {
        return Err(Error::Msg(format!(
            "decoding needs contexts of 1..={} tokens; got lengths {:?}",
            max_context(model),
            rows.iter().map(|r| r.len()).collect::<Vec<_>>()
        )));
    }
    let b = rows.len();
    let mut ids = vec![crate::data::PAD_ID; b * t];
    let mut last = Vec::with_capacity(b);
    for (i, r) in rows.iter().enumerate() {
        embedding::check_ids(r, v)?;
        ids[i * t..i * t + r.len()].copy_from_slice(r);
        last.push((i * t + r.len() - 1) as u32);
    }
    let idx = Tensor::from_u32(&dev, &[b * t], &ids)?;
    let last = Tensor::from_u32(&dev, &[b], &last)?;
    let tape = Tape::new();
    let picked = tape.no_grad(|| -> Result<_> {
        let (logits, _) = model.forward(&tape, &idx, b, t, None, &Pass::eval())?; // (B·T, V)
        embedding::embedding(&tape, &last, &logits) // (B, V): each row's last position
    })?;
    let vals = picked.value().to_vec_f32().await?;
    Ok(vals.chunks(v).map(argmax).collect())
}

/// Greedy decoding of `steps` tokens after `ids` without a cache (the whole context re-run at each
/// step); returns the prompt followed by the new tokens.
pub async fn sample_greedy_uncached(model: &Gpt, ids: &[u32], steps: usize) -> Result<Vec<u32>> {
    if ids.is_empty() {
        return Err(Error::Msg("cannot decode from an empty prompt".into()));
    }
    let max_t = max_context(model);
    let mut out = ids.to_vec();
    for _ in 0..steps {
        let ctx = &out[out.len().saturating_sub(max_t)..];
        let next = next_tokens(model, &[ctx]).await?[0];
        out.push(next);
    }
    Ok(out)
}

/// Rows per forward pass so that the largest activation of a chunk (attention scores B·NH·T·T,
/// MLP hidden B·T·4C or logits B·T·V) stays well under the device's storage-binding limit.
fn chunk_rows(model: &Gpt, t: usize) -> usize {
    let c = &model.cfg;
    let limit = model.params[0].var.device().max_tensor_bytes();
    let budget = (limit / 4 / 2).min(32 << 20) as usize; // floats
    let per_row = t * (c.n_head * t).max(4 * c.n_embd).max(c.vocab_size);
    let most = model.params[0].var.device().max_chunk_rows();
    (budget / per_row.max(1)).clamp(1, most)
}

/// How a batch of prompts is decoded: the prompts whose context fits (prompt + steps − 1 positions,
/// no crop), sorted by length; the others, decoded alone with the reference's crop; and the rows
/// per chunk, sized for the longest fitting context.
struct Plan {
    fits: Vec<usize>,
    long: Vec<usize>,
    per_chunk: usize,
}

/// The plan for `prompts`, None when there is nothing to decode (`steps` = 0); an empty prompt is
/// an error.
fn plan(model: &Gpt, prompts: &[Vec<u32>], steps: usize) -> Result<Option<Plan>> {
    if let Some(i) = prompts.iter().position(|p| p.is_empty()) {
        return Err(Error::Msg(format!(
            "prompt {i} is empty; every prompt needs at least one token"
        )));
    }
    if steps == 0 {
        return Ok(None);
    }
    let max_t = max_context(model);
    let (mut fits, long): (Vec<usize>, Vec<usize>) =
        (0..prompts.len()).partition(|&i| prompts[i].len() + steps - 1 <= max_t);
    fits.sort_by_key(|&i| prompts[i].len());
    let longest = fits.last().map_or(1, |&i| prompts[i].len() + steps - 1);
    Ok(Some(Plan {
        fits,
        long,
        per_chunk: chunk_rows(model, longest),
    }))
}

/// Greedy decoding of many prompts without a cache; the result for each is exactly what
/// [`sample_greedy_uncached`] returns. Prompts are sorted by length and decoded in chunks (little
/// padding, bounded memory); a prompt that would outgrow the context is decoded on its own, with
/// the reference's cropping. `progress(done, total)` is called after each chunk.
pub async fn sample_greedy_batch_uncached(
    model: &Gpt,
    prompts: &[Vec<u32>],
    steps: usize,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<Vec<u32>>> {
    let mut out: Vec<Vec<u32>> = prompts.to_vec();
    let Some(Plan {
        fits,
        long,
        per_chunk,
    }) = plan(model, prompts, steps)?
    else {
        return Ok(out);
    };
    let mut done = 0;
    let mut start = 0;
    while start < fits.len() {
        let end = (start + per_chunk).min(fits.len());
        let chunk = &fits[start..end];
        for _ in 0..steps {
            let rows: Vec<&[u32]> = chunk.iter().map(|&i| out[i].as_slice()).collect();
            let next = next_tokens(model, &rows).await?;
            for (&i, tok) in chunk.iter().zip(next) {
                out[i].push(tok);
            }
        }
        done += chunk.len();
        progress(done, prompts.len());
        start = end;
    }
    for i in long {
        out[i] = sample_greedy_uncached(model, &prompts[i], steps).await?;
        done += 1;
        progress(done, prompts.len());
    }
    Ok(out)
}

/// Greedy decoding of `steps` tokens after `ids` with a key/value cache (the uncached path when
/// the context would outgrow the model); returns the prompt followed by the new tokens.
pub async fn sample_greedy(model: &Gpt, ids: &[u32], steps: usize) -> Result<Vec<u32>> {
    if ids.is_empty() {
        return Err(Error::Msg("cannot decode from an empty prompt".into()));
    }
    let mut out = sample_greedy_batch(model, &[ids.to_vec()], steps, &mut |_, _| {}).await?;
    out.pop()
        .ok_or_else(|| Error::Msg("decoding returned no sequence".into()))
}

/// Greedy decoding of many prompts with a key/value cache; the result for each is what
/// [`sample_greedy_uncached`] returns. Prompts are sorted by length and decoded in chunks of one
/// length (bounded by memory); a prompt whose context would outgrow the model takes the uncached
/// path on its own. `progress(done, total)` is called after each chunk.
pub async fn sample_greedy_batch(
    model: &Gpt,
    prompts: &[Vec<u32>],
    steps: usize,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<Vec<u32>>> {
    sample_greedy_batch_until(model, prompts, steps, None, progress).await
}

/// [`sample_greedy_batch`], but a chunk stops as soon as every one of its rows has produced the
/// token `until` (when given). Each row's new tokens are a prefix of what all `steps` would give,
/// and hold `until` unless all `steps` ran. Prompts too long for the cache take the uncached path
/// and all `steps`.
pub async fn sample_greedy_batch_until(
    model: &Gpt,
    prompts: &[Vec<u32>],
    steps: usize,
    until: Option<u32>,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<Vec<u32>>> {
    let mut out: Vec<Vec<u32>> = prompts.to_vec();
    let Some(Plan {
        fits,
        long,
        per_chunk,
    }) = plan(model, prompts, steps)?
    else {
        return Ok(out);
    };
    let mut done = 0;
    for same in fits.chunk_by(|&a, &b| prompts[a].len() == prompts[b].len()) {
        for chunk in same.chunks(per_chunk) {
            let rows: Vec<&[u32]> = chunk.iter().map(|&i| prompts[i].as_slice()).collect();
            let new = decode_cached(model, &rows, steps, until).await?;
            for (&i, toks) in chunk.iter().zip(new) {
                out[i].extend(toks);
            }
            done += chunk.len();
            progress(done, prompts.len());
        }
    }
    for i in long {
        out[i] = sample_greedy_uncached(model, &prompts[i], steps).await?;
        done += 1;
        progress(done, prompts.len());
    }
    Ok(out)
}

/// `steps` greedy tokens for each of several prompts of one length, through one cache of
/// len + steps − 1 positions; the only readback per step is the rows' last logits. With `until`,
/// fewer once every row has produced that token.
async fn decode_cached(
    model: &Gpt,
    rows: &[&[u32]],
    steps: usize,
    until: Option<u32>,
) -> Result<Vec<Vec<u32>>> {
    let (r, t) = (rows.len(), rows.first().map_or(0, |p| p.len()));
    if t == 0 || rows.iter().any(|p| p.len() != t) {
        return Err(Error::Msg(format!(
            "cached decoding needs prompts of one non-zero length; got lengths {:?}",
            rows.iter().map(|p| p.len()).collect::<Vec<_>>()
        )));
    }
    let v = model.cfg.vocab_size;
    let mut dec = Decoder::new(model, r, t + steps - 1)?;
    // Position-major: token t of row b at t·R + b.
    let prompt: Vec<u32> = (0..t * r).map(|i| rows[i % r][i / r]).collect();
    let mut logits = dec.advance(&prompt)?;
    let mut out = vec![Vec::with_capacity(steps); r];
    for step in 0..steps {
        let vals = logits.to_vec_f32().await?;
        let next: Vec<u32> = vals.chunks(v).map(argmax).collect();
        for (o, &tok) in out.iter_mut().zip(&next) {
            o.push(tok);
        }
        let all_closed = until.is_some_and(|u| out.iter().all(|o| o.contains(&u)));
        if all_closed {
            break;
        }
        if step + 1 < steps {
            logits = dec.advance(&next)?;
        }
    }
    Ok(out)
}
