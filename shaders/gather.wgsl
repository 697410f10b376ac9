// Row gather between two layouts of the same tokens: y[o, c] = x[idx[o], c] (0 where idx[o] is
// NONE), and its backward dx[i, c] += dy[inv[i], c] (nothing where inv[i] is NONE). The map is
// one-to-one on the rows it names, so the backward is itself a gather through the inverse map:
// no row receives two contributions, no atomics, and the result is exact.

const WG: u32 = 256u;
const NONE: u32 = 0xffffffffu;

struct Params {
    rows: u32,
    c: u32,
    src_rows: u32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> idx: array<u32>;
@group(0) @binding(2) var<storage, read> x: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;

// One thread per output element.
@compute @workgroup_size(WG)
fn gather(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) li: u32) {
    let e = (wid.x + wid.y * nwg.x) * WG + li;
    if (e >= p.rows * p.c) {
        return;
    }
    let r = idx[e / p.c];
    var v = 0.0;
    if (r != NONE && r < p.src_rows) {
        v = x[r * p.c + e % p.c];
    }
    y[e] = v;
}

// dx[i, c] += dy[inv[i], c]: here `rows` counts dx's rows and `src_rows` dy's.
@group(0) @binding(1) var<storage, read> inv: array<u32>;
@group(0) @binding(2) var<storage, read> dy: array<f32>;
@group(0) @binding(3) var<storage, read_write> dx: array<f32>;

@compute @workgroup_size(WG)
fn gather_backward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                   @builtin(local_invocation_index) li: u32) {
    let e = (wid.x + wid.y * nwg.x) * WG + li;
    if (e >= p.rows * p.c) {
        return;
    }
    let r = inv[e / p.c];
    if (r != NONE && r < p.src_rows) {
        dx[e] += dy[r * p.c + e % p.c];
    }
}
