//! The generated handwritten digits: deterministic per (seed, index), pinned by a checksum (the
//! browser test compares the same checksum in wasm32), every class present, pixels in [0, 1], and
//! the classes different enough that the set is learnable but not trivially so.

use attnlab::data::digits::{ascii, batch, checksum, digit, CLASSES, PIXELS, SIDE};

/// The checksum of images 0..200 of set 7 (measured natively; wasm32 must give the same).
const CHECKSUM_SEED7_200: u64 = 0xb264_e5d0_b586_7641;

#[test]
fn digits_should_be_deterministic_and_pinned_by_checksum() {
    let (p1, l1) = batch(7, 0, 200);
    let (p2, l2) = batch(7, 0, 200);
    assert_eq!(p1, p2);
    assert_eq!(l1, l2);
    // Image i of a set does not depend on which batch asked for it.
    assert_eq!(digit(7, 150).pixels, p1[150 * PIXELS..151 * PIXELS]);
    let sum = checksum(&p1, &l1);
    println!("checksum of set 7, images 0..200: {sum:#x}");
    assert_eq!(sum, CHECKSUM_SEED7_200, "the generator changed");
}

#[test]
fn digit_sets_should_differ_by_seed() {
    let (a, _) = batch(1, 0, 20);
    let (b, _) = batch(2, 0, 20);
    assert_ne!(a, b);
}

#[test]
fn digits_should_cover_every_class_with_ink_in_range() {
    let (p, l) = batch(3, 0, 1000);
    let mut counts = [0usize; CLASSES];
    for &d in &l {
        counts[d as usize] += 1;
    }
    // 1000 uniform draws: each class near 100.
    assert!(counts.iter().all(|&c| (60..140).contains(&c)), "{counts:?}");
    for (i, img) in p.chunks(PIXELS).enumerate() {
        assert!(img.iter().all(|v| (0.0..=1.0).contains(v)));
        let ink = img.iter().filter(|&&v| v >= 0.5).count();
        // A stroke 2–3.6 px wide and 12–80 px long, inside the frame.
        assert!(
            (25..400).contains(&ink),
            "image {i} (a {}) has {ink} inked pixels:\n{}",
            l[i],
            ascii(img)
        );
    }
}

/// Nearest class mean on raw pixels: far above chance (the classes are distinct) and far from
/// perfect (the distortions matter), so a classifier has something to learn.
#[test]
fn digits_should_be_learnable_but_not_trivial() {
    let (tp, tl) = batch(10, 0, 2000);
    let mut mean = vec![vec![0.0f64; PIXELS]; CLASSES];
    let mut n = [0.0f64; CLASSES];
    for (img, &d) in tp.chunks(PIXELS).zip(&tl) {
        n[d as usize] += 1.0;
        for (m, &v) in mean[d as usize].iter_mut().zip(img) {
            *m += v as f64;
        }
    }
    for (m, c) in mean.iter_mut().zip(n) {
        m.iter_mut().for_each(|v| *v /= c);
    }
    let (vp, vl) = batch(11, 0, 1000);
    let correct = vp
        .chunks(PIXELS)
        .zip(&vl)
        .filter(|(img, &d)| {
            let dist = |m: &Vec<f64>| -> f64 {
                m.iter()
                    .zip(img.iter())
                    .map(|(a, &b)| (a - b as f64).powi(2))
                    .sum()
            };
            let best = (0..CLASSES)
                .min_by(|&a, &b| dist(&mean[a]).total_cmp(&dist(&mean[b])))
                .unwrap();
            best == d as usize
        })
        .count();
    println!("nearest class mean: {correct}/1000");
    assert!((300..950).contains(&correct), "{correct}/1000");
}

#[test]
fn a_digit_should_look_like_one() {
    // Print a few for a human to look at (`cargo test digits -- --nocapture`), and check the
    // frame: the margins of a 28×28 image stay mostly empty.
    let (p, l) = batch(5, 0, 10);
    let mut edge_ink = 0;
    for (img, d) in p.chunks(PIXELS).zip(&l) {
        println!("{d}:\n{}", ascii(img));
        for i in 0..SIDE {
            for &(x, y) in &[(i, 0), (i, SIDE - 1), (0, i), (SIDE - 1, i)] {
                edge_ink += (img[y * SIDE + x] >= 0.5) as usize;
            }
        }
    }
    assert!(edge_ink < 20, "{edge_ink} inked border pixels");
}
