// Deterministic sums: one pass turns n values into ceil(n / CHUNK) partial sums, one per workgroup;
// the host repeats passes until one value is left. Each thread first adds ITEMS strided values in a
// fixed order, then the workgroup adds its WG values as a binary tree, so the result does not
// depend on scheduling. The same pass squares its inputs (sum of squares, for the gradient norm),
// scales the result (mean), takes a square root (the norm) and writes at an offset (one slot per
// tensor of the norm), as the params ask.

const WG: u32 = 256u;
const ITEMS: u32 = 4u;
const CHUNK: u32 = 1024u; // WG * ITEMS

struct Params {
    n: u32,
    square: u32,
    out_offset: u32,
    take_sqrt: u32,
    scale: f32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

var<workgroup> part: array<f32, WG>;

@compute @workgroup_size(WG)
fn reduce(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) li: u32) {
    let g = wid.x + wid.y * nwg.x;
    let base = g * CHUNK;
    var s = 0.0;
    for (var k = 0u; k < ITEMS; k++) {
        // Strided by WG so neighbouring threads read neighbouring addresses.
        let i = base + k * WG + li;
        if (i < p.n) {
            let v = x[i];
            s += select(v, v * v, p.square != 0u);
        }
    }
    part[li] = s;
    workgroupBarrier();
    for (var half = WG / 2u; half > 0u; half /= 2u) {
        if (li < half) {
            part[li] += part[li + half];
        }
        workgroupBarrier();
    }
    // Groups past the data exist only when the grid was folded into y; they write nothing.
    if (li == 0u && base < max(p.n, 1u)) {
        var r = part[0] * p.scale;
        if (p.take_sqrt != 0u) {
            r = sqrt(r);
        }
        out[p.out_offset + g] = r;
    }
}

// out[i] += scale * x[0] (x = dy, out = dx): the gradient of a sum (scale 1) or a mean (scale 1/n).
@compute @workgroup_size(WG)
fn sum_backward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                 @builtin(local_invocation_index) li: u32) {
    let i = (wid.x + wid.y * nwg.x) * WG + li;
    if (i < p.n) {
        out[i] += p.scale * x[0];
    }
}
