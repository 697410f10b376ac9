// Softmax over the last axis, one workgroup per row of T keys; `softmax` and `softmax_backward`
// serve both Rust ops (`causal_softmax`, `softmax`), `p.causal` choosing the mask.
// Causal (p.causal = 1, scores (Z, T, T)): row r is query i = r % T; keys j > i are masked. PyTorch
// fills them with -1e10 after scaling, whose exp underflows to exactly 0, so the kernel writes 0
// there directly (same value, and the gradient of a masked entry is then exactly 0 too).
// Unmasked (p.causal = 0, the ViT's bidirectional attention): every key 0..T-1 is visible.
// One workgroup of RW threads per row; the reductions (row_max, row_sum) and RW come from
// rows.wgsl or rows_subgroup.wgsl, which the Rust side puts in front of this file.

struct Params {
    rows: u32,
    t: u32,
    scale: f32,
    causal: u32,
}

// The last visible key of row `row`.
fn last_key(row: u32) -> u32 {
    return select(p.t - 1u, row % p.t, p.causal != 0u);
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(RW)
fn softmax(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) li: u32) {
    let row = wid.x + wid.y * nwg.x;
    if (row >= p.rows) {
        return; // uniform across the workgroup
    }
    let i = last_key(row);
    let base = row * p.t;
    // Keys 0..=i are visible; key 0 always is, so the max is finite.
    var m = -3.0e38;
    for (var j = li; j <= i; j += RW) {
        m = max(m, p.scale * x[base + j]);
    }
    m = row_max(li, m);
    var s = 0.0;
    for (var j = li; j <= i; j += RW) {
        s += exp(p.scale * x[base + j] - m);
    }
    s = row_sum(li, s);
    for (var j = li; j < p.t; j += RW) {
        var v = 0.0;
        if (j <= i) {
            v = exp(p.scale * x[base + j] - m) / s;
        }
        y[base + j] = v;
    }
}

// dS += scale * P * (dP - sum_j P dP); masked entries get += 0 (P is exactly 0 there).
@group(0) @binding(1) var<storage, read> prob: array<f32>;
@group(0) @binding(2) var<storage, read> dprob: array<f32>;
@group(0) @binding(3) var<storage, read_write> dscore: array<f32>;

@compute @workgroup_size(RW)
fn softmax_backward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                    @builtin(local_invocation_index) li: u32) {
    let row = wid.x + wid.y * nwg.x;
    if (row >= p.rows) {
        return;
    }
    let i = last_key(row);
    let base = row * p.t;
    var d = 0.0;
    for (var j = li; j <= i; j += RW) {
        d += prob[base + j] * dprob[base + j];
    }
    d = row_sum(li, d);
    for (var j = li; j <= i; j += RW) {
        dscore[base + j] += p.scale * prob[base + j] * (dprob[base + j] - d);
    }
}
