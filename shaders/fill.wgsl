// Fill and copy: the two kernels every other op leans on (zeroing gradients, copying tensors).

const WG: u32 = 256u;

struct Params {
    n: u32,
    value: f32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(WG)
fn fill(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) li: u32,
) {
    let i = (wid.x + wid.y * nwg.x) * WG + li;
    if (i < p.n) {
        out[i] = p.value;
    }
}
