//! Elementwise kernels on the CPU, one per WGSL entry point of `shaders/elementwise.wgsl` and named
//! alike: plain loops over slices that the compiler vectorises.

/// erfc(z) for z ≥ 0, the same Chebyshev fit as the shader (fractional error < 1.2e-7).
#[inline]
fn erfc_pos(z: f32) -> f32 {
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -1.265_512_2
        + t * (1.000_023_7
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_204
                                + t * (1.488_515_9 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    t * crate::cpu::math::exp(-z * z + poly)
}

/// The standard normal CDF Φ(x), through erfc on the side where it is small. erfc is evaluated
/// once at |z| and the side picked afterwards, so the loop has no branch on the sign (a branch
/// taken at random kept GELU scalar and mispredicted half the time).
#[inline]
pub fn phi(x: f32) -> f32 {
    let z = x * std::f32::consts::FRAC_1_SQRT_2;
    let half_tail = 0.5 * erfc_pos(z.abs());
    if z >= 0.0 {
        1.0 - half_tail
    } else {
        half_tail
    }
}

/// Φ'(x) = exp(−x²/2)/√(2π).
#[inline]
fn density(x: f32) -> f32 {
    crate::cpu::math::exp(-0.5 * x * x) * 0.398_942_3
}

/// Elements per task when a loop is split over the threads.
const BLOCK: usize = 4096;

/// Run the entry point `entry` with `a` as its input, `y` its output and `b` its second input.
/// Returns false for an entry point this file does not have.
pub fn run(entry: &str, a: &[f32], y: &mut [f32], b: Option<&[f32]>, alpha: f32) -> bool {
    let b = b.unwrap_or(&[]);
    match entry {
        "add" => crate::cpu::for_rows(y, BLOCK, |r, out| {
            let o = r * BLOCK;
            out.iter_mut()
                .zip(&a[o..])
                .zip(&b[o..])
                .for_each(|((y, a), b)| *y = a + b);
        }),
        "scale" => crate::cpu::for_rows(y, BLOCK, |r, out| {
            let o = r * BLOCK;
            out.iter_mut()
                .zip(&a[o..])
                .for_each(|(y, a)| *y = alpha * a);
        }),
        "axpy" => crate::cpu::for_rows(y, BLOCK, |r, out| {
            let o = r * BLOCK;
            out.iter_mut()
                .zip(&a[o..])
                .for_each(|(y, a)| *y += alpha * a);
        }),
        "relu" => y.iter_mut().zip(a).for_each(|(y, a)| *y = a.max(0.0)),
        "relu_backward" => y
            .iter_mut()
            .zip(a)
            .zip(b)
            .for_each(|((y, x), d)| *y += if *x > 0.0 { *d } else { 0.0 }),
        "gelu" => crate::cpu::for_rows(y, BLOCK, |r, out| {
            let x = &a[r * BLOCK..r * BLOCK + out.len()];
            out.iter_mut().zip(x).for_each(|(y, &x)| *y = x * phi(x));
        }),
        "gelu_backward" => crate::cpu::for_rows(y, BLOCK, |r, out| {
            let o = r * BLOCK;
            let (x, d) = (&a[o..o + out.len()], &b[o..o + out.len()]);
            out.iter_mut()
                .zip(x)
                .zip(d)
                .for_each(|((y, &x), &d)| *y += d * (phi(x) + x * density(x)));
        }),
        _ => return false,
    }
    true
}
