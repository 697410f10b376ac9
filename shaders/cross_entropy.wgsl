// Cross-entropy with ignore_index = 0: loss = mean over rows with 0 < target < V of
// lse(logits[row]) - logits[row, target]. Targets >= V are treated as ignored so nothing is read
// out of bounds. Three passes, no atomics: per-row stats, one-workgroup reduction, gradient.
// stats layout (3N + 1): [0, N) row lse, [N, 2N) row loss, [2N, 3N) row valid (0/1), [3N] count.

const WG: u32 = 256u; // threads per workgroup of cross_entropy_backward
// cross_entropy_rows and cross_entropy_reduce run RW threads; RW and the reductions (row_max,
// row_sum, row_sum2) come from rows.wgsl or rows_subgroup.wgsl, put in front of this file.

struct Params {
    n: u32,
    v: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read> targets: array<u32>;
@group(0) @binding(3) var<storage, read_write> stats: array<f32>;

// One workgroup per row: stable log-sum-exp and the row's loss.
@compute @workgroup_size(RW)
fn cross_entropy_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) li: u32) {
    let row = wid.x + wid.y * nwg.x;
    if (row >= p.n) {
        return; // uniform across the workgroup
    }
    let base = row * p.v;
    var m = -3.0e38;
    for (var j = li; j < p.v; j += RW) {
        m = max(m, logits[base + j]);
    }
    m = row_max(li, m);
    var s = 0.0;
    for (var j = li; j < p.v; j += RW) {
        s += exp(logits[base + j] - m);
    }
    s = row_sum(li, s);
    if (li == 0u) {
        let lse = m + log(s);
        let t = targets[row];
        let valid = t != 0u && t < p.v;
        var loss = 0.0;
        if (valid) {
            loss = lse - logits[base + t];
        }
        stats[row] = lse;
        stats[p.n + row] = loss;
        stats[2u * p.n + row] = select(0.0, 1.0, valid);
    }
}

// One workgroup: count and mean, each thread summing a fixed strided subset, then row_sum2.
@group(0) @binding(1) var<storage, read_write> rstats: array<f32>;
@group(0) @binding(2) var<storage, read_write> loss_out: array<f32>;

@compute @workgroup_size(RW)
fn cross_entropy_reduce(@builtin(local_invocation_index) li: u32) {
    var s = 0.0;
    var c = 0.0;
    for (var r = li; r < p.n; r += RW) {
        s += rstats[p.n + r];
        c += rstats[2u * p.n + r];
    }
    let t = row_sum2(li, vec2<f32>(s, c));
    if (li == 0u) {
        rstats[3u * p.n] = t.y;
        // Every target ignored: loss 0 (PyTorch gives NaN), and the backward gives 0 too.
        loss_out[0] = select(0.0, t.x / t.y, t.y > 0.0);
    }
}

// dlogits[row, j] += dloss * (softmax - onehot) / count for valid rows; one thread per element.
@group(0) @binding(1) var<storage, read> glogits: array<f32>;
@group(0) @binding(2) var<storage, read> gtargets: array<u32>;
@group(0) @binding(3) var<storage, read> gstats: array<f32>;
@group(0) @binding(4) var<storage, read> dloss: array<f32>;
@group(0) @binding(5) var<storage, read_write> dlogits: array<f32>;

@compute @workgroup_size(WG)
fn cross_entropy_backward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) li: u32) {
    let e = (wid.x + wid.y * nwg.x) * WG + li;
    if (e >= p.n * p.v) {
        return;
    }
    let row = e / p.v;
    let j = e % p.v;
    let t = gtargets[row];
    let c = gstats[3u * p.n];
    if (t == 0u || t >= p.v || c <= 0.0) {
        return;
    }
    var g = exp(glogits[e] - gstats[row]);
    if (j == t) {
        g -= 1.0;
    }
    dlogits[e] += dloss[0] * g / c;
}
