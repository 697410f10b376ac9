//! What both backends' storage pools share, so that neither backend depends on the other: the size
//! buckets pooled storage is rounded to, and the counters tests and benchmarks read.

/// Counters that tests and benchmarks read to prove the step does no hidden work.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub buffers_created: u64,
    pub bytes_created: u64,
    pub staging_created: u64,
    /// Bytes of the pool's storage buffers that live tensors hold now, and the most since
    /// `reset_peak_memory` (bucket sizes; staging and uniform buffers not counted).
    pub bytes_in_use: u64,
    pub peak_bytes_in_use: u64,
    pub pipelines_created: u64,
    pub bind_groups_created: u64,
    pub dispatches: u64,
    pub submits: u64,
}

/// Round a byte size up to its bucket: multiples of 256 below 4 KiB, then sizes of the form
/// m·2^k with 8 ≤ m < 16, so that no bucket wastes more than 1/8 of its size.
pub(crate) fn bucket(bytes: u64) -> u64 {
    let b = bytes.max(16);
    if b <= 4096 {
        return b.div_ceil(256) * 256;
    }
    let k = 63 - b.leading_zeros() as u64; // 2^k <= b < 2^(k+1)
    let step = 1u64 << (k - 3);
    b.div_ceil(step) * step
}

#[cfg(test)]
mod tests {
    use super::bucket;

    #[test]
    fn buckets_cover_and_waste_little() {
        for bytes in [
            1u64,
            4,
            255,
            256,
            257,
            4096,
            4097,
            65536,
            1_000_000,
            16256 * 256 * 4,
        ] {
            let b = bucket(bytes);
            assert!(b >= bytes && b.is_multiple_of(4), "{bytes} -> {b}");
            assert!(bytes < 4096 || (b - bytes) * 8 <= b, "{bytes} -> {b}");
        }
        assert_eq!(bucket(5000), bucket(5000));
    }
}
