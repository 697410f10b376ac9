//! The runtime's promise to a training loop: after the first step, a repeated step creates no
//! buffer, staging buffer, pipeline or bind group, and is one submit. The step is a tiny 2-layer
//! linear model: forward through `linear`, a scalar loss, `Tape::backward`, AdamW, zero_grad.
//! These are about the GPU runtime (its buffer pool, bind-group cache and submits) and run on the
//! GPU only; packed steps whose lengths change reuse their bind groups too. The CPU backend's pool
//! makes the same promise for its buffers (the last test), and counts peak memory the same way.

use attnlab::autograd::{Tape, Var};
use attnlab::gpu::Stats;
use attnlab::ops::adamw::{adamw_step, AdamState, AdamW};
use attnlab::ops::matmul::{linear, matmul, Spec};
use attnlab::{Device, Tensor};
use std::rc::Rc;

const N: usize = 6;
const IN: usize = 8;
const HID: usize = 16;
const OUT: usize = 4;

/// Seeded values in [-0.5, 0.5) without pulling in an RNG.
fn data(seed: u32, n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| {
            ((i as u32)
                .wrapping_mul(2654435761)
                .wrapping_add(seed.wrapping_mul(40503))
                % 1000) as f32
                / 1000.0
                - 0.5
        })
        .collect()
}

struct Model {
    params: Vec<(Var, AdamState, bool)>,
    x: Var,
    ones: Var,
    u: Var,
    norm: Tensor,
}

impl Model {
    fn new(g: &Rc<Device>) -> Model {
        let mut params = vec![];
        // (shape, decay): weights decay, biases do not, as in the GPT's optimizer groups.
        for (i, (shape, decay)) in [
            (vec![HID, IN], true),
            (vec![HID], false),
            (vec![OUT, HID], true),
            (vec![OUT], false),
        ]
        .into_iter()
        .enumerate()
        {
            let n = shape.iter().product();
            let w = Var::leaf(
                Tensor::from_f32(g, &shape, &data(i as u32, n)).unwrap(),
                true,
            );
            // Gradient buffers made up front (as a trainer does): otherwise step 1 alone records
            // their zero fills, its params-arena offsets differ, and step 2 needs new bind groups.
            w.grad_or_zeros().unwrap();
            params.push((w, AdamState::new(g, &shape).unwrap(), decay));
        }
        Model {
            params,
            x: Var::leaf(Tensor::zeros(g, &[N, IN]).unwrap(), false),
            ones: Var::leaf(Tensor::full(g, &[1, N], 1.0).unwrap(), false),
            u: Var::leaf(
                Tensor::from_f32(g, &[OUT, 1], &data(9, OUT)).unwrap(),
                false,
            ),
            // The global gradient norm would come from a reduction kernel; a fixed value above
            // max_norm keeps clipping active without depending on it.
            norm: Tensor::from_f32(g, &[1], &[2.0]).unwrap(),
        }
    }

    /// One training step: new inputs, forward, backward, update, zero_grad, wait for the GPU.
    fn step(&mut self, g: &Rc<Device>, i: u32) {
        self.x.value().write_f32(&data(100 + i, N * IN)).unwrap();
        let tape = Tape::new();
        let p = &self.params;
        let h = linear(&tape, &self.x, &p[0].0, Some(&p[1].0)).unwrap();
        let y = linear(&tape, &h, &p[2].0, Some(&p[3].0)).unwrap();
        // loss = Σ_n (y·u)[n]: two matmuls, so the test needs no other op family.
        let yu = matmul(&tape, &y, &self.u, None, Spec::plain(N, OUT, 1), &[N, 1]).unwrap();
        let loss = matmul(&tape, &self.ones, &yu, None, Spec::plain(1, N, 1), &[1, 1]).unwrap();
        tape.backward(&loss).unwrap();
        let opt = AdamW {
            lr: 1e-2 / (i + 1) as f32,
            ..AdamW::default()
        };
        for (w, state, decay) in self.params.iter_mut() {
            adamw_step(&opt, w, state, *decay, &self.norm, 1.0).unwrap();
            w.zero_grad().unwrap();
        }
        pollster::block_on(g.sync()).unwrap();
    }
}

/// The counters that must not move once the pool is warm.
fn allocations(s: &Stats) -> [u64; 5] {
    [
        s.buffers_created,
        s.bytes_created,
        s.staging_created,
        s.bind_groups_created,
        s.pipelines_created,
    ]
}

#[test]
fn repeated_training_steps_should_allocate_nothing_after_the_first() {
    let g = Device::gpu_blocking().unwrap_or_else(|e| panic!("{e}"));
    let mut model = Model::new(&g);
    pollster::block_on(g.sync()).unwrap();
    let mut after = vec![];
    for i in 0..4 {
        let before = g.stats();
        model.step(&g, i);
        let s = g.stats();
        let submits = s.submits - before.submits;
        assert!((1..=2).contains(&submits), "step {i}: {submits} submits");
        assert!(s.dispatches > before.dispatches);
        after.push(s);
    }
    for (i, s) in after.iter().enumerate().skip(1) {
        assert_eq!(
            allocations(s),
            allocations(&after[0]),
            "step {} allocated: {:?} vs after step 1 {:?}",
            i + 1,
            s,
            after[0]
        );
        assert_eq!(
            s.dispatches - after[i - 1].dispatches,
            after[1].dispatches - after[0].dispatches,
            "every step records the same dispatches"
        );
    }
    // The model did train: the first weight moved away from its initial values.
    let w0 = model.params[0].0.value().read().unwrap();
    assert!(w0
        .iter()
        .zip(data(0, HID * IN))
        .any(|(a, b)| (a - b).abs() > 1e-3));
}

/// The real training step: a small GPT (dropout on) through the Trainer. After its first step,
/// repeated steps create no buffers, staging buffers, pipelines or bind groups.
#[test]
fn gpt_training_steps_allocate_nothing_after_the_first() {
    use attnlab::model::{Gpt, GptConfig, Variant};
    use attnlab::train::{TrainConfig, Trainer};
    let g = attnlab::Device::gpu_blocking().unwrap_or_else(|e| panic!("{e}"));
    for variant in [Variant::Vanilla, Variant::Synthesizer] {
        let cfg = GptConfig {
            block_size: 16,
            n_layer: 2,
            n_head: 2,
            n_embd: 16,
            ..GptConfig::tiny(variant, 20)
        };
        let mut tr =
            Trainer::new(Gpt::new(&g, cfg, 5).unwrap(), TrainConfig::pretrain(), 9).unwrap();
        let (rows, t) = (3, 15);
        let x: Vec<u32> = (0..rows * t).map(|i| (i % 19 + 1) as u32).collect();
        let y: Vec<u32> = (0..rows * t).map(|i| ((i * 7) % 20) as u32).collect();
        let mut after = vec![];
        for _ in 0..4 {
            let loss = tr.step(&x, &y, rows, t).unwrap();
            assert!(loss.read().unwrap()[0].is_finite());
            let s = g.stats();
            after.push((
                s.buffers_created,
                s.staging_created,
                s.pipelines_created,
                s.bind_groups_created,
            ));
        }
        assert!(
            after.windows(2).all(|w| w[0] == w[1]),
            "{variant:?}: (buffers, staging, pipelines, bind groups) after each step: {after:?}"
        );
    }
}

/// Real training packs its rows, so a step's token count changes from step to step. Buffers come
/// from size buckets, and each is bound whole, so once the buckets are warm such steps reuse their
/// bind groups: here 40 packed steps of 4 rows with new random lengths each make, over the last 20,
/// fewer new bind groups than a fifth of their dispatches (11% on lavapipe; with each tensor bound
/// at its own size the same steps made one for 41% of their dispatches).
#[test]
fn packed_steps_of_changing_lengths_reuse_their_bind_groups() {
    use attnlab::model::{Gpt, GptConfig, Variant};
    use attnlab::train::{TrainConfig, Trainer};
    use rand::{rngs::SmallRng, Rng, SeedableRng};
    let g = attnlab::Device::gpu_blocking().unwrap_or_else(|e| panic!("{e}"));
    let cfg = GptConfig {
        block_size: 32,
        n_layer: 2,
        n_head: 2,
        n_embd: 16,
        ..GptConfig::tiny(Variant::Vanilla, 20)
    };
    let mut tr = Trainer::new(Gpt::new(&g, cfg, 5).unwrap(), TrainConfig::pretrain(), 9).unwrap();
    let (rows, t) = (4, 31);
    let mut rng = SmallRng::seed_from_u64(3);
    let mut mid = g.stats();
    for step in 0..40 {
        // Each row: a random real length, then PAD (0) targets to the end.
        let mut x = vec![];
        let mut y = vec![];
        for _ in 0..rows {
            let len = rng.gen_range(8..=t);
            for j in 0..t {
                x.push(rng.gen_range(1..20u32));
                y.push(if j < len { rng.gen_range(1..20u32) } else { 0 });
            }
        }
        let loss = tr.step_packed(&x, &y, rows, t, rows * t).unwrap();
        assert!(loss.read().unwrap()[0].is_finite());
        if step == 19 {
            mid = g.stats();
        }
    }
    let end = g.stats();
    let made = end.bind_groups_created - mid.bind_groups_created;
    let dispatches = end.dispatches - mid.dispatches;
    assert!(
        made * 5 < dispatches,
        "the last 20 packed steps made {made} bind groups in {dispatches} dispatches"
    );
}

#[test]
fn peak_memory_counts_live_buffers_since_the_last_reset() {
    // Both pools keep the count (the CPU backend's and the GPU's), with the same size buckets.
    for g in [
        Device::cpu(),
        Device::gpu_blocking().unwrap_or_else(|e| panic!("{e}")),
    ] {
        let kind = g.kind();
        let s0 = g.stats();
        // 1,000 f32 = 4,000 bytes, which the pool rounds up to its 4,096-byte bucket.
        let a = attnlab::Tensor::zeros(&g, &[1000]).unwrap();
        let b = attnlab::Tensor::zeros(&g, &[1000]).unwrap();
        let s1 = g.stats();
        assert_eq!(s1.bytes_in_use - s0.bytes_in_use, 2 * 4096, "{kind}");
        assert!(s1.peak_bytes_in_use >= s1.bytes_in_use, "{kind}");
        drop(a);
        drop(b);
        let s2 = g.stats();
        assert_eq!(s2.bytes_in_use, s0.bytes_in_use, "{kind}");
        assert_eq!(
            s2.peak_bytes_in_use, s1.peak_bytes_in_use,
            "{kind}: the peak stays until reset"
        );
        g.reset_peak_memory();
        assert_eq!(g.stats().peak_bytes_in_use, s0.bytes_in_use, "{kind}");
    }
}

/// The CPU backend's pool: after the first step of the GPT's real training step (both variants,
/// dropout on), repeated steps take every tensor from the pool and create no buffer.
#[test]
fn cpu_backend_training_steps_allocate_nothing_after_the_first() {
    use attnlab::model::{Gpt, GptConfig, Variant};
    use attnlab::train::{TrainConfig, Trainer};
    let cpu = Device::cpu();
    for variant in [Variant::Vanilla, Variant::Synthesizer] {
        let cfg = GptConfig {
            block_size: 16,
            n_layer: 2,
            n_head: 2,
            n_embd: 16,
            ..GptConfig::tiny(variant, 20)
        };
        let mut tr =
            Trainer::new(Gpt::new(&cpu, cfg, 5).unwrap(), TrainConfig::pretrain(), 9).unwrap();
        let (rows, t) = (3, 15);
        let x: Vec<u32> = (0..rows * t).map(|i| (i % 19 + 1) as u32).collect();
        let y: Vec<u32> = (0..rows * t).map(|i| ((i * 7) % 20) as u32).collect();
        let mut after = vec![];
        for _ in 0..4 {
            let loss = tr.step(&x, &y, rows, t).unwrap();
            assert!(loss.read().unwrap()[0].is_finite());
            drop(loss);
            let s = cpu.stats();
            after.push((s.buffers_created, s.bytes_created, s.bytes_in_use));
        }
        assert!(after[0].0 > 0, "{variant:?}: the pool counted no buffer");
        assert!(
            after.windows(2).all(|w| w[0] == w[1]),
            "{variant:?}: (buffers created, bytes created, bytes in use) after each step: {after:?}"
        );
    }
}
