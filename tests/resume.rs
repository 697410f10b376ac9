//! Exact resume: N steps, save the training state, load it into a fresh trainer, N more steps —
//! the same losses as 2N uninterrupted steps on the same device (dropout on, span corruption
//! drawing new masks each epoch, the learning-rate schedule running).

use attnlab::data::{generate, CharCorruptionDataset, Vocab};
use attnlab::model::{checkpoint, Gpt, GptConfig, Variant};
use attnlab::train::{pretrain, Hooks, Progress, TrainConfig, Trainer};
use attnlab::Device;

const N: u64 = 3;

fn losses(tr: &mut Trainer, data: &CharCorruptionDataset) -> Vec<(u64, f32)> {
    let mut out = vec![];
    let clock = || 0.0;
    let mut on = |p: Progress| out.push((p.step, p.loss));
    let mut hooks = Hooks {
        every: 1,
        clock: &clock,
        on_progress: &mut on,
        on_epoch_end: None,
    };
    pollster::block_on(pretrain(tr, data, &mut hooks)).expect("train");
    out
}

fn check(variant: Variant) {
    let gpu = Device::gpu_blocking().unwrap_or_else(|e| panic!("{e}"));
    let c = generate(3, 10);
    let vocab = Vocab::from_text(&c.wiki, "wiki.txt").expect("vocab");
    let data = CharCorruptionDataset::new(&c.wiki, "wiki.txt", &vocab, 5).expect("data");
    let mcfg = GptConfig {
        n_layer: 1,
        n_head: 2,
        n_embd: 16,
        ..GptConfig::tiny(variant, vocab.len())
    };
    // Batch 4 over 10 documents: 3 steps per epoch, so the resume point (step 3) is an epoch edge
    // and the last step of the first half is a short batch.
    let tc = |steps: u64| TrainConfig {
        batch_size: 4,
        max_epochs: 10,
        warmup_tokens: 1000.0,
        final_tokens: 20_000.0,
        max_steps: Some(steps),
        ..TrainConfig::pretrain()
    };
    let itos: String = vocab.itos.iter().collect();

    let mut whole = Trainer::new(
        Gpt::new(&gpu, mcfg.clone(), 9).expect("model"),
        tc(2 * N),
        4,
    )
    .expect("trainer");
    let all = losses(&mut whole, &data);
    assert_eq!(all.len(), 2 * N as usize);

    let mut first =
        Trainer::new(Gpt::new(&gpu, mcfg.clone(), 9).expect("model"), tc(N), 4).expect("trainer");
    let head = losses(&mut first, &data);
    let bytes = pollster::block_on(first.state_to_bytes(&itos)).expect("save");
    drop(first);
    let (model, _) = checkpoint::from_bytes(&gpu, &bytes, Some(&mcfg), "state").expect("load");
    let mut second = Trainer::resume(model, tc(2 * N), &bytes, "state").expect("resume");
    assert_eq!(second.steps, N);
    let tail = losses(&mut second, &data);

    let resumed: Vec<(u64, f32)> = head.into_iter().chain(tail).collect();
    assert_eq!(resumed.len(), all.len());
    for ((s1, a), (s2, b)) in all.iter().zip(&resumed) {
        assert_eq!(s1, s2);
        assert!(
            (a - b).abs() <= 1e-6 * a.abs().max(1.0),
            "{variant:?} step {s1}: uninterrupted {a}, resumed {b}"
        );
    }
    // The saved state is still a plain checkpoint, and a plain checkpoint cannot resume.
    let plain = pollster::block_on(checkpoint::to_bytes(&whole.model, &itos)).expect("plain");
    let (model, _) = checkpoint::from_bytes(&gpu, &plain, Some(&mcfg), "plain.st").expect("load");
    let err = Trainer::resume(model, tc(1), &plain, "plain.st")
        .err()
        .expect("refused");
    assert!(err
        .to_string()
        .contains("plain.st is a model checkpoint without training state"));
}

#[test]
fn vanilla_resume_gives_the_uninterrupted_losses() {
    check(Variant::Vanilla);
}

#[test]
fn synthesizer_resume_gives_the_uninterrupted_losses() {
    check(Variant::Synthesizer);
}
