// Embedding gather out[n, c] = table[ids[n], c], and its scatter-add backward.
// Ids >= V are never read from the table: their rows come out 0 and they add no gradient.

const WG: u32 = 256u;

struct Params {
    n: u32,
    v: u32,
    c: u32,
    chunk: u32, // the two-pass backward: ids per chunk
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

// The backward for many ids, in two passes (one thread a channel walking thousands of ids alone
// left most of a hardware GPU idle). First, workgroup row y takes ids y*chunk..(y+1)*chunk: its
// thread for channel c clears its column of the scratch table `dtable` here ([chunks, V, C]),
// then adds that chunk's rows into it in order.
@compute @workgroup_size(WG)
fn embedding_backward_partial(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let c = wid.x * WG + li;
    if (c >= p.c) {
        return;
    }
    let base = wid.y * p.v * p.c;
    for (var v = 0u; v < p.v; v++) {
        dtable[base + v * p.c + c] = 0.0;
    }
    let n1 = min(p.n, (wid.y + 1u) * p.chunk);
    for (var n = wid.y * p.chunk; n < n1; n++) {
        let id = bids[n];
        if (id < p.v) {
            dtable[base + id * p.c + c] += dout[n * p.c + c];
        }
    }
}

// Second, one thread a table element adds the chunks' sums in order: total[e] += Σ_y part[y, e].
@group(0) @binding(1) var<storage, read> part: array<f32>;
@group(0) @binding(2) var<storage, read_write> total: array<f32>;

@compute @workgroup_size(WG)
fn embedding_backward_sum(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) li: u32) {
    let e = (wid.x + wid.y * nwg.x) * WG + li;
    let size = p.v * p.c;
    if (e >= size) {
        return;
    }
    let chunks = (p.n + p.chunk - 1u) / p.chunk;
    var s = total[e];
    for (var y = 0u; y < chunks; y++) {
        s += part[y * size + e];
    }
    total[e] = s;
}
