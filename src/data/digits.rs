//! Handwritten-looking digits 0–9 at 28×28, generated from a seed (no downloads): each digit is a
//! few pen strokes (cubic Bézier curves) with jittered control points, one of a few writing styles
//! (a 1 with or without its flag and base, an open or closed 4, a 7 with or without its bar), put
//! through a random affine map (rotation, shear, scale, shift), drawn with a random pen width and
//! soft edges, then given a random ink level and pixel noise. Pixels are in [0, 1], 0 = background.
//!
//! Deterministic per (seed, index) on every platform: every draw comes from `DataRng` (u64
//! arithmetic only) and the geometry uses only +, −, ×, ÷ and `sqrt`, which IEEE 754 rounds exactly
//! on every target (no `sin`/`cos`/`exp`, whose libm results may differ between wasm32 and native).
//! The rotation is the rational one, cos = (1 − a²)/(1 + a²), sin = 2a/(1 + a²) with a = tan(θ/2).

use super::rng::{combine, DataRng};

/// Side of an image in pixels.
pub const SIDE: usize = 28;
/// Pixels per image.
pub const PIXELS: usize = SIDE * SIDE;
/// Number of classes.
pub const CLASSES: usize = 10;

/// One generated image: row-major pixels in [0, 1] and its digit.
#[derive(Clone, Debug, PartialEq)]
pub struct Digit {
    pub label: u8,
    pub pixels: Vec<f32>,
}

type Pt = (f64, f64);
/// A cubic Bézier: start, two control points, end (unit square, y down).
type Curve = [Pt; 4];

fn line(a: Pt, b: Pt) -> Curve {
    let third = |t: f64| (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t);
    [a, third(1.0 / 3.0), third(2.0 / 3.0), b]
}

/// An ellipse as four cubic arcs (the usual 0.5523 control distance), drawn from the top clockwise.
fn ellipse(c: Pt, rx: f64, ry: f64) -> Vec<Curve> {
    const K: f64 = 0.552_284_75;
    let (x, y) = c;
    vec![
        [
            (x, y - ry),
            (x + K * rx, y - ry),
            (x + rx, y - K * ry),
            (x + rx, y),
        ],
        [
            (x + rx, y),
            (x + rx, y + K * ry),
            (x + K * rx, y + ry),
            (x, y + ry),
        ],
        [
            (x, y + ry),
            (x - K * rx, y + ry),
            (x - rx, y + K * ry),
            (x - rx, y),
        ],
        [
            (x - rx, y),
            (x - rx, y - K * ry),
            (x - K * rx, y - ry),
            (x, y - ry),
        ],
    ]
}

/// The strokes of `digit` in writing style `style` (0 or 1), in the unit square.
fn strokes(digit: u8, style: u64) -> Vec<Curve> {
    let alt = style == 1;
    match digit {
        0 => ellipse((0.5, 0.5), 0.2, 0.32),
        1 => {
            let mut s = vec![line((0.52, 0.18), (0.52, 0.82))];
            if alt {
                s.push(line((0.38, 0.32), (0.52, 0.18)));
                s.push(line((0.40, 0.82), (0.64, 0.82)));
            }
            s
        }
        2 => vec![
            [(0.32, 0.32), (0.32, 0.12), (0.70, 0.12), (0.68, 0.34)],
            [(0.68, 0.34), (0.66, 0.50), (0.40, 0.65), (0.30, 0.82)],
            line((0.30, 0.82), (0.72, 0.82)),
        ],
        3 => vec![
            [(0.32, 0.22), (0.50, 0.10), (0.74, 0.20), (0.66, 0.36)],
            [(0.66, 0.36), (0.62, 0.46), (0.50, 0.48), (0.44, 0.48)],
            [(0.44, 0.48), (0.62, 0.48), (0.74, 0.58), (0.68, 0.72)],
            [(0.68, 0.72), (0.60, 0.88), (0.38, 0.86), (0.30, 0.76)],
        ],
        4 if alt => vec![
            line((0.34, 0.18), (0.30, 0.60)),
            line((0.30, 0.60), (0.74, 0.60)),
            line((0.62, 0.34), (0.62, 0.84)),
        ],
        4 => vec![
            line((0.60, 0.18), (0.28, 0.62)),
            line((0.28, 0.62), (0.74, 0.62)),
            line((0.60, 0.18), (0.60, 0.84)),
        ],
        5 => vec![
            line((0.68, 0.18), (0.36, 0.18)),
            line((0.36, 0.18), (0.33, 0.46)),
            [(0.33, 0.46), (0.50, 0.36), (0.74, 0.44), (0.70, 0.64)],
            [(0.70, 0.64), (0.66, 0.86), (0.40, 0.88), (0.30, 0.76)],
        ],
        6 => {
            let mut s = vec![[(0.64, 0.18), (0.44, 0.24), (0.30, 0.44), (0.32, 0.66)]];
            s.extend(ellipse((0.50, 0.66), 0.18, 0.17));
            s
        }
        7 => {
            let mut s = vec![
                line((0.30, 0.20), (0.70, 0.20)),
                line((0.70, 0.20), (0.44, 0.84)),
            ];
            if alt {
                s.push(line((0.44, 0.52), (0.66, 0.52)));
            }
            s
        }
        8 => {
            let mut s = ellipse((0.5, 0.33), 0.15, 0.14);
            s.extend(ellipse((0.5, 0.66), 0.18, 0.18));
            s
        }
        _ => {
            let mut s = ellipse((0.5, 0.36), 0.17, 0.16);
            s.push([(0.67, 0.36), (0.68, 0.55), (0.62, 0.72), (0.52, 0.84)]);
            s
        }
    }
}

/// Uniform in [lo, hi).
fn uniform(rng: &mut DataRng, lo: f64, hi: f64) -> f64 {
    lo + (hi - lo) * rng.unit()
}

/// Image `index` of the generated set `seed` (the label is drawn too, uniformly).
pub fn digit(seed: u64, index: u64) -> Digit {
    let mut rng = DataRng::new(combine(&[seed, index, 0xD161_7500]));
    let label = rng.below(CLASSES as u64) as u8;
    let pixels = render(label, &mut rng);
    Digit { label, pixels }
}

/// Images `start..start + n` of set `seed`: pixels (n·784, row-major) and labels (n).
pub fn batch(seed: u64, start: u64, n: usize) -> (Vec<f32>, Vec<u8>) {
    let mut pixels = Vec::with_capacity(n * PIXELS);
    let mut labels = Vec::with_capacity(n);
    for i in 0..n as u64 {
        let d = digit(seed, start + i);
        pixels.extend_from_slice(&d.pixels);
        labels.push(d.label);
    }
    (pixels, labels)
}

/// Draw one `label` with the randomness of `rng`.
pub fn render(label: u8, rng: &mut DataRng) -> Vec<f32> {
    let style = rng.below(2);
    let jitter = 0.035;
    let mut curves = strokes(label.min(9), style);
    for c in &mut curves {
        for p in c.iter_mut() {
            p.0 += uniform(rng, -jitter, jitter);
            p.1 += uniform(rng, -jitter, jitter);
        }
    }
    // Affine map about the centre: rotation (±~17°), shear, per-axis scale, then a shift.
    let a = uniform(rng, -0.15, 0.15);
    let (cos, sin) = ((1.0 - a * a) / (1.0 + a * a), 2.0 * a / (1.0 + a * a));
    let shear = uniform(rng, -0.3, 0.3);
    let scale = uniform(rng, 0.8, 1.1);
    let (sx, sy) = (
        scale * uniform(rng, 0.85, 1.15),
        scale * uniform(rng, 0.9, 1.1),
    );
    let (tx, ty) = (uniform(rng, -0.07, 0.07), uniform(rng, -0.06, 0.06));
    let map = |(x, y): Pt| -> Pt {
        let (x, y) = ((x - 0.5) * sx, (y - 0.5) * sy);
        let x = x + shear * y;
        let (x, y) = (cos * x - sin * y, sin * x + cos * y);
        ((x + 0.5 + tx) * SIDE as f64, (y + 0.5 + ty) * SIDE as f64)
    };
    // Pen radius in pixels (a 2–3.6 px wide stroke) and ink darkness.
    let radius = uniform(rng, 1.0, 1.8);
    let ink = uniform(rng, 0.75, 1.0);
    let mut img = vec![0.0f64; PIXELS];
    for c in &curves {
        let pts: Vec<Pt> = (0..=SEGMENTS).map(|k| map(bezier(c, k))).collect();
        for w in pts.windows(2) {
            stamp_segment(&mut img, w[0], w[1], radius);
        }
    }
    img.iter()
        .map(|&v| {
            // Noise: the sum of two uniforms (a triangle distribution) of ±0.08.
            let noise = 0.08 * (rng.unit() + rng.unit() - 1.0);
            (v * ink + noise).clamp(0.0, 1.0) as f32
        })
        .collect()
}

/// Line segments per curve.
const SEGMENTS: u32 = 10;

/// Point k/SEGMENTS along a cubic Bézier (Bernstein form).
fn bezier(c: &Curve, k: u32) -> Pt {
    let t = k as f64 / SEGMENTS as f64;
    let u = 1.0 - t;
    let w = [u * u * u, 3.0 * u * u * t, 3.0 * u * t * t, t * t * t];
    let mut p = (0.0, 0.0);
    for (wi, ci) in w.iter().zip(c) {
        p.0 += wi * ci.0;
        p.1 += wi * ci.1;
    }
    p
}

/// Ink every pixel within `radius` of the segment a–b, with a one-pixel soft edge; the image keeps
/// the darkest value a pixel gets from any segment.
fn stamp_segment(img: &mut [f64], a: Pt, b: Pt, radius: f64) {
    let reach = radius + 1.0;
    let lo = |u: f64, v: f64| ((u.min(v) - reach).floor().max(0.0)) as usize;
    let hi = |u: f64, v: f64| ((u.max(v) + reach).ceil().min(SIDE as f64 - 1.0)).max(0.0) as usize;
    let (x0, x1, y0, y1) = (lo(a.0, b.0), hi(a.0, b.0), lo(a.1, b.1), hi(a.1, b.1));
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len2 = dx * dx + dy * dy;
    for py in y0..=y1 {
        for px in x0..=x1 {
            let (cx, cy) = (px as f64 + 0.5, py as f64 + 0.5);
            let t = if len2 > 0.0 {
                (((cx - a.0) * dx + (cy - a.1) * dy) / len2).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let (ex, ey) = (cx - a.0 - t * dx, cy - a.1 - t * dy);
            let d = (ex * ex + ey * ey).sqrt();
            let v = (radius + 0.5 - d).clamp(0.0, 1.0);
            let cell = &mut img[py * SIDE + px];
            if v > *cell {
                *cell = v;
            }
        }
    }
}

/// FNV-1a over the pixels' f32 bit patterns and the labels: equal on every platform iff the
/// generator is (the determinism test pins it natively; the page's test compares it in wasm32).
pub fn checksum(pixels: &[f32], labels: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let bytes = pixels
        .iter()
        .flat_map(|p| p.to_bits().to_le_bytes())
        .chain(labels.iter().copied());
    for b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The image as text, `#` for ink ≥ 0.5 and `+` for ink ≥ 0.2 (for tests and the CLI).
pub fn ascii(pixels: &[f32]) -> String {
    pixels
        .chunks(SIDE)
        .map(|row| {
            row.iter()
                .map(|&v| match v {
                    v if v >= 0.5 => '#',
                    v if v >= 0.2 => '+',
                    _ => '.',
                })
                .collect::<String>()
                + "\n"
        })
        .collect()
}
