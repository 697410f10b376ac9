// Batched strided matmul: C[z] = alpha * A[z] · B[z] (+ bias) (+ C[z] when accumulating).
// Every operand is a view: element (z1, z2, i, j) sits at z1*outer + z2*inner + i*row + j*col, with
// z = z1 * nb_inner + z2. A transposed operand is the same buffer with row and col swapped, and the
// heads of a (B, T, C) activation are a (B, NH, T, HS) view, so no transpose or split is copied.
// Tiles: 64x64 outputs per workgroup of 16x16 threads, 4x4 outputs per thread, K in steps of 16.

const TM: u32 = 64u;
const TN: u32 = 64u;
const TK: u32 = 16u;

struct Params {
    m: u32, n: u32, k: u32, nb_inner: u32,
    a_outer: u32, a_inner: u32, a_row: u32, a_col: u32,
    b_outer: u32, b_inner: u32, b_row: u32, b_col: u32,
    c_outer: u32, c_inner: u32, c_row: u32, c_col: u32,
    alpha: f32, accumulate: u32, has_bias: u32, _pad: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> c: array<f32>;

var<workgroup> ta: array<f32, 1024>; // [TK][TM]
var<workgroup> tb: array<f32, 1024>; // [TK][TN]

@compute @workgroup_size(16, 16)
fn matmul(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
          @builtin(local_invocation_index) li: u32) {
    let z1 = wid.z / p.nb_inner;
    let z2 = wid.z % p.nb_inner;
    let a0 = z1 * p.a_outer + z2 * p.a_inner;
    let b0 = z1 * p.b_outer + z2 * p.b_inner;
    let c0 = z1 * p.c_outer + z2 * p.c_inner;
    let row0 = wid.y * TM;
    let col0 = wid.x * TN;
    var acc0 = vec4<f32>(0.0);
    var acc1 = vec4<f32>(0.0);
    var acc2 = vec4<f32>(0.0);
    var acc3 = vec4<f32>(0.0);
    for (var k0 = 0u; k0 < p.k; k0 += TK) {
        for (var e = 0u; e < 4u; e++) {
            let idx = li + e * 256u;
            // Let neighbouring threads read neighbouring addresses: K-fastest when A is row-major.
            var r = idx % TM;
            var kk = idx / TM;
            if (p.a_col == 1u) {
                r = idx / TK;
                kk = idx % TK;
            }
            var v = 0.0;
            if (row0 + r < p.m && k0 + kk < p.k) {
                v = a[a0 + (row0 + r) * p.a_row + (k0 + kk) * p.a_col];
            }
            ta[kk * TM + r] = v;
            var cc = idx % TN;
            var kb = idx / TN;
            if (p.b_col != 1u && p.b_row == 1u) {
                cc = idx / TK;
                kb = idx % TK;
            }
            var w = 0.0;
            if (col0 + cc < p.n && k0 + kb < p.k) {
                w = b[b0 + (k0 + kb) * p.b_row + (col0 + cc) * p.b_col];
            }
            tb[kb * TN + cc] = w;
        }
        workgroupBarrier();
        for (var kk = 0u; kk < TK; kk++) {
            let bv = vec4<f32>(tb[kk * TN + lid.x], tb[kk * TN + lid.x + 16u], tb[kk * TN + lid.x + 32u], tb[kk * TN + lid.x + 48u]);
            acc0 = fma(vec4<f32>(ta[kk * TM + lid.y]), bv, acc0);
            acc1 = fma(vec4<f32>(ta[kk * TM + lid.y + 16u]), bv, acc1);
            acc2 = fma(vec4<f32>(ta[kk * TM + lid.y + 32u]), bv, acc2);
            acc3 = fma(vec4<f32>(ta[kk * TM + lid.y + 48u]), bv, acc3);
        }
        workgroupBarrier();
    }
    store_row(c0, row0 + lid.y, col0 + lid.x, acc0);
    store_row(c0, row0 + lid.y + 16u, col0 + lid.x, acc1);
    store_row(c0, row0 + lid.y + 32u, col0 + lid.x, acc2);
    store_row(c0, row0 + lid.y + 48u, col0 + lid.x, acc3);
}

fn store_row(c0: u32, r: u32, col: u32, v: vec4<f32>) {
    if (r >= p.m) {
        return;
    }
    for (var j = 0u; j < 4u; j++) {
        let cc = col + j * 16u;
        if (cc < p.n) {
            var out = p.alpha * v[j];
            if (p.has_bias != 0u) {
                out += bias[cc];
            }
            let ci = c0 + r * p.c_row + cc * p.c_col;
            if (p.accumulate != 0u) {
                out += c[ci];
            }
            c[ci] = out;
        }
    }
}

// Column sums over every batch and row: dst[j] (+)= sum_{z, i} src[z, i, j]. Used for the bias
// gradient and to add up per-batch partial gradients of an operand shared by all batches.
// dst is itself a view: column j lands at (j / dn) * d_row + (j % dn) * d_col.
struct SumParams {
    m: u32, n: u32, nb_outer: u32, nb_inner: u32,
    outer: u32, inner: u32, row: u32, col: u32,
    accumulate: u32, dn: u32, d_row: u32, d_col: u32,
}

@group(0) @binding(0) var<uniform> q: SumParams;
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;

@compute @workgroup_size(64)
fn sum_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) li: u32) {
    let j = (wid.x + wid.y * nwg.x) * 64u + li;
    if (j >= q.n) {
        return;
    }
    var s = 0.0;
    for (var z1 = 0u; z1 < q.nb_outer; z1++) {
        for (var z2 = 0u; z2 < q.nb_inner; z2++) {
            let base = z1 * q.outer + z2 * q.inner + j * q.col;
            for (var i = 0u; i < q.m; i++) {
                s += src[base + i * q.row];
            }
        }
    }
    let d = (j / q.dn) * q.d_row + (j % q.dn) * q.d_col;
    if (q.accumulate != 0u) {
        s += dst[d];
    }
    dst[d] = s;
}
