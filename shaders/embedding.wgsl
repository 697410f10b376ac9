// Embedding gather out[n, c] = table[ids[n], c], and its scatter-add backward.
// Ids >= V are never read from the table: their rows come out 0 and they add no gradient.

const WG: u32 = 256u;

struct Params {
    n: u32,
    v: u32,
    c: u32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> ids: array<u32>;
@group(0) @binding(2) var<storage, read> table: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

// One thread per output element.
@compute @workgroup_size(WG)
fn embedding(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) li: u32) {
    let e = (wid.x + wid.y * nwg.x) * WG + li;
    if (e >= p.n * p.c) {
        return;
    }
    let id = ids[e / p.c];
    var v = 0.0;
    if (id < p.v) {
        v = table[id * p.c + e % p.c];
    }
    out[e] = v;
}

// dtable[ids[n], c] += dout[n, c]. One thread owns one channel c for every table row and walks the
// ids in order, so repeated ids never race and the sum order is fixed (deterministic).
@group(0) @binding(1) var<storage, read> bids: array<u32>;
@group(0) @binding(2) var<storage, read> dout: array<f32>;
@group(0) @binding(3) var<storage, read_write> dtable: array<f32>;

@compute @workgroup_size(WG)
fn embedding_backward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) li: u32) {
    let c = (wid.x + wid.y * nwg.x) * WG + li;
    if (c >= p.c) {
        return;
    }
    for (var n = 0u; n < p.n; n++) {
        let id = bids[n];
        if (id < p.v) {
            dtable[id * p.c + c] += dout[n * p.c + c];
        }
    }
}
