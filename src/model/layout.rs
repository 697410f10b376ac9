//! How a batch's tokens lie in memory for one forward pass.
//!
//! - **Dense**: B rows of T positions each, (B·T, C) activations; every row is T long (padding
//!   included). Decoding, Ask and the padded training step use it.
//! - **Packed**: only each row's real tokens, one row after another, (N, C) activations with
//!   N = Σ lens. Every per-token op (embeddings, layernorm, linear, GELU, dropout, residuals, the
//!   head, cross-entropy) runs over the N rows. Attention needs per-row blocks: the rows are sorted
//!   by length into a few groups, and for each group q, k and v are gathered into (B_g·T_g, C)
//!   with T_g = the group's longest row, the batched causal attention runs there, and its output
//!   is gathered back to (N, C) (zero for the other groups' tokens) and summed over the groups.
//!   A block position past its row's length holds zeros; causal attention never lets a real
//!   position see it, so the real rows compute exactly what the dense layout computes, and the
//!   groups keep attention's work near Σ lens² instead of B·T².
//!
//! Both layouts give each token row the dropout key `row · block_size + position` and each
//! attention row `(row · NH + head) · block_size + query`, so dropout drops the same elements in
//! either layout (see `ops::dropout`).

use crate::device::Device;
use crate::error::{Error, Result};
use crate::ops::gather;
use crate::tensor::Tensor;
use std::rc::Rc;

/// One group of rows of a packed layout and the maps between its tokens and its attention
/// blocks (see `ops::gather`).
pub struct Group {
    /// Rows in the group (B_g).
    pub rows: usize,
    /// The group's block width: its longest row (T_g).
    pub t: usize,
    /// (B_g·T_g): the token of each block position, NONE past a row's end.
    pub to_blocks: Tensor,
    /// (N): the block position of each token, NONE for the other groups' tokens.
    pub to_tokens: Tensor,
    /// (B_g·NH·T_g) dropout keys of the group's attention rows (from the batch row indices).
    pub attn_keys: Tensor,
}

/// The most groups a packed batch's attention is split into: each group costs a few more
/// dispatches and two (N, C) gathers per layer; four already bring the padded B·T² attention
/// work close to Σ lens² (measured in BENCHMARKS.md).
pub const MAX_GROUPS: usize = 4;
/// Rows per group at least, so that small batches stay one group.
pub const MIN_GROUP_ROWS: usize = 16;

pub struct Layout {
    /// Batch rows (B).
    pub rows: usize,
    /// Attention block width: the longest row (T).
    pub t: usize,
    /// Activation rows: B·T when dense, Σ lens when packed.
    pub n: usize,
    /// Real length of each row.
    pub lens: Vec<usize>,
    /// (N) each token's position in its row.
    pub pos: Tensor,
    /// The attention groups; none when the tokens already are the blocks (dense).
    pub groups: Vec<Group>,
    /// (N) dropout keys of the token rows.
    pub token_keys: Tensor,
    /// (B·NH·T) dropout keys of the attention rows (dense only).
    pub attn_keys: Tensor,
}

impl Layout {
    /// B rows of T positions.
    pub fn dense(
        dev: &Rc<Device>,
        rows: usize,
        t: usize,
        nh: usize,
        block: usize,
    ) -> Result<Layout> {
        let pos: Vec<u32> = (0..rows * t).map(|i| (i % t) as u32).collect();
        let keys: Vec<u32> = (0..rows * t)
            .map(|i| token_key(i / t, i % t, block))
            .collect();
        Ok(Layout {
            rows,
            t,
            n: rows * t,
            lens: vec![t; rows],
            pos: Tensor::from_u32(dev, &[pos.len().max(1)], &pad1(pos))?,
            groups: vec![],
            token_keys: Tensor::from_u32(dev, &[keys.len().max(1)], &pad1(keys))?,
            attn_keys: attn_keys(dev, &(0..rows).collect::<Vec<_>>(), t, nh, block)?,
        })
    }

    /// The real tokens of rows of lengths `lens` (each at most `block`; at least one token in all).
    pub fn packed(dev: &Rc<Device>, lens: &[usize], nh: usize, block: usize) -> Result<Layout> {
        Layout::packed_from(dev, lens, 0, nh, block)
    }

    /// `packed` for rows `first_row..` of a larger batch (a micro-batch): the dropout keys are
    /// the whole batch's, so micro-batches drop exactly what the whole batch would.
    pub fn packed_from(
        dev: &Rc<Device>,
        lens: &[usize],
        first_row: usize,
        nh: usize,
        block: usize,
    ) -> Result<Layout> {
        let t = lens.iter().copied().max().unwrap_or(0);
        let n: usize = lens.iter().sum();
        if n == 0 || t > block {
            return Err(Error::Msg(format!(
                "a packed batch needs 1 to {block} tokens a row and at least one in all; got row \
                 lengths {lens:?}"
            )));
        }
        let mut pos = Vec::with_capacity(n);
        let mut keys = Vec::with_capacity(n);
        let mut first = Vec::with_capacity(lens.len()); // each row's first token
        for (r, &l) in lens.iter().enumerate() {
            first.push(pos.len());
            for i in 0..l {
                pos.push(i as u32);
                keys.push(token_key(first_row + r, i, block));
            }
        }
        // Rows sorted by length (stable), cut into groups of equal row counts.
        let mut order: Vec<usize> = (0..lens.len()).collect();
        order.sort_by_key(|&r| lens[r]);
        let count = (lens.len() / MIN_GROUP_ROWS).clamp(1, MAX_GROUPS);
        let mut groups = Vec::with_capacity(count);
        for g in 0..count {
            let rows = &order[g * order.len() / count..(g + 1) * order.len() / count];
            let gt = rows.iter().map(|&r| lens[r]).max().unwrap_or(0).max(1);
            let mut to_blocks = vec![gather::NONE; rows.len() * gt];
            let mut to_tokens = vec![gather::NONE; n];
            for (b, &r) in rows.iter().enumerate() {
                for i in 0..lens[r] {
                    to_blocks[b * gt + i] = (first[r] + i) as u32;
                    to_tokens[first[r] + i] = (b * gt + i) as u32;
                }
            }
            groups.push(Group {
                rows: rows.len(),
                t: gt,
                to_blocks: Tensor::from_u32(dev, &[to_blocks.len()], &to_blocks)?,
                to_tokens: Tensor::from_u32(dev, &[n], &to_tokens)?,
                attn_keys: attn_keys(
                    dev,
                    &rows.iter().map(|r| first_row + r).collect::<Vec<_>>(),
                    gt,
                    nh,
                    block,
                )?,
            });
        }
        Ok(Layout {
            rows: lens.len(),
            t,
            n,
            lens: lens.to_vec(),
            pos: Tensor::from_u32(dev, &[n], &pos)?,
            groups,
            token_keys: Tensor::from_u32(dev, &[n], &keys)?,
            attn_keys: Tensor::from_u32(dev, &[1], &[0])?,
        })
    }
}

fn token_key(row: usize, pos: usize, block: usize) -> u32 {
    (row as u32)
        .wrapping_mul(block as u32)
        .wrapping_add(pos as u32)
}

/// Keys of the attention rows (row, head, query) of the batch rows `rows`, blocks of width t.
fn attn_keys(
    dev: &Rc<Device>,
    rows: &[usize],
    t: usize,
    nh: usize,
    block: usize,
) -> Result<Tensor> {
    let keys: Vec<u32> = (0..rows.len() * nh * t)
        .map(|i| {
            let (b, h, q) = (i / (nh * t), i / t % nh, i % t);
            token_key(rows[b] * nh + h, q, block)
        })
        .collect();
    Tensor::from_u32(dev, &[keys.len().max(1)], &pad1(keys))
}

/// An empty upload is not allowed; an empty layout never reads its one element.
fn pad1(mut v: Vec<u32>) -> Vec<u32> {
    if v.is_empty() {
        v.push(0);
    }
    v
}

/// Each row's real length for training: up to its last non-PAD target (PAD = 0); a row without
/// one contributes nothing to the loss and gets length 0. If no row has a target, the first row
/// keeps one token, so the batch is not empty (its loss is then the empty mean, as padded).
pub fn target_lengths(y: &[u32], rows: usize, t: usize) -> Vec<usize> {
    let mut lens: Vec<usize> = (0..rows)
        .map(|r| {
            y[r * t..(r + 1) * t]
                .iter()
                .rposition(|&v| v != crate::data::PAD_ID)
                .map_or(0, |i| i + 1)
        })
        .collect();
    if lens.iter().all(|&l| l == 0) {
        if let Some(l) = lens.first_mut() {
            *l = 1;
        }
    }
    lens
}

/// The rows' first `lens` tokens of a (rows, t) row-major batch, one after another.
pub fn pack(v: &[u32], lens: &[usize], t: usize) -> Vec<u32> {
    lens.iter()
        .enumerate()
        .flat_map(|(r, &l)| v[r * t..r * t + l].iter().copied())
        .collect()
}
