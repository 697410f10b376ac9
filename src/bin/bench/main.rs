//! Matmul throughput at the GPT's shapes (B=128, T=127, C=256, 8 heads of 32): GFLOP/s of
//! `matmul_into` (wall clock over `--repeats` dispatches after a warm-up, each ended by `sync`) beside a
//! plain single-threaded f32 CPU triple loop (i-k-j order) on contiguous matrices of the same sizes.
//! `--quick` divides the row count and the batch count by 16. `--step ROWS` times the tiny preset's
//! training step instead, and `--step ROWS --profile` adds a per-kernel breakdown. `--layouts ROWS`
//! (alias `--trim`) times the step on real batches padded, trimmed and packed (`--data DIR` for
//! the course's files, `--kind pretrain|finetune`). Native only;
//! the matmul cases and the training step come from `attnlab::bench`, which the page's Benchmark
//! card (src/wasm/bench.rs) runs too, so both time the same work. `--device auto|gpu|cpu` picks the
//! backend as the CLI does; `--step ROWS --size assignment` times the assignment's model, and
//! `--variant vanilla|synthesizer` only one variant. `--decode [TSV]` times the evaluation's greedy
//! decoding of the TSV's first 500 questions (default: the course's birth_dev.tsv under
//! ../shared/data/cs224n-a5/, else the built-in corpus's training questions) with the assignment's
//! model, without and with the key/value cache, in one run. `--attention fused|composed` picks the
//! vanilla model's attention on a GPU (the fused kernels or matmul, causal_softmax, dropout, matmul);
//! `--attention both` with `--step` times each in turn and prints their ratio.

// say!, say_part!, tell!: printing that never panics (`bench … | head` closes the pipe).
#[cfg(not(target_arch = "wasm32"))]
#[macro_use]
extern crate attnlab;

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    if let Err(e) = native::run() {
        tell!("bench: {e}");
        std::process::exit(1);
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod native;
