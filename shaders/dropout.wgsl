// Inverted dropout with a counter-based mask over rows of `cols` elements: element (r, j) is kept
// when u(seed, keys[r], j) >= p, where u is a PCG-style integer hash mapped to [0, 1) with 24 bits
// and keys[r] names the row independently of the layout (the GPT's key is (example, position) or
// (example, head, query)), so padded, trimmed and packed batches drop the same elements. The
// backward recomputes the same mask, so nothing is stored. src/ops/dropout/cpu.rs has the
// bit-identical Rust twin.

const WG: u32 = 256u;

struct Params {
    n: u32,
    cols: u32,
    seed: u32,
    p: f32,
    scale: f32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> keys: array<u32>;
@group(0) @binding(2) var<storage, read> x: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;

fn pcg(v: u32) -> u32 {
    let s = v * 747796405u + 2891336453u;
    let w = ((s >> ((s >> 28u) + 4u)) ^ s) * 277803737u;
    return (w >> 22u) ^ w;
}

fn hash(seed: u32, i: u32) -> u32 {
    return pcg(pcg(i ^ pcg(seed)) + seed);
}

// The hash of element i: its row's key, then its column.
fn element_hash(i: u32) -> u32 {
    return hash(hash(p.seed, keys[i / p.cols]), i % p.cols);
}

fn keep(i: u32) -> bool {
    // 24 bits, so the value is exact in f32 (and in the f64 Rust twin).
    let u = f32(element_hash(i) >> 8u) * (1.0 / 16777216.0);
    return u >= p.p;
}

fn index(wid: vec3<u32>, nwg: vec3<u32>, li: u32) -> u32 {
    return (wid.x + wid.y * nwg.x) * WG + li;
}

@compute @workgroup_size(WG)
fn dropout(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) li: u32) {
    let i = index(wid, nwg, li);
    if (i < p.n) {
        y[i] = select(0.0, x[i] * p.scale, keep(i));
    }
}

// dx += dy * scale where kept.
@group(0) @binding(2) var<storage, read> dy: array<f32>;
@group(0) @binding(3) var<storage, read_write> dx: array<f32>;

@compute @workgroup_size(WG)
fn dropout_backward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) li: u32) {
    let i = index(wid, nwg, li);
    if (i < p.n && keep(i)) {
        dx[i] += dy[i] * p.scale;
    }
}

// The raw hash, for the test that the Rust and WGSL versions agree bit for bit.
@group(0) @binding(2) var<storage, read_write> bits: array<u32>;

@compute @workgroup_size(WG)
fn dropout_bits(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) li: u32) {
    let i = index(wid, nwg, li);
    if (i < p.n) {
        bits[i] = element_hash(i);
    }
}
