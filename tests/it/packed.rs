//! Half the work, the same mathematics: a batch packed to its rows' real tokens
//! (`Trainer::step_packed`, what training runs) gives the loss, the gradient of every parameter and
//! the updated weights of the padded 127-long batch (`Trainer::step_counting`), and the schedule
//! counts the same tokens — on each backend, for both variants, with dropout off and on (its masks
//! are keyed by (row, position), so both layouts drop the same elements), for real pretraining and
//! finetuning batches and for batches with a one-token row and a full 127-token row.

use attnlab::data::{generate, CharCorruptionDataset, NameDataset, Vocab, BLOCK_SIZE};
use attnlab::model::{Gpt, GptConfig, Variant};
use attnlab::train::{TrainConfig, Trainer};
use attnlab::Device;
use std::rc::Rc;

use crate::backends;
use crate::same_step;
use backends::devices;
use same_step::{worst_differences, Params};

fn config(variant: Variant, vocab: usize, dropout: f32) -> GptConfig {
    GptConfig {
        embd_pdrop: dropout,
        resid_pdrop: dropout,
        attn_pdrop: dropout,
        ..GptConfig::tiny(variant, vocab)
    }
}

type Step = (f32, Params, f64, f64);

/// How a step is taken: the padded batch, the packed one, or the packed one as micro-batches of
/// so many rows (`Trainer::micro_begin`/`micro_next`/`micro_finish`).
#[derive(Clone, Copy, Debug)]
enum Mode {
    Padded,
    Packed,
    Micro(usize),
}

fn step(dev: &Rc<Device>, cfg: GptConfig, x: &[u32], y: &[u32], rows: usize, mode: Mode) -> Step {
    let t = BLOCK_SIZE - 1;
    let model = Gpt::new(dev, cfg, 11).expect("model");
    let mut tr = Trainer::new(model, TrainConfig::finetune_scratch(), 5).expect("trainer");
    let loss = match mode {
        Mode::Packed => tr.step_packed(x, y, rows, t, rows * t),
        Mode::Padded => tr.step_counting(x, y, rows, t, rows * t),
        Mode::Micro(micro) => {
            let mut m = tr.micro_begin(x, y, rows, t, rows * t).expect("begin");
            let mut parts = 1;
            while tr.micro_next(&mut m, micro).expect("micro-batch") {
                parts += 1;
            }
            assert_eq!(parts, rows.div_ceil(micro), "micro-batches of {micro} rows");
            tr.micro_finish(m)
        }
    };
    let loss = loss.expect("step").read().expect("loss")[0];
    let params = tr
        .model
        .params
        .iter()
        .map(|p| {
            let g = p.var.grad_or_zeros().expect("grad").read().expect("read");
            let w = p.var.value().read().expect("read");
            (p.name.clone(), g, w)
        })
        .collect();
    (loss, params, tr.tokens, tr.lr)
}

fn compare(dev: &Rc<Device>, variant: Variant, x: &[u32], y: &[u32], rows: usize, what: &str) {
    compare_modes(dev, variant, x, y, rows, what, Mode::Packed);
}

fn compare_modes(
    dev: &Rc<Device>,
    variant: Variant,
    x: &[u32],
    y: &[u32],
    rows: usize,
    what: &str,
    mode: Mode,
) {
    let vocab = 1 + *x.iter().chain(y).max().expect("tokens") as usize;
    for dropout in [0.0f32, 0.1] {
        let what = format!(
            "{} {} {what}, dropout {dropout}",
            dev.kind(),
            variant.name()
        );
        let cfg = config(variant, vocab.max(8), dropout);
        let (l_pad, p_pad, tok_pad, lr_pad) = step(dev, cfg.clone(), x, y, rows, Mode::Padded);
        let (l_pack, p_pack, tok_pack, lr_pack) = step(dev, cfg, x, y, rows, mode);
        let what = format!("{what}, {mode:?}");
        assert!(l_pad.is_finite(), "{what}: loss {l_pad}");
        assert!(
            ((l_pad - l_pack) / l_pad).abs() < 1e-5,
            "{what}: loss padded {l_pad} vs packed {l_pack}"
        );
        assert_eq!(
            (tok_pad, lr_pad),
            (tok_pack, lr_pack),
            "{what}: the schedule counts full rows"
        );
        // Gradients within 1e-4 of their largest element (floored: same_step.rs says why);
        // updated weights within 1% of a learning rate.
        let lr = TrainConfig::finetune_scratch().learning_rate as f32;
        let (worst_g, worst_w) = worst_differences(&p_pad, &p_pack, lr);
        println!(
            "{what}: loss {l_pad} vs {l_pack}, worst gradient difference {:.2e} ({}), weight {:.2e} of lr ({})",
            worst_g.0, worst_g.1, worst_w.0, worst_w.1
        );
        assert!(
            worst_g.0 < 1e-4,
            "{what}: gradient of {} differs by {:.2e}",
            worst_g.1,
            worst_g.0
        );
        // Micro-batches sum each gradient in more parts (another order again): up to 5% of a
        // rate for such near-zero elements; a wrong gradient still moves a weight by about 100%.
        let tol = if matches!(mode, Mode::Micro(_)) {
            5e-2
        } else {
            1e-2
        };
        assert!(
            worst_w.0 < tol,
            "{what}: updated {} differs by {:.2e} of a learning rate",
            worst_w.1,
            worst_w.0
        );
    }
}

/// Real batches from the generated corpus: finetuning questions and span-corruption examples.
fn batches() -> (Vec<u32>, Vec<u32>, Vec<u32>, Vec<u32>, usize) {
    let c = generate(21, 40);
    let vocab = Vocab::from_text(&c.wiki, "wiki.txt").expect("vocab");
    let rows = 6;
    let names = NameDataset::new(c.train_tsv.as_bytes(), "train.tsv", &vocab).expect("names");
    let corrupt = CharCorruptionDataset::new(&c.wiki, "wiki.txt", &vocab, 3).expect("corrupt");
    let (mut nx, mut ny, mut cx, mut cy) = (vec![], vec![], vec![], vec![]);
    for i in 0..rows {
        let (a, b) = names.get(i).expect("example");
        nx.extend(a);
        ny.extend(b);
        let (a, b) = corrupt.get(i, 0).expect("example");
        cx.extend(a);
        cy.extend(b);
    }
    (nx, ny, cx, cy, rows)
}

/// Three rows: one whose only target is its first position, one whose every position is a real
/// target (127 tokens), and one with no target at all.
fn edge_batch() -> (Vec<u32>, Vec<u32>, usize) {
    let t = BLOCK_SIZE - 1;
    let tok = |i: usize| 1 + (i * 7 % 19) as u32;
    let (mut x, mut y) = (vec![0u32; 3 * t], vec![0u32; 3 * t]);
    x[0] = tok(0);
    y[0] = tok(1);
    for i in 0..t {
        x[t + i] = tok(i + 3);
        y[t + i] = tok(i + 4);
    }
    for i in 0..10 {
        x[2 * t + i] = tok(i);
    }
    (x, y, 3)
}

/// A step as micro-batches (what the page runs as separate calls, so Pause answers between them)
/// gives the whole padded step's loss, gradients and update: each micro-batch's loss is weighted by
/// its share of the targets and its dropout keyed by the whole batch's rows.
#[test]
fn micro_batches_give_the_whole_step() {
    let (nx, ny, cx, cy, rows) = batches();
    let (ex, ey, erows) = edge_batch();
    for dev in devices() {
        for variant in [Variant::Vanilla, Variant::Synthesizer] {
            for micro in [1, 4] {
                compare_modes(
                    &dev,
                    variant,
                    &nx,
                    &ny,
                    rows,
                    "finetune batch",
                    Mode::Micro(micro),
                );
                compare_modes(
                    &dev,
                    variant,
                    &cx,
                    &cy,
                    rows,
                    "pretrain batch",
                    Mode::Micro(micro),
                );
            }
            compare_modes(&dev, variant, &ex, &ey, erows, "edge batch", Mode::Micro(2));
        }
    }
}

#[test]
fn a_micro_batched_step_cannot_finish_early() {
    let (nx, ny, _, _, rows) = batches();
    let dev = Device::cpu();
    let vocab = 1 + *nx.iter().chain(&ny).max().expect("tokens") as usize;
    let model = Gpt::new(&dev, config(Variant::Vanilla, vocab, 0.0), 11).expect("model");
    let mut tr = Trainer::new(model, TrainConfig::finetune_scratch(), 5).expect("trainer");
    let t = BLOCK_SIZE - 1;
    let mut m = tr.micro_begin(&nx, &ny, rows, t, rows * t).expect("begin");
    assert!(tr.micro_next(&mut m, 2).expect("part"));
    assert_eq!(m.progress(), (2, rows));
    let err = tr.micro_finish(m).unwrap_err().to_string();
    assert!(err.contains("4 rows left"), "{err}");
    assert_eq!(tr.steps, 0, "no update was made");
    let bad = tr
        .micro_begin(&nx[..10], &ny, rows, t, rows * t)
        .unwrap_err()
        .to_string();
    assert!(bad.contains("needs 6 x 127"), "{bad}");
}

#[test]
fn packed_batches_give_the_padded_step_vanilla() {
    let (nx, ny, cx, cy, rows) = batches();
    let (ex, ey, erows) = edge_batch();
    for dev in devices() {
        compare(&dev, Variant::Vanilla, &nx, &ny, rows, "finetune batch");
        compare(&dev, Variant::Vanilla, &cx, &cy, rows, "pretrain batch");
        compare(
            &dev,
            Variant::Vanilla,
            &ex,
            &ey,
            erows,
            "1-token and 127-token rows",
        );
    }
}

#[test]
fn packed_batches_give_the_padded_step_synthesizer() {
    let (nx, ny, cx, cy, rows) = batches();
    let (ex, ey, erows) = edge_batch();
    for dev in devices() {
        compare(&dev, Variant::Synthesizer, &nx, &ny, rows, "finetune batch");
        compare(&dev, Variant::Synthesizer, &cx, &cy, rows, "pretrain batch");
        compare(
            &dev,
            Variant::Synthesizer,
            &ex,
            &ey,
            erows,
            "1-token and 127-token rows",
        );
    }
}

#[test]
fn packed_lengths_stop_at_each_rows_last_target() {
    use attnlab::model::layout::{pack, target_lengths};
    let t = 5;
    let y = [
        0, 3, 0, 0, 0, /**/ 1, 2, 3, 4, 5, /**/ 0, 0, 0, 0, 0,
    ];
    assert_eq!(target_lengths(&y, 3, t), vec![2, 5, 0]);
    let x: Vec<u32> = (0..15).collect();
    assert_eq!(pack(&x, &[2, 5, 0], t), vec![0, 1, 5, 6, 7, 8, 9]);
    // No target anywhere: the first row keeps one token, so a batch is never empty.
    assert_eq!(target_lengths(&[0; 10], 2, t), vec![1, 0]);
}
