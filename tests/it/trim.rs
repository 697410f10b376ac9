//! Less work, same maths: a batch cut after its longest real sequence (`trim_batch`) gives the same
//! loss, the same gradient of every parameter and the same updated weights as the full 127-long
//! batch, and the learning-rate schedule counts the same tokens, on each backend. Dropout is off here: its masks are
//! drawn by element index, so with it on the two runs draw different (equally distributed) masks.

use attnlab::data::{generate, CharCorruptionDataset, NameDataset, Vocab, BLOCK_SIZE};
use attnlab::model::{Gpt, GptConfig, Variant};
use attnlab::train::run::{trim_batch, TRIM_MULTIPLE};
use attnlab::train::{TrainConfig, Trainer};
use attnlab::Device;
use std::rc::Rc;

use crate::backends;
use crate::same_step;
use backends::devices;
use same_step::{worst_differences, Params};

fn no_dropout(variant: Variant, vocab: usize) -> GptConfig {
    GptConfig {
        embd_pdrop: 0.0,
        resid_pdrop: 0.0,
        attn_pdrop: 0.0,
        ..GptConfig::tiny(variant, vocab)
    }
}

fn compare(dev: &Rc<Device>, variant: Variant, x: &[u32], y: &[u32], rows: usize, what: &str) {
    let what = format!("{} {what}", dev.kind());
    let t = BLOCK_SIZE - 1;
    let vocab = 1 + *x.iter().chain(y).max().expect("tokens") as usize;
    let (tx, ty, tt) = trim_batch(x, y, rows, t);
    assert!(tt < t, "{what}: nothing to trim (longest {tt})");
    assert_eq!(tt % TRIM_MULTIPLE, 0);
    // Nothing but PAD targets was cut.
    for r in 0..rows {
        assert!(y[r * t + tt..(r + 1) * t].iter().all(|&v| v == 0));
        assert_eq!(&x[r * t..r * t + tt], &tx[r * tt..(r + 1) * tt]);
    }
    let run = |xs: &[u32], ys: &[u32], len: usize| {
        let model = Gpt::new(dev, no_dropout(variant, vocab.max(8)), 11).expect("model");
        let mut tr = Trainer::new(model, TrainConfig::finetune_scratch(), 5).expect("trainer");
        let loss = tr
            .step_counting(xs, ys, rows, len, rows * t)
            .expect("step")
            .read()
            .expect("loss")[0];
        let grads: Params = tr
            .model
            .params
            .iter()
            .map(|p| {
                let g = p.var.grad_or_zeros().expect("grad").read().expect("read");
                let w = p.var.value().read().expect("read");
                (p.name.clone(), g, w)
            })
            .collect();
        (loss, grads, tr.tokens, tr.lr)
    };
    let (l_full, g_full, tok_full, lr_full) = run(x, y, t);
    let (l_trim, g_trim, tok_trim, lr_trim) = run(&tx, &ty, tt);
    println!(
        "{what} {}: T 127 → {tt}, loss {l_full} vs {l_trim}",
        variant.name()
    );
    assert!(
        ((l_full - l_trim) / l_full).abs() < 1e-5,
        "{what}: loss {l_full} vs {l_trim}"
    );
    assert_eq!(
        (tok_full, lr_full),
        (tok_trim, lr_trim),
        "the schedule counts full rows"
    );
    let lr = TrainConfig::finetune_scratch().learning_rate as f32;
    let (worst_g, worst_w) = worst_differences(&g_full, &g_trim, lr);
    println!(
        "  worst gradient difference {:.2e} ({}), weight {:.2e} of lr ({})",
        worst_g.0, worst_g.1, worst_w.0, worst_w.1
    );
    assert!(
        worst_g.0 < 1e-4 && worst_w.0 < 1e-2,
        "{what}: gradient of {} differs by {:.2e}, updated {} by {:.2e} of a learning rate",
        worst_g.1,
        worst_g.0,
        worst_w.1,
        worst_w.0
    );
}

fn batches() -> (Vec<u32>, Vec<u32>, Vec<u32>, Vec<u32>, usize) {
    let c = generate(21, 40);
    let vocab = Vocab::from_text(&c.wiki, "wiki.txt").expect("vocab");
    let rows = 6;
    let names = NameDataset::new(c.train_tsv.as_bytes(), "train.tsv", &vocab).expect("names");
    let (mut nx, mut ny) = (vec![], vec![]);
    for i in 0..rows {
        let (a, b) = names.get(i).expect("example");
        nx.extend(a);
        ny.extend(b);
    }
    let corrupt = CharCorruptionDataset::new(&c.wiki, "wiki.txt", &vocab, 3).expect("corrupt");
    let (mut cx, mut cy) = (vec![], vec![]);
    for i in 0..rows {
        let (a, b) = corrupt.get(i, 0).expect("example");
        cx.extend(a);
        cy.extend(b);
    }
    (nx, ny, cx, cy, rows)
}

#[test]
fn trimmed_batches_give_the_same_step_vanilla() {
    let (nx, ny, cx, cy, rows) = batches();
    for dev in devices() {
        compare(&dev, Variant::Vanilla, &nx, &ny, rows, "finetune batch");
        compare(&dev, Variant::Vanilla, &cx, &cy, rows, "pretrain batch");
    }
}

#[test]
fn trimmed_batches_give_the_same_step_synthesizer() {
    let (nx, ny, cx, cy, rows) = batches();
    for dev in devices() {
        compare(&dev, Variant::Synthesizer, &nx, &ny, rows, "finetune batch");
        compare(&dev, Variant::Synthesizer, &cx, &cy, rows, "pretrain batch");
    }
}

#[test]
fn trim_keeps_full_rows_and_never_cuts_a_target() {
    let t = 8;
    // Row 0 ends at 3, row 1 at 5: keep 8 = t.
    let x: Vec<u32> = (0..16).collect();
    let y = vec![0, 4, 5, 6, 0, 0, 0, 0, 0, 0, 7, 8, 9, 3, 0, 0];
    let (tx, ty, tt) = trim_batch(&x, &y, 2, t);
    assert_eq!((tx, ty, tt), (x.clone(), y.clone(), t));
    // All-PAD targets still keep one multiple.
    let (_, _, tt) = trim_batch(&vec![1; 2 * 40], &vec![0; 2 * 40], 2, 40);
    assert_eq!(tt, TRIM_MULTIPLE);
    // A target in the last column keeps everything.
    let mut y = vec![0u32; 2 * 40];
    y[79] = 3;
    assert_eq!(trim_batch(&vec![1; 80], &y, 2, 40).2, 40);
    let mut y = vec![0u32; 2 * 40];
    y[40 + 24] = 3; // row 1, column 24 → 25 needed → 32
    assert_eq!(trim_batch(&vec![1; 80], &y, 2, 40).2, 32);
}
