// Batched strided matmul without workgroup memory, operands read as vec4: C[z] = alpha * A[z] · B[z]
// (+ bias) (+ C[z] when accumulating), with the views and Params of matmul.wgsl. Each thread keeps a
// 4 x 4 (`matmul_v4`) or 8 x 4 (`matmul_v8`) block of C in registers; a workgroup of 8 x 8 threads
// covers 32 columns and 32 or 64 rows. Nothing is shared between threads, so there is no barrier.
// The host takes these entries only for vec4-able views (src/ops/matmul/gpu.rs `vec4_reads`): each
// operand contiguous along one of its axes, that axis a multiple of 4 long, every other stride a
// multiple of 4. `p.reads` says which axes: bit 0, A's rows are contiguous (read along k; else its
// columns, read along i); bit 1, B's rows are (read along j; else its columns, read along k); bit 2,
// M and N are whole tiles (no clamps, no store checks). Only with A read along i and B along j may K
// be any length (a tail of single-k steps); otherwise it is a multiple of 4.

const WG: u32 = 8u;

struct Params {
    m: u32, n: u32, k: u32, nb_inner: u32,
    a_outer: u32, a_inner: u32, a_row: u32, a_col: u32,
    b_outer: u32, b_inner: u32, b_row: u32, b_col: u32,
    c_outer: u32, c_inner: u32, c_row: u32, c_col: u32,
    alpha: f32, accumulate: u32, has_bias: u32, reads: u32,
    k_chunk: u32, _pad0: u32, _pad1: u32, _pad2: u32, // split K: matmul.wgsl's `tiled` only
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> b: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> c: array<f32>;

@compute @workgroup_size(8, 8)
fn matmul_v4(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    by_reads(wid, lid, false);
}

@compute @workgroup_size(8, 8)
fn matmul_v8(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    by_reads(wid, lid, true);
}

// One uniform switch, so that inside `block` every flag is a constant the compiler folds.
fn by_reads(wid: vec3<u32>, lid: vec3<u32>, tall: bool) {
    switch p.reads {
        case 0u: { block(wid, lid, tall, false, false, false); }
        case 1u: { block(wid, lid, tall, true, false, false); }
        case 2u: { block(wid, lid, tall, false, true, false); }
        case 3u: { block(wid, lid, tall, true, true, false); }
        case 4u: { block(wid, lid, tall, false, false, true); }
        case 5u: { block(wid, lid, tall, true, false, true); }
        case 6u: { block(wid, lid, tall, false, true, true); }
        default: { block(wid, lid, tall, true, true, true); }
    }
}

// A matrix whose column r is a row of the operand's 4 x 4 block: `m` itself when the four vec4 read
// were rows, its transpose when they were columns.
fn rows_of(m: mat4x4<f32>, read_rows: bool) -> mat4x4<f32> {
    if (read_rows) {
        return m;
    }
    return transpose(m);
}

// The vec4 indices of A's four reads for the rows from `r0`: rows (along k) or columns (along i).
fn a_bases(a0: u32, r0: u32, ak: bool, exact: bool) -> vec4<u32> {
    if (ak) {
        var i = vec4<u32>(r0) + vec4<u32>(0u, 1u, 2u, 3u);
        if (!exact) {
            i = min(i, vec4<u32>(p.m - 1u));
        }
        return (vec4<u32>(a0) + i * p.a_row) / 4u;
    }
    var r = r0;
    if (!exact) {
        r = min(r, p.m - 4u);
    }
    return vec4<u32>((a0 + r) / 4u) + vec4<u32>(0u, 1u, 2u, 3u) * (p.a_col / 4u);
}

fn block(wid: vec3<u32>, lid: vec3<u32>, tall: bool, ak: bool, bn: bool, exact: bool) {
    let z1 = wid.z / p.nb_inner;
    let z2 = wid.z % p.nb_inner;
    let a0 = z1 * p.a_outer + z2 * p.a_inner;
    let b0 = z1 * p.b_outer + z2 * p.b_inner;
    let c0 = z1 * p.c_outer + z2 * p.c_inner;
    let row0 = (wid.y * WG + lid.y) * select(4u, 8u, tall);
    let col0 = (wid.x * WG + lid.x) * 4u;
    // Rows and columns past the edge read the last ones in bounds; they are never stored.
    let ia = a_bases(a0, row0, ak, exact);
    let ib = a_bases(a0, row0 + 4u, ak, exact);
    var jb: vec4<u32>;
    if (bn) {
        var j = col0;
        if (!exact) {
            j = min(j, p.n - 4u);
        }
        jb = vec4<u32>((b0 + j) / 4u) + vec4<u32>(0u, 1u, 2u, 3u) * (p.b_row / 4u);
    } else {
        var j = vec4<u32>(col0) + vec4<u32>(0u, 1u, 2u, 3u);
        if (!exact) {
            j = min(j, vec4<u32>(p.n - 1u));
        }
        jb = (vec4<u32>(b0) + j * p.b_col) / 4u;
    }
    // vec4 steps per 4 k: 1 along k, the column (row) stride along i (j).
    let sa = select(p.a_col, 1u, ak);
    let sb = select(1u, p.b_row, bn);
    var acc0 = mat4x4<f32>();
    var acc1 = mat4x4<f32>();
    let kq_end = p.k / 4u;
    for (var kq = 0u; kq < kq_end; kq++) {
        let bt = rows_of(mat4x4<f32>(b[jb.x + kq * sb], b[jb.y + kq * sb], b[jb.z + kq * sb], b[jb.w + kq * sb]), bn);
        // Column r of acc is row r of the C block: Σ over the 4 k of A[r, k] · B[k, :].
        acc0 += bt * rows_of(
            mat4x4<f32>(a[ia.x + kq * sa], a[ia.y + kq * sa], a[ia.z + kq * sa], a[ia.w + kq * sa]),
            ak,
        );
        if (tall) {
            acc1 += bt * rows_of(
                mat4x4<f32>(a[ib.x + kq * sa], a[ib.y + kq * sa], a[ib.z + kq * sa], a[ib.w + kq * sa]),
                ak,
            );
        }
    }
    // The last K % 4 steps: A read along i and B along j, one k at a time (rank-1 updates).
    if (!ak && bn) {
        for (var k = kq_end * 4u; k < p.k; k++) {
            let bv = b[jb.x + k * (p.b_row / 4u)];
            let av = a[ia.x + k * (p.a_col / 4u)];
            acc0 += mat4x4<f32>(bv * av.x, bv * av.y, bv * av.z, bv * av.w);
            if (tall) {
                let aw = a[ib.x + k * (p.a_col / 4u)];
                acc1 += mat4x4<f32>(bv * aw.x, bv * aw.y, bv * aw.z, bv * aw.w);
            }
        }
    }
    for (var r = 0u; r < 4u; r++) {
        store(c0, row0 + r, col0, acc0[r], exact);
        if (tall) {
            store(c0, row0 + 4u + r, col0, acc1[r], exact);
        }
    }
}

fn store(c0: u32, r: u32, col0: u32, v: vec4<f32>, exact: bool) {
    if (!exact && r >= p.m) {
        return;
    }
    for (var j = 0u; j < 4u; j++) {
        let cc = col0 + j;
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
