// LayerNorm over the last dim of a (rows, C) array, eps and biased variance as PyTorch:
//   y = (x - mean) * rstd * w + b,  rstd = 1 / sqrt(mean((x - mean)^2) + eps).
// The forward keeps mean and rstd per row for the backward (as llm.c does). The row kernels run
// one workgroup per row with tree reductions; dw and db are column sums over rows, done race-free
// as per-block partial sums (one thread per channel) followed by an in-order sum of the blocks.

const WG: u32 = 256u;
// Threads per row for the row kernels: a short tree (a few barriers) keeps software GPUs fast, and
// one 32-wide group per row still covers a real GPU's SIMD width.
const RW: u32 = 32u;

struct Params {
    rows: u32,
    c: u32,
    eps: f32,
    block_rows: u32, // rows per partial block for dw/db
    nblocks: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
// One set of slots for every entry point (each says what it binds where), all read_write so that
// each kernel can take its bindings 1..k in its own order; the Rust side checks that no two slots
// share a buffer.
@group(0) @binding(1) var<storage, read_write> s1: array<f32>;
@group(0) @binding(2) var<storage, read_write> s2: array<f32>;
@group(0) @binding(3) var<storage, read_write> s3: array<f32>;
@group(0) @binding(4) var<storage, read_write> s4: array<f32>;
@group(0) @binding(5) var<storage, read_write> s5: array<f32>;
@group(0) @binding(6) var<storage, read_write> s6: array<f32>;

var<workgroup> sa: array<f32, RW>;
var<workgroup> sb: array<f32, RW>;

// Tree-sum sa and sb across the workgroup; every thread gets both totals.
fn wg_sum2(li: u32, a: f32, b: f32) -> vec2<f32> {
    sa[li] = a;
    sb[li] = b;
    workgroupBarrier();
    for (var h = RW / 2u; h > 0u; h /= 2u) {
        if (li < h) {
            sa[li] += sa[li + h];
            sb[li] += sb[li + h];
        }
        workgroupBarrier();
    }
    let r = vec2<f32>(sa[0], sb[0]);
    workgroupBarrier(); // nobody overwrites sa/sb before everyone has read the totals
    return r;
}

// s1 = x (rows, C), s2 = w (C), s3 = b (C); s4 = y (rows, C), s5 = mean (rows), s6 = rstd (rows).
@compute @workgroup_size(RW)
fn ln_forward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) li: u32) {
    let row = wid.x + wid.y * nwg.x;
    if (row >= p.rows) {
        return; // uniform across the workgroup, so the barriers below stay uniform
    }
    let o = row * p.c;
    var s = 0.0;
    for (var j = li; j < p.c; j += RW) {
        s += s1[o + j];
    }
    let mean = wg_sum2(li, s, 0.0).x / f32(p.c);
    // Two passes (mean, then squared deviations) avoid the cancellation of E[x^2] - E[x]^2.
    var v = 0.0;
    for (var j = li; j < p.c; j += RW) {
        let d = s1[o + j] - mean;
        v += d * d;
    }
    let rstd = inverseSqrt(wg_sum2(li, v, 0.0).x / f32(p.c) + p.eps);
    for (var j = li; j < p.c; j += RW) {
        s4[o + j] = (s1[o + j] - mean) * rstd * s2[j] + s3[j];
    }
    if (li == 0u) {
        s5[row] = mean;
        s6[row] = rstd;
    }
}

// s1 = x, s2 = w, s3 = dy; s4 = dx (accumulated), s5 = mean, s6 = rstd (read here).
// With g = dy * w and xhat = (x - mean) * rstd:
//   dx += rstd * (g - mean_j(g) - xhat * mean_j(g * xhat)).
@compute @workgroup_size(RW)
fn ln_backward_dx(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                  @builtin(local_invocation_index) li: u32) {
    let row = wid.x + wid.y * nwg.x;
    if (row >= p.rows) {
        return;
    }
    let o = row * p.c;
    let mean = s5[row];
    let rstd = s6[row];
    var sg = 0.0;
    var sgx = 0.0;
    for (var j = li; j < p.c; j += RW) {
        let g = s3[o + j] * s2[j];
        sg += g;
        sgx += g * (s1[o + j] - mean) * rstd;
    }
    let t = wg_sum2(li, sg, sgx) / f32(p.c);
    for (var j = li; j < p.c; j += RW) {
        let xhat = (s1[o + j] - mean) * rstd;
        let g = s3[o + j] * s2[j];
        s4[o + j] += rstd * (g - t.x - xhat * t.y);
    }
}

// s1 = x, s2 = dy, s3 = mean, s4 = rstd; s5 = partials (2, nblocks, C).
// Workgroup (x = channel tile, y = row block): each thread owns one channel of one block and adds
// dy * xhat (dw) and dy (db) over the block's rows in order.
@compute @workgroup_size(WG)
fn ln_backward_dwdb_partial(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let j = wid.x * WG + li;
    let blk = wid.y;
    if (j >= p.c) {
        return;
    }
    let r0 = blk * p.block_rows;
    let r1_end = min(r0 + p.block_rows, p.rows);
    var dw = 0.0;
    var db = 0.0;
    for (var r = r0; r < r1_end; r++) {
        let dy = s2[r * p.c + j];
        dw += dy * (s1[r * p.c + j] - s3[r]) * s4[r];
        db += dy;
    }
    s5[blk * p.c + j] = dw;
    s5[(p.nblocks + blk) * p.c + j] = db;
}

// s1 = partials (2, nblocks, C); s2 = dw (C), s3 = db (C), both accumulated. One thread per channel.
@compute @workgroup_size(WG)
fn ln_backward_dwdb_sum(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                        @builtin(local_invocation_index) li: u32) {
    let j = (wid.x + wid.y * nwg.x) * WG + li;
    if (j >= p.c) {
        return;
    }
    var dw = 0.0;
    var db = 0.0;
    for (var k = 0u; k < p.nblocks; k++) {
        dw += s1[k * p.c + j];
        db += s1[(p.nblocks + k) * p.c + j];
    }
    s2[j] += dw;
    s3[j] += db;
}
