//! Dropout on the CPU, with the mask drawn from the same PCG hash of (seed, row key, column) as
//! `shaders/dropout.wgsl`, so both backends drop the same elements. The op file re-exports the hash.

fn pcg(v: u32) -> u32 {
    let s = v.wrapping_mul(747796405).wrapping_add(2891336453);
    let w = ((s >> ((s >> 28) + 4)) ^ s).wrapping_mul(277803737);
    (w >> 22) ^ w
}

/// The 32-bit hash of (seed, element index).
pub fn dropout_hash(seed: u32, i: u32) -> u32 {
    pcg(pcg(i ^ pcg(seed)).wrapping_add(seed))
}

/// The 32-bit hash of element (row key, column): the row's hash, then the column's.
#[inline]
pub fn element_hash(seed: u32, key: u32, col: u32) -> u32 {
    dropout_hash(dropout_hash(seed, key), col)
}

/// Whether a hash keeps its element: its 24-bit uniform in [0, 1) is at least `p`.
#[inline]
fn kept(h: u32, p: f32) -> bool {
    ((h >> 8) as f32) * (1.0 / 16777216.0) >= p
}

/// Whether element (row key, column) is kept.
#[inline]
pub fn dropout_keep(seed: u32, key: u32, col: u32, p: f32) -> bool {
    kept(element_hash(seed, key, col), p)
}

/// `y = x · mask · scale`, rows of `cols` elements keyed by `keys`.
pub fn dropout(keys: &[u32], x: &[f32], y: &mut [f32], cols: usize, p: f32, seed: u32, scale: f32) {
    crate::cpu::for_rows(y, cols, |r, out| {
        let h = dropout_hash(seed, keys[r]);
        let x = &x[r * cols..r * cols + out.len()];
        let done = lanes::dropout_row(h, x, out, p, scale);
        for (j, (y, &x)) in out[done..].iter_mut().zip(&x[done..]).enumerate() {
            *y = if kept(dropout_hash(h, (done + j) as u32), p) {
                x * scale
            } else {
                0.0
            };
        }
    });
}

/// `dx += dy · mask · scale`.
#[allow(clippy::too_many_arguments)]
pub fn dropout_backward(
    keys: &[u32],
    dy: &[f32],
    dx: &mut [f32],
    cols: usize,
    p: f32,
    seed: u32,
    scale: f32,
) {
    crate::cpu::for_rows(dx, cols, |r, out| {
        let h = dropout_hash(seed, keys[r]);
        let dy = &dy[r * cols..r * cols + out.len()];
        let done = lanes::dropout_backward_row(h, dy, out, p, scale);
        for (j, (d, &g)) in out[done..].iter_mut().zip(&dy[done..]).enumerate() {
            if kept(dropout_hash(h, (done + j) as u32), p) {
                *d += g * scale;
            }
        }
    });
}

/// The rows in lanes: natively eight columns at a time in plain loops the compiler vectorises
/// (AVX2 shifts each lane by its own amount); in the browser four with SIMD128, which shifts all
/// four lanes by one amount, so there the compiler left the hash scalar (17% of the page's training step on short
/// rows, profiled with web/test/profile-step.mjs). pcg's per-lane shift by 4 + (s >> 28), 4 to
/// 19, is a shift by 4 and then by 1, 2, 4 and 8 in the lanes whose bit of s >> 28 says so
/// (`shift_by_top_bits`, tested natively against pcg on every shift amount). The lanes compute
/// exactly the scalar hash and test, so the masks are the same bits on every backend (the
/// dropout checks in `check.rs`, run in the page on the CPU backend, compare them).
mod lanes {
    /// pcg's shift: `s >> (4 + (s >> 28))` as four fixed shifts picked by the bits of `s >> 28`,
    /// the way the SIMD lanes do it.
    #[cfg(test)]
    pub fn shift_by_top_bits(s: u32) -> u32 {
        let b = s >> 28;
        let mut t = s >> 4;
        for bit in 0..4 {
            if b & (1 << bit) != 0 {
                t >>= 1 << bit;
            }
        }
        t
    }

    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    mod simd {
        use core::arch::wasm32::*;

        #[inline(always)]
        fn shift_where(t: v128, b: v128, bit: u32, by: u32) -> v128 {
            let set = i32x4_ne(v128_and(b, u32x4_splat(bit)), u32x4_splat(0));
            v128_bitselect(u32x4_shr(t, by), t, set)
        }

        /// `pcg` of four lanes.
        #[inline(always)]
        fn pcg4(v: v128) -> v128 {
            let s = i32x4_add(
                i32x4_mul(v, u32x4_splat(747796405)),
                u32x4_splat(2891336453),
            );
            let b = u32x4_shr(s, 28);
            let mut t = u32x4_shr(s, 4);
            t = shift_where(t, b, 1, 1);
            t = shift_where(t, b, 2, 2);
            t = shift_where(t, b, 4, 4);
            t = shift_where(t, b, 8, 8);
            let w = i32x4_mul(v128_xor(t, s), u32x4_splat(277803737));
            v128_xor(u32x4_shr(w, 22), w)
        }

        /// All ones in the lanes of columns j..j+4 that a row with hash `h` keeps.
        #[inline(always)]
        fn keep4(h: u32, pcg_h: u32, j: u32, p: v128) -> v128 {
            let cols = i32x4_add(u32x4_splat(j), u32x4(0, 1, 2, 3));
            let u = pcg4(i32x4_add(
                pcg4(v128_xor(cols, u32x4_splat(pcg_h))),
                u32x4_splat(h),
            ));
            let uniform = f32x4_mul(
                f32x4_convert_u32x4(u32x4_shr(u, 8)),
                f32x4_splat(1.0 / 16777216.0),
            );
            f32x4_ge(uniform, p)
        }

        pub fn dropout_row(h: u32, x: &[f32], out: &mut [f32], p: f32, scale: f32) -> usize {
            let n4 = out.len().min(x.len()) / 4 * 4;
            let (pcg_h, pv, sv) = (super::super::pcg(h), f32x4_splat(p), f32x4_splat(scale));
            for j in (0..n4).step_by(4) {
                // SAFETY: j + 4 <= n4 <= both lengths; wasm loads and stores need no alignment.
                unsafe {
                    let xv = v128_load(x.as_ptr().add(j) as *const v128);
                    let y = v128_and(f32x4_mul(xv, sv), keep4(h, pcg_h, j as u32, pv));
                    v128_store(out.as_mut_ptr().add(j) as *mut v128, y);
                }
            }
            n4
        }

        pub fn dropout_backward_row(
            h: u32,
            dy: &[f32],
            dx: &mut [f32],
            p: f32,
            scale: f32,
        ) -> usize {
            let n4 = dx.len().min(dy.len()) / 4 * 4;
            let (pcg_h, pv, sv) = (super::super::pcg(h), f32x4_splat(p), f32x4_splat(scale));
            for j in (0..n4).step_by(4) {
                // SAFETY: as in dropout_row. A dropped lane adds +0, which leaves dx as it was.
                unsafe {
                    let g = v128_load(dy.as_ptr().add(j) as *const v128);
                    let d = v128_load(dx.as_ptr().add(j) as *const v128);
                    let add = v128_and(f32x4_mul(g, sv), keep4(h, pcg_h, j as u32, pv));
                    v128_store(dx.as_mut_ptr().add(j) as *mut v128, f32x4_add(d, add));
                }
            }
            n4
        }
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    pub use simd::{dropout_backward_row, dropout_row};

    /// Natively: eight columns at a time, each step of the hash a loop over the eight lanes, which
    /// the compiler turns into one vector instruction each (AVX2: `vpmulld`, `vpsrlvd`). Written
    /// as the element-by-element loop, the hash stayed scalar (28% of the middle preset's native
    /// step went to dropout, profiled with perf). The lanes compute exactly `pcg`.
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    mod chunks {
        const L: usize = 8;

        #[inline(always)]
        fn pcg8(v: [u32; L]) -> [u32; L] {
            let mut s = [0u32; L];
            for l in 0..L {
                s[l] = v[l].wrapping_mul(747796405).wrapping_add(2891336453);
            }
            let mut w = [0u32; L];
            for l in 0..L {
                w[l] = ((s[l] >> ((s[l] >> 28) + 4)) ^ s[l]).wrapping_mul(277803737);
            }
            for w in w.iter_mut() {
                *w ^= *w >> 22;
            }
            w
        }

        /// Whether each of the columns j..j+8 of a row with hash `h` is kept.
        #[inline(always)]
        fn keep8(h: u32, pcg_h: u32, j: u32, p: f32) -> [bool; L] {
            let mut v = [0u32; L];
            for (l, v) in v.iter_mut().enumerate() {
                *v = (j + l as u32) ^ pcg_h;
            }
            let mut u = pcg8(v);
            for u in u.iter_mut() {
                *u = u.wrapping_add(h);
            }
            let u = pcg8(u);
            let mut k = [false; L];
            for l in 0..L {
                // The top 24 bits fit an i32, so the signed conversion (one AVX instruction) is
                // the same number as `kept`'s.
                k[l] = ((u[l] >> 8) as i32 as f32) * (1.0 / 16777216.0) >= p;
            }
            k
        }

        /// `f(out, src, kept)` for every column of a row with hash `h`, eight at a time; the last
        /// few columns take the first lanes of one more group of eight.
        #[inline(always)]
        fn each_column(
            h: u32,
            p: f32,
            src: &[f32],
            out: &mut [f32],
            f: impl Fn(&mut f32, f32, bool),
        ) -> usize {
            let len = out.len().min(src.len());
            let n = len / L * L;
            let pcg_h = super::super::pcg(h);
            for (j, (os, ss)) in out[..n]
                .chunks_exact_mut(L)
                .zip(src[..n].chunks_exact(L))
                .enumerate()
            {
                let k = keep8(h, pcg_h, (j * L) as u32, p);
                for l in 0..L {
                    f(&mut os[l], ss[l], k[l]);
                }
            }
            if n < len {
                let k = keep8(h, pcg_h, n as u32, p);
                for ((o, &s), k) in out[n..len].iter_mut().zip(&src[n..len]).zip(k) {
                    f(o, s, k);
                }
            }
            len
        }

        pub fn dropout_row(h: u32, x: &[f32], out: &mut [f32], p: f32, scale: f32) -> usize {
            each_column(h, p, x, out, |y, x, kept| {
                *y = if kept { x * scale } else { 0.0 };
            })
        }

        pub fn dropout_backward_row(
            h: u32,
            dy: &[f32],
            dx: &mut [f32],
            p: f32,
            scale: f32,
        ) -> usize {
            each_column(h, p, dy, dx, |d, g, kept| {
                if kept {
                    *d += g * scale;
                }
            })
        }
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    pub use chunks::{dropout_backward_row, dropout_row};
}

/// The raw element hashes of every (row, column).
pub fn dropout_bits(keys: &[u32], out: &mut [u32], cols: usize, seed: u32) {
    for (i, o) in out.iter_mut().enumerate() {
        *o = element_hash(seed, keys[i / cols], (i % cols) as u32);
    }
}

#[cfg(test)]
mod tests {
    /// The lanes (eight natively, four in the browser) give the element-by-element loop's exact
    /// bits, forward and backward, for rows of every length up to 40 and both sides of `p`.
    #[test]
    fn the_lanes_drop_what_the_scalar_loop_drops() {
        for cols in 0..=40usize {
            for (p, seed) in [(0.1f32, 3u32), (0.5, 99), (0.9, u32::MAX)] {
                let keys: Vec<u32> = (0..5u32).map(|r| r.wrapping_mul(2_654_435_761)).collect();
                let x: Vec<f32> = (0..5 * cols)
                    .map(|i| (i as f32 * 0.37).sin() - 0.2)
                    .collect();
                let scale = 1.0 / (1.0 - p);
                let mut y = vec![f32::NAN; x.len()];
                super::dropout(&keys, &x, &mut y, cols, p, seed, scale);
                let mut dx: Vec<f32> = (0..x.len()).map(|i| i as f32 * 0.01).collect();
                let dx0 = dx.clone();
                super::dropout_backward(&keys, &x, &mut dx, cols, p, seed, scale);
                for i in 0..x.len() {
                    let keep = super::dropout_keep(seed, keys[i / cols], (i % cols) as u32, p);
                    let want = if keep { x[i] * scale } else { 0.0 };
                    assert_eq!(
                        y[i].to_bits(),
                        want.to_bits(),
                        "forward cols {cols} p {p} i {i}"
                    );
                    let want = if keep { dx0[i] + x[i] * scale } else { dx0[i] };
                    assert_eq!(
                        dx[i].to_bits(),
                        want.to_bits(),
                        "backward cols {cols} p {p} i {i}"
                    );
                }
            }
        }
    }

    /// The lanes' four fixed shifts give pcg's shift for every top nibble (every shift amount).
    #[test]
    fn the_lanes_shift_is_pcgs_for_every_amount() {
        for top in 0u32..16 {
            for low in [0u32, 1, 0x0fff_ffff, 0x0123_4567, 0x0abc_def0] {
                let s = (top << 28) | low;
                assert_eq!(
                    super::lanes::shift_by_top_bits(s),
                    s >> ((s >> 28) + 4),
                    "s = {s:#x}"
                );
            }
        }
    }
}
