//! Embedding on both backends: the gather vs the f64 reference, the scatter-add backward with heavy
//! repetition (token and position ids), finite differences, out-of-range ids.

use crate::common::*;
use attnlab::autograd::{Tape, Var};
use attnlab::ops::embedding as emb;
use attnlab::Tensor;
use rand::{rngs::SmallRng, Rng, SeedableRng};

/// (N, V, C, pattern): pattern 0 = random ids, 1 = position ids 0..V repeated (N / V batch rows).
const CASES: &[(usize, usize, usize, u8)] = &[
    (1, 1, 1, 0),
    (5, 3, 17, 0),
    (127, 17, 3, 0),
    (300, 256, 33, 0),
    (4 * 127, 127, 17, 1),
    (3 * 17, 17, 300, 1),
    // Many ids: the GPU's two-pass backward (chunks of ids, then their sum).
    (2100, 256, 33, 0),
    (16 * 127, 127, 64, 1),
];

fn ids(seed: u64, n: usize, v: usize, pattern: u8) -> Vec<u32> {
    let mut r = SmallRng::seed_from_u64(seed);
    (0..n)
        .map(|i| {
            if pattern == 1 {
                (i % v) as u32
            } else {
                r.gen_range(0..v as u32)
            }
        })
        .collect()
}

#[test]
fn embedding_forward_should_match_reference() {
    for g in devices() {
        let kind = g.kind();
        for &(n, v, c, pattern) in CASES {
            let (id, table) = (ids(1, n, v, pattern), uniform(2, v * c));
            let out = Tensor::uninit(&g, &[n, c]).unwrap();
            emb::embedding_into(
                &Tensor::from_u32(&g, &[n], &id).unwrap(),
                &upload(&g, &[v, c], &table),
                &out,
            )
            .unwrap();
            // A gather is exact.
            assert_close(
                &format!("{kind} emb n={n} v={v} c={c}"),
                &download(&out),
                &to_f64(&to_f32(&emb::embedding_ref(&id, &table, c))),
                0.0,
                0.0,
            );
        }
    }
}

#[test]
fn embedding_backward_should_match_reference() {
    for g in devices() {
        let kind = g.kind();
        for &(n, v, c, pattern) in CASES {
            let (id, table, dout, pre) = (
                ids(3, n, v, pattern),
                uniform(4, v * c),
                uniform(5, n * c),
                uniform(6, v * c),
            );
            let mut want = pre.clone();
            emb::embedding_backward_ref(&id, &dout, c, &mut want);
            // Through the tape: dtable pre-filled, so the scatter must accumulate.
            let tape = Tape::new();
            let vt = Var::leaf(upload(&g, &[v, c], &table), true);
            vt.grad_or_zeros()
                .unwrap()
                .write_f32(&to_f32(&pre))
                .unwrap();
            let out =
                emb::embedding(&tape, &Tensor::from_u32(&g, &[n], &id).unwrap(), &vt).unwrap();
            out.grad_or_zeros()
                .unwrap()
                .write_f32(&to_f32(&dout))
                .unwrap();
            tape.backward(&Var::leaf(Tensor::zeros(&g, &[1]).unwrap(), true))
                .unwrap();
            assert_close(
                &format!("{kind} dtable n={n} v={v} c={c}"),
                &download(&vt.grad().unwrap()),
                &want,
                1e-5,
                1e-5,
            );
        }
    }
}

#[test]
fn embedding_backward_should_match_finite_differences() {
    for &(n, v, c, pattern) in &CASES[..5] {
        let (id, table, dout) = (ids(7, n, v, pattern), uniform(8, v * c), uniform(9, n * c));
        let mut d = vec![0.0; v * c];
        emb::embedding_backward_ref(&id, &dout, c, &mut d);
        check_fd(
            "dtable",
            &table,
            &d,
            |t| dot(&emb::embedding_ref(&id, t, c), &dout),
            60,
        );
    }
}

#[test]
fn embedding_backward_is_deterministic_under_repetition() {
    for g in devices() {
        let kind = g.kind();
        let (n, v, c) = (2000, 3, 64);
        let (id, dout) = (ids(10, n, v, 0), uniform(11, n * c));
        let (tid, tdout) = (
            Tensor::from_u32(&g, &[n], &id).unwrap(),
            upload(&g, &[n, c], &dout),
        );
        let runs: Vec<Vec<f32>> = (0..3)
            .map(|_| {
                let d = Tensor::zeros(&g, &[v, c]).unwrap();
                emb::embedding_backward_into(&tid, &tdout, &d).unwrap();
                d.read().unwrap()
            })
            .collect();
        assert!(
            runs[0] == runs[1] && runs[1] == runs[2],
            "{kind}: three runs differ"
        );
    }
}

/// Ids ≥ V: both backends' kernels read zeros and scatter nothing for them, and `check_ids`
/// rejects them where the ids are still on the host.
#[test]
fn embedding_out_of_range_ids_read_nothing_and_are_rejected_by_check_ids() {
    let (v, c) = (3, 5);
    let id = [1u32, 3, 4000000];
    let table = uniform(12, v * c);
    for g in devices() {
        let kind = g.kind();
        let out = Tensor::uninit(&g, &[3, c]).unwrap();
        let tid = Tensor::from_u32(&g, &[3], &id).unwrap();
        emb::embedding_into(&tid, &upload(&g, &[v, c], &table), &out).unwrap();
        let got = download(&out);
        assert!(got[c..].iter().all(|&x| x == 0.0), "{kind}: {got:?}");
        let d = Tensor::zeros(&g, &[v, c]).unwrap();
        emb::embedding_backward_into(&tid, &Tensor::full(&g, &[3, c], 1.0).unwrap(), &d).unwrap();
        let dd = download(&d);
        assert_eq!(dd.iter().sum::<f64>(), c as f64, "{kind}: {dd:?}");
        let tape = Tape::new();
        let err = emb::embedding(
            &tape,
            &tid,
            &Var::leaf(Tensor::zeros(&g, &[15]).unwrap(), true),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("[3]") && err.contains("[15]"), "{kind}: {err}");
    }
    let err = emb::check_ids(&id, v).unwrap_err().to_string();
    assert!(err.contains("id[1] = 3"), "{err}");
}
