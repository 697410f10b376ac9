// LayerNorm over the last dim of a (rows, C) array, eps and biased variance as PyTorch:
//   y = (x - mean) * rstd * w + b,  rstd = 1 / sqrt(mean((x - mean)^2) + eps).
// The forward keeps mean and rstd per row for the backward (as llm.c does). The row kernels run
// one workgroup per row with the row reductions of rows.wgsl; dw and db are column sums over rows, done race-free
// as per-block partial sums (one thread per channel) followed by an in-order sum of the blocks.

const WG: u32 = 256u; // threads per workgroup of the dw/db kernels
// The row kernels run RW threads per row; RW and the reductions (row_sum, row_sum2) come from
// rows.wgsl or rows_subgroup.wgsl, which the Rust side puts in front of this file.

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
// Each entry point declares the buffers it binds, in the order the Rust wrapper passes them; entry
// points share a binding number but not a variable, so every buffer can say what it holds and be
// read-only where it is only read. The Rust side checks that no two bindings share a buffer.
@group(0) @binding(1) var<storage, read> x: array<f32>; // (rows, C): forward, backward_dx, dwdb_partial

@group(0) @binding(2) var<storage, read> w: array<f32>;             // (C)
@group(0) @binding(3) var<storage, read> b: array<f32>;             // (C)
@group(0) @binding(4) var<storage, read_write> y: array<f32>;       // (rows, C)
@group(0) @binding(5) var<storage, read_write> mean_out: array<f32>; // (rows)
@group(0) @binding(6) var<storage, read_write> rstd_out: array<f32>; // (rows)

@compute @workgroup_size(RW)
fn layernorm(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) li: u32) {
    let row = wid.x + wid.y * nwg.x;
    if (row >= p.rows) {
        return; // uniform across the workgroup, so the barriers below stay uniform
    }
    let o = row * p.c;
    var s = 0.0;
    for (var j = li; j < p.c; j += RW) {
        s += x[o + j];
    }
    let mean = row_sum(li, s) / f32(p.c);
    // Two passes (mean, then squared deviations) avoid the cancellation of E[x^2] - E[x]^2.
    var v = 0.0;
    for (var j = li; j < p.c; j += RW) {
        let d = x[o + j] - mean;
        v += d * d;
    }
    let rstd = inverseSqrt(row_sum(li, v) / f32(p.c) + p.eps);
    for (var j = li; j < p.c; j += RW) {
        y[o + j] = (x[o + j] - mean) * rstd * w[j] + b[j];
    }
    if (li == 0u) {
        mean_out[row] = mean;
        rstd_out[row] = rstd;
    }
}

@group(0) @binding(3) var<storage, read> dy: array<f32>;           // (rows, C), with x and w above
@group(0) @binding(4) var<storage, read_write> dx: array<f32>;     // (rows, C), accumulated
@group(0) @binding(5) var<storage, read> saved_mean: array<f32>;   // (rows), from the forward
@group(0) @binding(6) var<storage, read> saved_rstd: array<f32>;   // (rows), from the forward

// With g = dy * w and xhat = (x - mean) * rstd:
//   dx += rstd * (g - mean_j(g) - xhat * mean_j(g * xhat)).
@compute @workgroup_size(RW)
fn layernorm_backward_dx(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                  @builtin(local_invocation_index) li: u32) {
    let row = wid.x + wid.y * nwg.x;
    if (row >= p.rows) {
        return;
    }
    let o = row * p.c;
    let mean = saved_mean[row];
    let rstd = saved_rstd[row];
    var sg = 0.0;
    var sgx = 0.0;
    for (var j = li; j < p.c; j += RW) {
        let g = dy[o + j] * w[j];
        sg += g;
        sgx += g * (x[o + j] - mean) * rstd;
    }
    let t = row_sum2(li, vec2<f32>(sg, sgx)) / f32(p.c);
    for (var j = li; j < p.c; j += RW) {
        let xhat = (x[o + j] - mean) * rstd;
        let g = dy[o + j] * w[j];
        dx[o + j] += rstd * (g - t.x - xhat * t.y);
    }
}

@group(0) @binding(2) var<storage, read> part_dy: array<f32>;             // (rows, C), with x above
@group(0) @binding(3) var<storage, read> part_mean: array<f32>;           // (rows)
@group(0) @binding(4) var<storage, read> part_rstd: array<f32>;           // (rows)
@group(0) @binding(5) var<storage, read_write> partials: array<f32>;      // (2, nblocks, C): dw, then db

// Workgroup (x = channel tile, y = row block): each thread owns one channel of one block and adds
// dy * xhat (dw) and dy (db) over the block's rows in order.
@compute @workgroup_size(WG)
fn layernorm_backward_dwdb_partial(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let j = wid.x * WG + li;
    let blk = wid.y;
    if (j >= p.c) {
        return;
    }
    let r0 = blk * p.block_rows;
    let r1_end = min(r0 + p.block_rows, p.rows);
    var dw_blk = 0.0;
    var db_blk = 0.0;
    for (var r = r0; r < r1_end; r++) {
        let g = part_dy[r * p.c + j];
        dw_blk += g * (x[r * p.c + j] - part_mean[r]) * part_rstd[r];
        db_blk += g;
    }
    partials[blk * p.c + j] = dw_blk;
    partials[(p.nblocks + blk) * p.c + j] = db_blk;
}

@group(0) @binding(1) var<storage, read> sum_partials: array<f32>;       // (2, nblocks, C)
@group(0) @binding(2) var<storage, read_write> dw: array<f32>;            // (C), accumulated
@group(0) @binding(3) var<storage, read_write> db: array<f32>;            // (C), accumulated

// dw and db: the blocks' partials added in order. One thread per channel.
@compute @workgroup_size(WG)
fn layernorm_backward_dwdb_sum(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                        @builtin(local_invocation_index) li: u32) {
    let j = (wid.x + wid.y * nwg.x) * WG + li;
    if (j >= p.c) {
        return;
    }
    var dw_j = 0.0;
    var db_j = 0.0;
    for (var k = 0u; k < p.nblocks; k++) {
        dw_j += sum_partials[k * p.c + j];
        db_j += sum_partials[(p.nblocks + k) * p.c + j];
    }
    dw[j] += dw_j;
    db[j] += db_j;
}
