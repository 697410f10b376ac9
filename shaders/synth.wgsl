// The ReLU inside the synthesizer's score projection: y = max(x, 0), dx += dy where x > 0.
// (A private copy for the synth op; the general elementwise family has its own.)

const WG: u32 = 256u;

struct Params {
    n: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(WG)
fn relu_fwd(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) li: u32) {
    let i = (wid.x + wid.y * nwg.x) * WG + li;
    if (i < p.n) {
        y[i] = max(x[i], 0.0);
    }
}

@group(0) @binding(1) var<storage, read> bx: array<f32>;
@group(0) @binding(2) var<storage, read> dy: array<f32>;
@group(0) @binding(3) var<storage, read_write> dx: array<f32>;

@compute @workgroup_size(WG)
fn relu_bwd(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) li: u32) {
    let i = (wid.x + wid.y * nwg.x) * WG + li;
    if (i < p.n && bx[i] > 0.0) {
        dx[i] += dy[i];
    }
}
