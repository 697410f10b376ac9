//! Learning through the autograd, on each backend: a small MLP and a one-block attention model,
//! built from the ops, must drive the loss on one fixed batch down by at least 10×.

use attnlab::autograd::{Tape, Var};
use attnlab::model::{Gpt, GptConfig, Variant};
use attnlab::ops::adamw::{adamw_step_into, AdamState, AdamW};
use attnlab::ops::{cross_entropy, elementwise, matmul};
use attnlab::train::{TrainConfig, Trainer};
use attnlab::{Device, Tensor};
use rand::{rngs::SmallRng, Rng, SeedableRng};
use std::rc::Rc;

use crate::backends;
use backends::devices;

fn read1(t: &Tensor) -> f32 {
    t.read().expect("readback")[0]
}

#[test]
fn mlp_overfits_a_batch() {
    for g in devices() {
        mlp_overfits(&g);
    }
}

fn mlp_overfits(g: &Rc<Device>) {
    let (n, d, h, v) = (16, 8, 32, 6);
    let mut r = SmallRng::seed_from_u64(7);
    let x: Vec<f32> = (0..n * d).map(|_| r.gen_range(-1.0..1.0)).collect();
    let y: Vec<u32> = (0..n).map(|_| r.gen_range(1..v as u32)).collect();
    let mut init = |shape: &[usize], std: f32| {
        let vals: Vec<f32> = (0..shape.iter().product::<usize>())
            .map(|_| r.gen_range(-std..std))
            .collect();
        Var::leaf(Tensor::from_f32(g, shape, &vals).unwrap(), true)
    };
    let params = [
        init(&[h, d], 0.5),
        init(&[h], 0.1),
        init(&[v, h], 0.3),
        init(&[v], 0.1),
    ];
    let mut states: Vec<AdamState> = params
        .iter()
        .map(|p| AdamState::new(p.device(), p.shape()).unwrap())
        .collect();
    let opt = AdamW {
        lr: 0.02,
        beta1: 0.9,
        beta2: 0.95,
        eps: 1e-8,
        weight_decay: 0.0,
    };
    let xs = Var::leaf(Tensor::from_f32(g, &[n, d], &x).unwrap(), false);
    let ys = Tensor::from_u32(g, &[n], &y).unwrap();
    let norm = Tensor::full(g, &[1], 0.0).unwrap();
    let mut losses = vec![];
    for _ in 0..150 {
        for p in &params {
            p.zero_grad().unwrap();
        }
        let tape = Tape::new();
        let hdn = elementwise::relu(
            &tape,
            &matmul::linear(&tape, &xs, &params[0], Some(&params[1])).unwrap(),
        )
        .unwrap();
        let logits = matmul::linear(&tape, &hdn, &params[2], Some(&params[3])).unwrap();
        let loss = cross_entropy::cross_entropy(&tape, &logits, &ys).unwrap();
        tape.backward(&loss).unwrap();
        for (p, st) in params.iter().zip(states.iter_mut()) {
            adamw_step_into(
                &opt,
                p.value(),
                &p.grad().unwrap(),
                st,
                true,
                &norm,
                f32::INFINITY,
            )
            .unwrap();
        }
        losses.push(read1(loss.value()));
    }
    let (first, last) = (losses[0], *losses.last().unwrap());
    assert!(
        last * 10.0 <= first,
        "{}: MLP loss went from {first} to {last}",
        g.kind()
    );
}

#[test]
fn one_block_attention_model_overfits_a_batch() {
    for g in devices() {
        for variant in [Variant::Vanilla, Variant::Synthesizer] {
            one_block_overfits(&g, variant);
        }
    }
}

fn one_block_overfits(g: &Rc<Device>, variant: Variant) {
    let cfg = GptConfig {
        variant,
        vocab_size: 12,
        block_size: 17,
        n_layer: 1,
        n_head: 2,
        n_embd: 32,
        embd_pdrop: 0.0,
        resid_pdrop: 0.0,
        attn_pdrop: 0.0,
    };
    let model = Gpt::new(g, cfg, 1).unwrap();
    let tc = TrainConfig {
        lr_decay: false,
        learning_rate: 1e-2,
        weight_decay: 0.0,
        ..TrainConfig::pretrain()
    };
    let mut tr = Trainer::new(model, tc, 0).unwrap();
    let (rows, t) = (4, 16);
    let mut r = SmallRng::seed_from_u64(3);
    let seq: Vec<u32> = (0..rows * (t + 1)).map(|_| r.gen_range(2..12)).collect();
    let x: Vec<u32> = (0..rows)
        .flat_map(|i| seq[i * (t + 1)..i * (t + 1) + t].to_vec())
        .collect();
    let y: Vec<u32> = (0..rows)
        .flat_map(|i| seq[i * (t + 1) + 1..(i + 1) * (t + 1)].to_vec())
        .collect();
    let mut losses = vec![];
    for _ in 0..120 {
        let loss = tr.step(&x, &y, rows, t).unwrap();
        losses.push(read1(&loss));
    }
    let (first, last) = (losses[0], *losses.last().unwrap());
    assert!(
        last * 10.0 <= first,
        "{variant:?} on the {} backend: loss went from {first} to {last}",
        g.kind()
    );
}
