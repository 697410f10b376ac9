//! Greedy decoding: deterministic, and batched decoding equals one prompt at a time.

use attnlab::model::{Gpt, GptConfig, Variant};
use attnlab::train::{sample_greedy, sample_greedy_batch};
use attnlab::Device;

/// Greedy decoding is deterministic and batched decoding equals one prompt at a time, on `dev`
/// with `n` prompts of lengths 1 to 6 (more than one chunk where `n` exceeds the chunk size).
fn batching_changes_nothing(dev: std::rc::Rc<Device>, n: usize) {
    for variant in [Variant::Vanilla, Variant::Synthesizer] {
        let model = Gpt::new(&dev, GptConfig::tiny(variant, 20), 3).expect("model");
        let prompts: Vec<Vec<u32>> = (0..n)
            .map(|i| {
                (0..1 + (i * 7) % 6)
                    .map(|j| ((i + 3 * j) % 19 + 1) as u32)
                    .collect()
            })
            .collect();
        let steps = 6;
        let singles: Vec<Vec<u32>> = prompts
            .iter()
            .map(|p| pollster::block_on(sample_greedy(&model, p, steps)).expect("decode"))
            .collect();
        let again = pollster::block_on(sample_greedy(&model, &prompts[2], steps)).expect("decode");
        assert_eq!(again, singles[2], "{variant:?}: same weights, same output");
        let mut reports = Vec::new();
        let batch =
            pollster::block_on(sample_greedy_batch(&model, &prompts, steps, &mut |d, t| {
                reports.push((d, t))
            }))
            .expect("batch");
        assert_eq!(
            batch, singles,
            "{variant:?}: batched decoding equals one-by-one"
        );
        assert_eq!(
            reports.last(),
            Some(&(n, n)),
            "{variant:?}: progress ends at all done"
        );
        for (p, s) in prompts.iter().zip(&singles) {
            assert_eq!(s.len(), p.len() + steps);
            assert_eq!(&s[..p.len()], p.as_slice());
        }
    }
}

#[test]
fn greedy_decoding_is_deterministic_and_batching_changes_nothing() {
    batching_changes_nothing(Device::gpu_blocking().unwrap_or_else(|e| panic!("{e}")), 4);
}

#[test]
fn batched_decoding_on_the_cpu_backend_spans_chunks_and_changes_nothing() {
    // 70 prompts: three chunks of at most 32 on the CPU backend, each reported.
    let dev = Device::cpu();
    let mut chunks = 0;
    let model = Gpt::new(&dev, GptConfig::tiny(Variant::Vanilla, 20), 3).expect("model");
    let prompts = vec![vec![1u32, 2]; 70];
    pollster::block_on(sample_greedy_batch(&model, &prompts, 2, &mut |_, _| {
        chunks += 1
    }))
    .expect("batch");
    assert_eq!(chunks, 3, "70 prompts in chunks of 32");
    batching_changes_nothing(dev, 70);
}
