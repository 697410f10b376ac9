// The tiled product for large operands on hardware GPUs: C[z] = alpha * A[z] · B[z] (+ bias)
// (+ C[z] when accumulating), with the views, Params and split K of matmul.wgsl. A workgroup of
// 16 x 16 threads covers 128 x 128 outputs, each thread an 8 x 8 block (rows 4y..4y+3 and
// 64+4y..64+4y+3, columns 4x..4x+3 and 64+4x..64+4x+3), K in steps of 8 through workgroup memory
// held as vec4: one K step is 4 vec4 reads for 64 FMAs (matmul.wgsl's 64 x 64 tiles: 8 reads for
// 16). `matmul_big_exact` drops the bounds checks for whole tiles (M, N multiples of 128, K of 8).

const BM: u32 = 128u;
const BN: u32 = 128u;
const BK: u32 = 8u;

struct Params {
    m: u32, n: u32, k: u32, nb_inner: u32,
    a_outer: u32, a_inner: u32, a_row: u32, a_col: u32,
    b_outer: u32, b_inner: u32, b_row: u32, b_col: u32,
    c_outer: u32, c_inner: u32, c_row: u32, c_col: u32,
    alpha: f32, accumulate: u32, has_bias: u32, reads: u32,
    k_chunk: u32, _pad0: u32, _pad1: u32, _pad2: u32, // split K, as in matmul.wgsl
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> c: array<f32>;

var<workgroup> sa: array<vec4<f32>, 256>; // [BK][BM / 4]
var<workgroup> sb: array<vec4<f32>, 256>; // [BK][BN / 4]

@compute @workgroup_size(16, 16)
fn matmul_big(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
              @builtin(local_invocation_index) li: u32) {
    big(wid, lid, li, false);
}

@compute @workgroup_size(16, 16)
fn matmul_big_exact(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
                    @builtin(local_invocation_index) li: u32) {
    big(wid, lid, li, true);
}

// acc += a * b, one row of four outputs.
fn fma4(acc: ptr<function, vec4<f32>>, a: f32, b: vec4<f32>) {
    *acc = fma(vec4<f32>(a), b, *acc);
}

// `exact`: a constant at both call sites, so the compiler drops the checks from the exact entry.
fn big(wid: vec3<u32>, lid: vec3<u32>, li: u32, exact: bool) {
    let z1 = wid.z / p.nb_inner;
    let z2 = wid.z % p.nb_inner;
    let a0 = z1 * p.a_outer + z2 * p.a_inner;
    let b0 = z1 * p.b_outer + z2 * p.b_inner;
    let c0 = z1 * p.c_outer + z2 * p.c_inner;
    let row0 = wid.y * BM;
    let col0 = wid.x * BN;
    var kbeg = 0u;
    var kend = p.k;
    if (p.k_chunk != 0u) {
        kbeg = wid.z * p.k_chunk;
        kend = min(p.k, kbeg + p.k_chunk);
    }
    // Rows 4y.. (lo) and 64+4y.. (hi), each times columns 4x.. (l) and 64+4x.. (h).
    var lo0l = vec4<f32>(0.0); var lo0h = vec4<f32>(0.0);
    var lo1l = vec4<f32>(0.0); var lo1h = vec4<f32>(0.0);
    var lo2l = vec4<f32>(0.0); var lo2h = vec4<f32>(0.0);
    var lo3l = vec4<f32>(0.0); var lo3h = vec4<f32>(0.0);
    var hi0l = vec4<f32>(0.0); var hi0h = vec4<f32>(0.0);
    var hi1l = vec4<f32>(0.0); var hi1h = vec4<f32>(0.0);
    var hi2l = vec4<f32>(0.0); var hi2h = vec4<f32>(0.0);
    var hi3l = vec4<f32>(0.0); var hi3h = vec4<f32>(0.0);
    for (var k0 = kbeg; k0 < kend; k0 += BK) {
        for (var e = 0u; e < 4u; e++) {
            let idx = li + e * 256u;
            // Neighbouring threads read neighbouring addresses: along k when A's rows are
            // contiguous, else along its rows; along j when B's rows are contiguous, else along k.
            var r = idx % BM;
            var kk = idx / BM;
            if (p.a_col == 1u) {
                r = idx / BK;
                kk = idx % BK;
            }
            var v = 0.0;
            if (exact || (row0 + r < p.m && k0 + kk < kend)) {
                v = a[a0 + (row0 + r) * p.a_row + (k0 + kk) * p.a_col];
            }
            sa[kk * 32u + r / 4u][r % 4u] = v;
            var cc = idx % BN;
            var kb = idx / BN;
            if (p.b_col != 1u && p.b_row == 1u) {
                cc = idx / BK;
                kb = idx % BK;
            }
            var w = 0.0;
            if (exact || (col0 + cc < p.n && k0 + kb < kend)) {
                w = b[b0 + (k0 + kb) * p.b_row + (col0 + cc) * p.b_col];
            }
            sb[kb * 32u + cc / 4u][cc % 4u] = w;
        }
        workgroupBarrier();
        for (var kk = 0u; kk < BK; kk++) {
            let al = sa[kk * 32u + lid.y];
            let ah = sa[kk * 32u + 16u + lid.y];
            let bl = sb[kk * 32u + lid.x];
            let bh = sb[kk * 32u + 16u + lid.x];
            fma4(&lo0l, al.x, bl); fma4(&lo0h, al.x, bh);
            fma4(&lo1l, al.y, bl); fma4(&lo1h, al.y, bh);
            fma4(&lo2l, al.z, bl); fma4(&lo2h, al.z, bh);
            fma4(&lo3l, al.w, bl); fma4(&lo3h, al.w, bh);
            fma4(&hi0l, ah.x, bl); fma4(&hi0h, ah.x, bh);
            fma4(&hi1l, ah.y, bl); fma4(&hi1h, ah.y, bh);
            fma4(&hi2l, ah.z, bl); fma4(&hi2h, ah.z, bh);
            fma4(&hi3l, ah.w, bl); fma4(&hi3h, ah.w, bh);
        }
        workgroupBarrier();
    }
    let rl = row0 + 4u * lid.y;
    let rh = rl + 64u;
    let cl = col0 + 4u * lid.x;
    let ch = cl + 64u;
    store4(c0, rl, cl, lo0l, exact); store4(c0, rl, ch, lo0h, exact);
    store4(c0, rl + 1u, cl, lo1l, exact); store4(c0, rl + 1u, ch, lo1h, exact);
    store4(c0, rl + 2u, cl, lo2l, exact); store4(c0, rl + 2u, ch, lo2h, exact);
    store4(c0, rl + 3u, cl, lo3l, exact); store4(c0, rl + 3u, ch, lo3h, exact);
    store4(c0, rh, cl, hi0l, exact); store4(c0, rh, ch, hi0h, exact);
    store4(c0, rh + 1u, cl, hi1l, exact); store4(c0, rh + 1u, ch, hi1h, exact);
    store4(c0, rh + 2u, cl, hi2l, exact); store4(c0, rh + 2u, ch, hi2h, exact);
    store4(c0, rh + 3u, cl, hi3l, exact); store4(c0, rh + 3u, ch, hi3h, exact);
}

// Four consecutive outputs of row r from column col on.
fn store4(c0: u32, r: u32, col: u32, v: vec4<f32>, exact: bool) {
    if (!exact && r >= p.m) {
        return;
    }
    for (var j = 0u; j < 4u; j++) {
        let cc = col + j;
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
