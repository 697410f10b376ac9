//! A tiny portable random source (SplitMix64) for data sampling.
//!
//! Why not `rand::rngs::SmallRng`: it is Xoshiro256++ on 64-bit targets but Xoshiro128++ on
//! wasm32, and `gen_range::<usize>` samples differently when `usize` is 32 bits. The page and the
//! native CLI must draw the same corruption examples and generate the same default corpus for one
//! seed, so every draw here goes through `u64` arithmetic only.

/// SplitMix64 (Steele, Lea & Flood 2014): one 64-bit state, full period, good enough for sampling.
#[derive(Debug, Clone)]
pub struct DataRng {
    state: u64,
}

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// The SplitMix64 output function: a strong 64-bit mixer, also used to combine seeds.
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Combine several seed words into one, order-sensitively, so (seed, epoch, index) triples that
/// differ in any word give unrelated streams.
pub fn combine(words: &[u64]) -> u64 {
    words.iter().fold(0x5EED_DA7A_u64, |acc, &w| {
        mix64(acc ^ mix64(w.wrapping_add(GOLDEN)))
    })
}

impl DataRng {
    pub fn new(seed: u64) -> Self {
        DataRng { state: mix64(seed) }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN);
        mix64(self.state)
    }

    /// Uniform in `0..n` (n > 0) without modulo bias (Lemire's multiply-and-reject).
    pub fn below(&mut self, n: u64) -> u64 {
        if n <= 1 {
            return 0;
        }
        let threshold = n.wrapping_neg() % n;
        loop {
            let m = (self.next_u64() as u128) * (n as u128);
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }

    /// Uniform integer in `lo..=hi`; returns `lo` when `hi < lo`.
    pub fn range_incl(&mut self, lo: usize, hi: usize) -> usize {
        if hi <= lo {
            return lo;
        }
        lo + self.below((hi - lo) as u64 + 1) as usize
    }

    /// Uniform in [0, 1) with 53 random bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Pick one element of a non-empty slice uniformly (None for an empty slice).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        if items.is_empty() {
            return None;
        }
        items.get(self.below(items.len() as u64) as usize)
    }

    /// Fisher-Yates shuffle.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }
}
