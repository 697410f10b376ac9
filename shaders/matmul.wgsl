// Batched strided matmul: C[z] = alpha * A[z] · B[z] (+ bias) (+ C[z] when accumulating).
// Every operand is a view: element (z1, z2, i, j) sits at z1*outer + z2*inner + i*row + j*col, with
// z = z1 * nb_inner + z2. A transposed operand is the same buffer with row and col swapped, and the
// heads of a (B, T, C) activation are a (B, NH, T, HS) view, so no transpose or split is copied.
// Tiles: 64x64 outputs per workgroup of 16x16 threads, 4x4 outputs per thread, K in steps of 16
// (`matmul`, and `matmul_exact` without bounds checks for shapes that are whole tiles).

const TM: u32 = 64u;
const TN: u32 = 64u;
const TK: u32 = 16u;

struct Params {
    m: u32, n: u32, k: u32, nb_inner: u32,
    a_outer: u32, a_inner: u32, a_row: u32, a_col: u32,
    b_outer: u32, b_inner: u32, b_row: u32, b_col: u32,
    c_outer: u32, c_inner: u32, c_row: u32, c_col: u32,
    alpha: f32, accumulate: u32, has_bias: u32, reads: u32, // reads: used by matmul_vec4.wgsl only
    // Split K (`tiled` only): when not 0, workgroup z takes k in [z * k_chunk, (z + 1) * k_chunk)
    // of the one product and writes its partial C at z * c_outer (the host then sums them).
    k_chunk: u32, _pad0: u32, _pad1: u32, _pad2: u32,
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
    tiled(wid, lid, li, false);
}

// The same tiles when M and N are multiples of 64 and K of 16 (the GPT's linear layers at most
// batch sizes): no bounds check on any load or store. The host picks it only for such shapes.
@compute @workgroup_size(16, 16)
fn matmul_exact(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
                @builtin(local_invocation_index) li: u32) {
    tiled(wid, lid, li, true);
}

// `exact`: a constant at both call sites, so the compiler drops the checks from `matmul_exact`.
fn tiled(wid: vec3<u32>, lid: vec3<u32>, li: u32, exact: bool) {
    let z1 = wid.z / p.nb_inner;
    let z2 = wid.z % p.nb_inner;
    let a0 = z1 * p.a_outer + z2 * p.a_inner;
    let b0 = z1 * p.b_outer + z2 * p.b_inner;
    let c0 = z1 * p.c_outer + z2 * p.c_inner;
    let row0 = wid.y * TM;
    let col0 = wid.x * TN;
    var kbeg = 0u;
    var kend = p.k;
    if (p.k_chunk != 0u) {
        kbeg = wid.z * p.k_chunk;
        kend = min(p.k, kbeg + p.k_chunk);
    }
    var acc0 = vec4<f32>(0.0);
    var acc1 = vec4<f32>(0.0);
    var acc2 = vec4<f32>(0.0);
    var acc3 = vec4<f32>(0.0);
    for (var k0 = kbeg; k0 < kend; k0 += TK) {
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
            if (exact || (row0 + r < p.m && k0 + kk < kend)) {
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
            if (exact || (col0 + cc < p.n && k0 + kb < kend)) {
                w = b[b0 + (k0 + kb) * p.b_row + (col0 + cc) * p.b_col];
            }
            tb[kb * TN + cc] = w;
        }
        workgroupBarrier();
        for (var kk = 0u; kk < TK; kk++) {
            let bv = vec4<f32>(
                tb[kk * TN + lid.x],
                tb[kk * TN + lid.x + 16u],
                tb[kk * TN + lid.x + 32u],
                tb[kk * TN + lid.x + 48u],
            );
            acc0 = fma(vec4<f32>(ta[kk * TM + lid.y]), bv, acc0);
            acc1 = fma(vec4<f32>(ta[kk * TM + lid.y + 16u]), bv, acc1);
            acc2 = fma(vec4<f32>(ta[kk * TM + lid.y + 32u]), bv, acc2);
            acc3 = fma(vec4<f32>(ta[kk * TM + lid.y + 48u]), bv, acc3);
        }
        workgroupBarrier();
    }
    store_row(c0, row0 + lid.y, col0 + lid.x, acc0, exact);
    store_row(c0, row0 + lid.y + 16u, col0 + lid.x, acc1, exact);
    store_row(c0, row0 + lid.y + 32u, col0 + lid.x, acc2, exact);
    store_row(c0, row0 + lid.y + 48u, col0 + lid.x, acc3, exact);
}

fn store_row(c0: u32, r: u32, col: u32, v: vec4<f32>, exact: bool) {
    if (!exact && r >= p.m) {
        return;
    }
    for (var j = 0u; j < 4u; j++) {
        let cc = col + j * 16u;
        if (exact || cc < p.n) {
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

// The same product for CPU adapters (lavapipe, SwiftShader), where every storage-buffer read
// costs about the same whatever its address and barriers are dear: no workgroup memory, and each
// thread keeps a 16 x 8 block of C in registers, so a K step is 24 reads for 128 FMAs. Threads
// (8 x 4) own rows r0..r0+15 and columns col0 + 8j (j < 8): the same 64 x 64 tile per workgroup
// as above, so `matmul_reg` takes the same grid. Reads past the edge are clamped to the last
// row / column (in bounds, never stored).

@compute @workgroup_size(8, 4)
fn matmul_reg(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    reg_block(wid, lid, 8u);
}

// For N <= 16 (the attention products with a head size of 16): 64 x 16 tiles of 2 x 4 threads,
// so no thread computes columns that do not exist. Grid: ceil(N / 16) x ceil(M / 64) x batches.
@compute @workgroup_size(2, 4)
fn matmul_reg16(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    reg_block(wid, lid, 2u);
}

// The thread's 16 x 8 block: rows r0..r0+15, columns col0 + j * step (j < 8), where `step` is the
// workgroup's x size, so a workgroup covers 64 rows and 8 * step columns.
fn reg_block(wid: vec3<u32>, lid: vec3<u32>, step: u32) {
    let z1 = wid.z / p.nb_inner;
    let z2 = wid.z % p.nb_inner;
    let a0 = z1 * p.a_outer + z2 * p.a_inner;
    let b0 = z1 * p.b_outer + z2 * p.b_inner;
    let c0 = z1 * p.c_outer + z2 * p.c_inner;
    let r0 = wid.y * TM + lid.y * 16u;
    let col0 = wid.x * 8u * step + lid.x;
    let last_row = p.m - 1u;
    let last_col = p.n - 1u;
    let ar0 = a0 + min(r0 + 0u, last_row) * p.a_row;
    let ar1 = a0 + min(r0 + 1u, last_row) * p.a_row;
    let ar2 = a0 + min(r0 + 2u, last_row) * p.a_row;
    let ar3 = a0 + min(r0 + 3u, last_row) * p.a_row;
    let ar4 = a0 + min(r0 + 4u, last_row) * p.a_row;
    let ar5 = a0 + min(r0 + 5u, last_row) * p.a_row;
    let ar6 = a0 + min(r0 + 6u, last_row) * p.a_row;
    let ar7 = a0 + min(r0 + 7u, last_row) * p.a_row;
    let ar8 = a0 + min(r0 + 8u, last_row) * p.a_row;
    let ar9 = a0 + min(r0 + 9u, last_row) * p.a_row;
    let ar10 = a0 + min(r0 + 10u, last_row) * p.a_row;
    let ar11 = a0 + min(r0 + 11u, last_row) * p.a_row;
    let ar12 = a0 + min(r0 + 12u, last_row) * p.a_row;
    let ar13 = a0 + min(r0 + 13u, last_row) * p.a_row;
    let ar14 = a0 + min(r0 + 14u, last_row) * p.a_row;
    let ar15 = a0 + min(r0 + 15u, last_row) * p.a_row;
    let bc0 = b0 + min(col0 + 0u * step, last_col) * p.b_col;
    let bc1 = b0 + min(col0 + 1u * step, last_col) * p.b_col;
    let bc2 = b0 + min(col0 + 2u * step, last_col) * p.b_col;
    let bc3 = b0 + min(col0 + 3u * step, last_col) * p.b_col;
    let bc4 = b0 + min(col0 + 4u * step, last_col) * p.b_col;
    let bc5 = b0 + min(col0 + 5u * step, last_col) * p.b_col;
    let bc6 = b0 + min(col0 + 6u * step, last_col) * p.b_col;
    let bc7 = b0 + min(col0 + 7u * step, last_col) * p.b_col;
    var l0 = vec4<f32>(0.0); var h0 = vec4<f32>(0.0);
    var l1 = vec4<f32>(0.0); var h1 = vec4<f32>(0.0);
    var l2 = vec4<f32>(0.0); var h2 = vec4<f32>(0.0);
    var l3 = vec4<f32>(0.0); var h3 = vec4<f32>(0.0);
    var l4 = vec4<f32>(0.0); var h4 = vec4<f32>(0.0);
    var l5 = vec4<f32>(0.0); var h5 = vec4<f32>(0.0);
    var l6 = vec4<f32>(0.0); var h6 = vec4<f32>(0.0);
    var l7 = vec4<f32>(0.0); var h7 = vec4<f32>(0.0);
    var l8 = vec4<f32>(0.0); var h8 = vec4<f32>(0.0);
    var l9 = vec4<f32>(0.0); var h9 = vec4<f32>(0.0);
    var l10 = vec4<f32>(0.0); var h10 = vec4<f32>(0.0);
    var l11 = vec4<f32>(0.0); var h11 = vec4<f32>(0.0);
    var l12 = vec4<f32>(0.0); var h12 = vec4<f32>(0.0);
    var l13 = vec4<f32>(0.0); var h13 = vec4<f32>(0.0);
    var l14 = vec4<f32>(0.0); var h14 = vec4<f32>(0.0);
    var l15 = vec4<f32>(0.0); var h15 = vec4<f32>(0.0);
    for (var kk = 0u; kk < p.k; kk++) {
        let ka = kk * p.a_col;
        let kb = kk * p.b_row;
        let bl = vec4<f32>(b[bc0 + kb], b[bc1 + kb], b[bc2 + kb], b[bc3 + kb]);
        let bh = vec4<f32>(b[bc4 + kb], b[bc5 + kb], b[bc6 + kb], b[bc7 + kb]);
        mac(&l0, &h0, a[ar0 + ka], bl, bh);
        mac(&l1, &h1, a[ar1 + ka], bl, bh);
        mac(&l2, &h2, a[ar2 + ka], bl, bh);
        mac(&l3, &h3, a[ar3 + ka], bl, bh);
        mac(&l4, &h4, a[ar4 + ka], bl, bh);
        mac(&l5, &h5, a[ar5 + ka], bl, bh);
        mac(&l6, &h6, a[ar6 + ka], bl, bh);
        mac(&l7, &h7, a[ar7 + ka], bl, bh);
        mac(&l8, &h8, a[ar8 + ka], bl, bh);
        mac(&l9, &h9, a[ar9 + ka], bl, bh);
        mac(&l10, &h10, a[ar10 + ka], bl, bh);
        mac(&l11, &h11, a[ar11 + ka], bl, bh);
        mac(&l12, &h12, a[ar12 + ka], bl, bh);
        mac(&l13, &h13, a[ar13 + ka], bl, bh);
        mac(&l14, &h14, a[ar14 + ka], bl, bh);
        mac(&l15, &h15, a[ar15 + ka], bl, bh);
    }
    store_reg(c0, r0 + 0u, col0, step, l0, h0);
    store_reg(c0, r0 + 1u, col0, step, l1, h1);
    store_reg(c0, r0 + 2u, col0, step, l2, h2);
    store_reg(c0, r0 + 3u, col0, step, l3, h3);
    store_reg(c0, r0 + 4u, col0, step, l4, h4);
    store_reg(c0, r0 + 5u, col0, step, l5, h5);
    store_reg(c0, r0 + 6u, col0, step, l6, h6);
    store_reg(c0, r0 + 7u, col0, step, l7, h7);
    store_reg(c0, r0 + 8u, col0, step, l8, h8);
    store_reg(c0, r0 + 9u, col0, step, l9, h9);
    store_reg(c0, r0 + 10u, col0, step, l10, h10);
    store_reg(c0, r0 + 11u, col0, step, l11, h11);
    store_reg(c0, r0 + 12u, col0, step, l12, h12);
    store_reg(c0, r0 + 13u, col0, step, l13, h13);
    store_reg(c0, r0 + 14u, col0, step, l14, h14);
    store_reg(c0, r0 + 15u, col0, step, l15, h15);
}

// One row of the register block: columns 0..3 and 4..7 of the thread's eight.
fn mac(lo: ptr<function, vec4<f32>>, hi: ptr<function, vec4<f32>>, av: f32, bl: vec4<f32>, bh: vec4<f32>) {
    *lo = fma(vec4<f32>(av), bl, *lo);
    *hi = fma(vec4<f32>(av), bh, *hi);
}

fn store_reg(c0: u32, r: u32, col: u32, step: u32, lo: vec4<f32>, hi: vec4<f32>) {
    if (r >= p.m) {
        return;
    }
    for (var j = 0u; j < 8u; j++) {
        let cc = col + j * step;
        if (cc < p.n) {
            var v = lo;
            if (j >= 4u) {
                v = hi;
            }
            var out = p.alpha * v[j % 4u];
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
    src_outer: u32, src_inner: u32, src_row: u32, src_col: u32,
    accumulate: u32, dn: u32, d_row: u32, d_col: u32,
    chunk: u32, _pad0: u32, _pad1: u32, _pad2: u32, // sum_rows_partial: rows per workgroup row
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
            let base = z1 * q.src_outer + z2 * q.src_inner + j * q.src_col;
            for (var i = 0u; i < q.m; i++) {
                s += src[base + i * q.src_row];
            }
        }
    }
    let d = (j / q.dn) * q.d_row + (j % q.dn) * q.d_col;
    if (q.accumulate != 0u) {
        s += dst[d];
    }
    dst[d] = s;
}

// The first of two passes for many rows (one thread a column would walk them all alone):
// workgroup (x, y) sums columns 64x..64x+63 over the flattened rows y*chunk..(y+1)*chunk (row r is
// batch r / m, row r % m), four threads a column, and writes dst[y * n + j] (a [chunks, n] scratch
// that `sum_rows` then adds up in order). The order of every sum is fixed: deterministic.
var<workgroup> lanes: array<f32, 256>; // [4][64]

@compute @workgroup_size(64, 4)
fn sum_rows_partial(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let j = wid.x * 64u + lid.x;
    let rows = q.m * q.nb_outer * q.nb_inner;
    let r0 = wid.y * q.chunk;
    let r1 = min(rows, r0 + q.chunk);
    var s = 0.0;
    if (j < q.n) {
        for (var r = r0 + lid.y; r < r1; r += 4u) {
            let z = r / q.m;
            let i = r % q.m;
            let z1 = z / q.nb_inner;
            let z2 = z % q.nb_inner;
            s += src[z1 * q.src_outer + z2 * q.src_inner + i * q.src_row + j * q.src_col];
        }
    }
    lanes[lid.y * 64u + lid.x] = s;
    workgroupBarrier();
    if (lid.y == 0u && j < q.n) {
        dst[wid.y * q.n + j] = ((lanes[lid.x] + lanes[64u + lid.x]) + lanes[128u + lid.x]) + lanes[192u + lid.x];
    }
}
