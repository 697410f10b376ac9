//! Pictures of a trained ViT, computed on the host from read-back values: attention rollout and the
//! similarity of the position embeddings.

/// Attention rollout (Abnar & Zuidema 2020) for one image: per layer, the heads' mean attention
/// (T, T) plus the identity for the residual path, rows renormalised, multiplied from the first
/// layer up. `maps[l]` is layer l's (NH, T, T) probabilities. Row i of the result says how much
/// each input token flows into token i at the top (row 0: into [CLS]).
pub fn rollout(maps: &[Vec<f32>], n_head: usize, t: usize) -> Vec<f64> {
    let mut r: Vec<f64> = (0..t * t).map(|k| (k / t == k % t) as u32 as f64).collect();
    for m in maps {
        let mut a = vec![0.0f64; t * t];
        for h in 0..n_head {
            for (k, v) in a.iter_mut().enumerate() {
                *v += m.get(h * t * t + k).copied().unwrap_or(0.0) as f64 / n_head as f64;
            }
        }
        for i in 0..t {
            a[i * t + i] += 1.0;
            let s: f64 = a[i * t..(i + 1) * t].iter().sum();
            a[i * t..(i + 1) * t].iter_mut().for_each(|v| *v /= s);
        }
        // r ← a · r (the new layer applies after the ones below it).
        let mut next = vec![0.0; t * t];
        for i in 0..t {
            for k in 0..t {
                let aik = a[i * t + k];
                for j in 0..t {
                    next[i * t + j] += aik * r[k * t + j];
                }
            }
        }
        r = next;
    }
    r
}

/// Cosine similarity between the position embeddings of the patches (rows 1.. of `pos`, each `c`
/// wide): a (N, N) matrix, N = patches.
pub fn position_similarity(pos: &[f32], c: usize) -> Vec<f64> {
    let rows: Vec<&[f32]> = pos.chunks(c).skip(1).collect();
    let n = rows.len();
    let norm = |v: &[f32]| v.iter().map(|&x| (x as f64).powi(2)).sum::<f64>().sqrt();
    let mut out = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            let d: f64 = rows[i]
                .iter()
                .zip(rows[j])
                .map(|(&a, &b)| a as f64 * b as f64)
                .sum();
            out[i * n + j] = d / (norm(rows[i]) * norm(rows[j])).max(1e-12);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rollout_of_uniform_attention_mixes_evenly_and_keeps_rows_summing_to_one() {
        let t = 3;
        let uniform = vec![1.0 / t as f32; 2 * t * t];
        let r = rollout(&[uniform.clone(), uniform], 2, t);
        for i in 0..t {
            let s: f64 = r[i * t..(i + 1) * t].iter().sum();
            assert!((s - 1.0).abs() < 1e-12);
        }
        // One layer of uniform attention: (I + 1/3) / 2.
        let one = rollout(&[vec![1.0 / 3.0; 9]], 1, 3);
        assert!((one[0] - (1.0 + 1.0 / 3.0) / 2.0).abs() < 1e-7);
        assert!((one[1] - (1.0 / 3.0) / 2.0).abs() < 1e-7);
    }

    #[test]
    fn position_similarity_is_one_on_the_diagonal() {
        let pos = [9.0, 9.0, 1.0, 0.0, 0.0, 2.0, 1.0, 1.0];
        let s = position_similarity(&pos, 2);
        assert_eq!(s.len(), 9);
        assert!((s[0] - 1.0).abs() < 1e-12 && (s[4] - 1.0).abs() < 1e-12);
        assert!(s[1].abs() < 1e-12); // (1,0) ⟂ (0,2)
        assert!((s[2] - 0.5f64.sqrt()).abs() < 1e-12);
    }
}
