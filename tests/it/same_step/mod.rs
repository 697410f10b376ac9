//! How two ways of taking one training step are compared (tests/it/packed.rs: padded vs packed and
//! micro-batched; tests/it/trim.rs: full rows vs trimmed): the same mathematics summed in another
//! order, so equal up to rounding, and a wrong gradient still far outside the bounds.
#![allow(dead_code)] // each test file uses only some of these

/// Each parameter after the step: (name, gradient, updated weight).
pub type Params = Vec<(String, Vec<f32>, Vec<f32>)>;

/// max |a − b| / max |a|.
pub fn rel(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    let scale = a.iter().fold(0f32, |m, v| m.max(v.abs())).max(1e-12);
    a.iter().zip(b).fold(0f32, |m, (x, y)| m.max((x - y).abs())) / scale
}

fn max_abs(v: &[f32]) -> f32 {
    v.iter().fold(0f32, |m, x| m.max(x.abs()))
}

/// The worst gradient difference, relative to the tensor's largest element, and the worst updated
/// weight difference, in learning rates, each with the parameter's name.
///
/// A parameter whose gradient is zero in exact arithmetic (the key bias: a softmax does not see a
/// shift shared by all keys) holds rounding noise only, so its scale is floored at 1e-4 of the
/// model's largest gradient: the noise of another summation order is not an error. The weights are
/// compared in learning rates because AdamW divides each gradient element by its own size: an
/// element near zero whose rounding differs moves its weight by a fraction of the rate, while a
/// wrong gradient moves it by about the whole rate.
pub fn worst_differences(a: &Params, b: &Params, lr: f32) -> ((f32, String), (f32, String)) {
    assert_eq!(a.len(), b.len());
    let floor = 1e-4 * a.iter().fold(0f32, |m, (_, g, _)| m.max(max_abs(g)));
    let (mut worst_g, mut worst_w) = ((0f32, String::new()), (0f32, String::new()));
    for ((name, ga, wa), (_, gb, wb)) in a.iter().zip(b) {
        let eg = if max_abs(ga) < floor {
            let d = ga
                .iter()
                .zip(gb)
                .fold(0f32, |m, (x, y)| m.max((x - y).abs()));
            d / floor
        } else {
            rel(ga, gb)
        };
        let ew = wa
            .iter()
            .zip(wb)
            .fold(0f32, |m, (x, y)| m.max((x - y).abs()))
            / lr;
        if eg > worst_g.0 {
            worst_g = (eg, name.clone());
        }
        if ew > worst_w.0 {
            worst_w = (ew, name.clone());
        }
    }
    (worst_g, worst_w)
}
