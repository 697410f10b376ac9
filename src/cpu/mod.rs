//! The CPU backend: a buffer pool like the GPU's, the thread helpers and the vector math that the
//! op families' f32 kernels use (those live beside their op, in `src/ops/<family>/cpu.rs`, the
//! counterparts of `shaders/<family>.wgsl`). Ops run when they are called;
//! there is nothing to record or submit. Natively the work is split over the machine's cores with
//! rayon; in the browser it runs on one thread with wasm SIMD128.

pub mod math;

use crate::storage::{bucket, Stats};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// Memory handed out and free buffers by size bucket, shared by the device and its tensors.
#[derive(Default)]
pub(crate) struct CpuPool {
    free: HashMap<usize, Vec<Vec<f32>>>,
    next_id: u64,
    created: u64,
    bytes_created: u64,
    in_use: u64,
    peak_in_use: u64,
}

impl CpuPool {
    /// A buffer of at least `n` elements (its contents are whatever it held before) and its id.
    pub fn take(&mut self, n: usize) -> (u64, Vec<f32>) {
        let len = (bucket((n.max(1) * 4) as u64) / 4) as usize;
        self.in_use += (len * 4) as u64;
        self.peak_in_use = self.peak_in_use.max(self.in_use);
        self.next_id += 1;
        if let Some(v) = self.free.get_mut(&len).and_then(|v| v.pop()) {
            return (self.next_id, v);
        }
        self.created += 1;
        self.bytes_created += (len * 4) as u64;
        (self.next_id, vec![0.0; len])
    }

    pub fn give_back(&mut self, v: Vec<f32>) {
        self.in_use = self.in_use.saturating_sub((v.len() * 4) as u64);
        self.free.entry(v.len()).or_default().push(v);
    }
}

/// A tensor's memory on the CPU: goes back to the pool when the last clone drops.
pub(crate) struct CpuBuf {
    pub id: u64,
    pub data: RefCell<Vec<f32>>,
    pool: std::rc::Weak<RefCell<CpuPool>>,
}

impl Drop for CpuBuf {
    fn drop(&mut self) {
        if let Some(pool) = self.pool.upgrade() {
            if let Ok(mut p) = pool.try_borrow_mut() {
                p.give_back(std::mem::take(self.data.get_mut()));
            }
        }
    }
}

pub struct Cpu {
    pub(crate) pool: Rc<RefCell<CpuPool>>,
    threads: usize,
}

impl Default for Cpu {
    fn default() -> Self {
        Self::new()
    }
}

impl Cpu {
    pub fn new() -> Cpu {
        Cpu {
            pool: Rc::new(RefCell::new(CpuPool::default())),
            threads: threads(),
        }
    }

    pub(crate) fn alloc(&self, n: usize) -> CpuBuf {
        let (id, data) = self.pool.borrow_mut().take(n);
        CpuBuf {
            id,
            data: RefCell::new(data),
            pool: Rc::downgrade(&self.pool),
        }
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    pub fn describe(&self) -> String {
        let simd = if cfg!(all(target_arch = "wasm32", target_feature = "relaxed-simd")) {
            "wasm relaxed SIMD"
        } else if cfg!(target_arch = "wasm32") {
            "wasm SIMD128"
        } else {
            "native SIMD"
        };
        format!(
            "CPU backend ({} thread{}, {simd})",
            self.threads,
            if self.threads == 1 { "" } else { "s" }
        )
    }

    /// Largest tensor: 4 GiB natively; in the browser 1 GiB, since all of wasm32's memory is 4 GiB.
    pub fn max_tensor_bytes(&self) -> u64 {
        if cfg!(target_arch = "wasm32") {
            1 << 30
        } else {
            1 << 32
        }
    }

    pub fn stats(&self) -> Stats {
        let p = self.pool.borrow();
        Stats {
            buffers_created: p.created,
            bytes_created: p.bytes_created,
            bytes_in_use: p.in_use,
            peak_bytes_in_use: p.peak_in_use,
            ..Stats::default()
        }
    }

    pub fn reset_peak_memory(&self) {
        let mut p = self.pool.borrow_mut();
        p.peak_in_use = p.in_use;
    }

    pub fn trim(&self) {
        self.pool.borrow_mut().free.clear();
    }
}

/// Threads for the CPU kernels: the cores rayon sees natively, one in the browser.
fn threads() -> usize {
    #[cfg(not(target_arch = "wasm32"))]
    {
        rayon::current_num_threads().max(1)
    }
    #[cfg(target_arch = "wasm32")]
    {
        1
    }
}

/// Run `f(row_index, row)` over the rows of `out` (each `row_len` long), split over the threads
/// natively. Rows are independent, so the result does not depend on the split.
pub fn for_rows(out: &mut [f32], row_len: usize, f: impl Fn(usize, &mut [f32]) + Sync + Send) {
    if row_len == 0 {
        return;
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        use rayon::prelude::*;
        // Chunks of rows big enough that the split costs nothing next to the work.
        let rows_per_task = (16384 / row_len).max(1);
        out.par_chunks_mut(row_len * rows_per_task)
            .enumerate()
            .for_each(|(c, chunk)| {
                for (i, row) in chunk.chunks_mut(row_len).enumerate() {
                    f(c * rows_per_task + i, row);
                }
            });
    }
    #[cfg(target_arch = "wasm32")]
    {
        for (i, row) in out.chunks_mut(row_len).enumerate() {
            f(i, row);
        }
    }
}

/// `for_rows` over two outputs with their own row lengths (e.g. y and the per-row statistics).
pub fn for_rows2(
    a: &mut [f32],
    a_len: usize,
    b: &mut [f32],
    b_len: usize,
    f: impl Fn(usize, &mut [f32], &mut [f32]) + Sync + Send,
) {
    if a_len == 0 || b_len == 0 {
        return;
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        use rayon::prelude::*;
        let rows_per_task = (16384 / a_len).max(1);
        a.par_chunks_mut(a_len * rows_per_task)
            .zip(b.par_chunks_mut(b_len * rows_per_task))
            .enumerate()
            .for_each(|(c, (ca, cb))| {
                for (i, (ra, rb)) in ca.chunks_mut(a_len).zip(cb.chunks_mut(b_len)).enumerate() {
                    f(c * rows_per_task + i, ra, rb);
                }
            });
    }
    #[cfg(target_arch = "wasm32")]
    {
        for (i, (ra, rb)) in a.chunks_mut(a_len).zip(b.chunks_mut(b_len)).enumerate() {
            f(i, ra, rb);
        }
    }
}
