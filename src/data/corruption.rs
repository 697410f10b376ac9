//! Pretraining examples by span corruption (spec "CharCorruptionDataset"). Documents are
//! `text.split('\n')` (2938 on wiki.txt, the last one empty). For document d:
//! t = d[..L] with L uniform in 4..=112 (chars); a span of mean length ≈ len(t)/4 is cut out;
//! `prefix + ⁇ + suffix + ⁇ + masked`, right-padded with □ to 128; x = [..127], y = [1..].

use super::rng::{combine, DataRng};
use super::{Vocab, BLOCK_SIZE, MASK_ID, PAD_ID};
use crate::error::{Error, Result};

/// Shortest and longest truncation length; 112 = int(128·7/8).
pub const MIN_TRUNC: usize = 4;
pub const MAX_TRUNC: usize = BLOCK_SIZE * 7 / 8;

/// The pieces of one corruption, as token ids: `prefix + masked + suffix == truncated`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Corruption {
    pub truncated: Vec<u32>,
    pub prefix: Vec<u32>,
    pub masked: Vec<u32>,
    pub suffix: Vec<u32>,
}

impl Corruption {
    /// `prefix ⁇ suffix ⁇ masked` before padding (at most 114 tokens).
    pub fn masked_string(&self) -> Vec<u32> {
        let mut s = Vec::with_capacity(self.truncated.len() + 2);
        s.extend_from_slice(&self.prefix);
        s.push(MASK_ID);
        s.extend_from_slice(&self.suffix);
        s.push(MASK_ID);
        s.extend_from_slice(&self.masked);
        s
    }
}

#[derive(Debug, Clone)]
pub struct CharCorruptionDataset {
    /// Every document, encoded.
    docs: Vec<Vec<u32>>,
    seed: u64,
}

impl CharCorruptionDataset {
    /// Split `text` on '\n' (keeping the empty document after a final newline, as the reference)
    /// and encode it. `seed` is the run's data seed; every example's randomness is derived from
    /// (seed, epoch, index), so examples do not depend on the order they are drawn in.
    pub fn new(text: &str, file: &str, vocab: &Vocab, seed: u64) -> Result<Self> {
        let docs = super::universal_newlines(text)
            .split('\n')
            .enumerate()
            .map(|(i, d)| vocab.encode_in(d, &format!("{file}:{}", i + 1)))
            .collect::<Result<Vec<_>>>()?;
        Ok(CharCorruptionDataset { docs, seed })
    }

    /// Number of documents (2938 on wiki.txt).
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// The encoded documents.
    pub fn docs(&self) -> &[Vec<u32>] {
        &self.docs
    }

    /// The random corruption of document `idx` in epoch `epoch`.
    pub fn corruption(&self, idx: usize, epoch: u64) -> Result<Corruption> {
        let doc = self.docs.get(idx).ok_or_else(|| {
            Error::Msg(format!(
                "document {idx} requested but the corpus has {} documents",
                self.docs.len()
            ))
        })?;
        let mut rng = DataRng::new(combine(&[self.seed, epoch, idx as u64]));
        let trunc_len = rng.range_incl(MIN_TRUNC, MAX_TRUNC);
        let truncated = doc[..trunc_len.min(doc.len())].to_vec();
        let n = truncated.len();
        let masked_len = masked_length(&mut rng, n);
        let start = rng.range_incl(0, n - masked_len);
        Ok(Corruption {
            prefix: truncated[..start].to_vec(),
            masked: truncated[start..start + masked_len].to_vec(),
            suffix: truncated[start + masked_len..].to_vec(),
            truncated,
        })
    }

    /// (x, y) of document `idx` in epoch `epoch`, each 127 token ids; y is x shifted by one.
    pub fn get(&self, idx: usize, epoch: u64) -> Result<(Vec<u32>, Vec<u32>)> {
        let mut s = self.corruption(idx, epoch)?.masked_string();
        s.resize(BLOCK_SIZE, PAD_ID);
        Ok((s[..BLOCK_SIZE - 1].to_vec(), s[1..].to_vec()))
    }
}

/// Masked-span length for a truncated document of `n` chars: uniform in 1..=h with
/// h = max(1, ⌊n/2⌋ − 1), so the mean (1 + h)/2 is n/4 for even n ≥ 4 (the `randint(1, 2·n/4)`
/// family, shifted by one so the mean is not n/4 + ½). Never longer than the document; an empty
/// document masks nothing.
pub fn masked_length(rng: &mut DataRng, n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    let hi = (n / 2).saturating_sub(1).max(1);
    rng.range_incl(1, hi).min(n)
}
