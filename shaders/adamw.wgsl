// AdamW, one thread per parameter element, in the order torch.optim.AdamW (single-tensor path) uses:
//   g  = grad * c,  c = min(1, max_norm / (norm[0] + 1e-6))   (clip_grad_norm_, only when p.clip != 0)
//   w  = w * decay_mul                                        (decay_mul = 1 - lr*wd, or 1 without decay)
//   m  = beta1*m + (1-beta1)*g
//   v  = beta2*v + (1-beta2)*g*g
//   w  = w - step_size * m / (sqrt(v) / bc2_sqrt + eps)      (step_size = lr / (1-beta1^t), bc2_sqrt = sqrt(1-beta2^t))
// The step-dependent scalars are computed on the CPU in f64 and arrive in Params, so the learning
// rate can change every step without a new pipeline. `norm` is a 1-element tensor written by an
// earlier kernel, so clipping needs no readback. Each element is owned by one thread: no races.
// adamw_arena_step does the same over many parameters at once: w, grad, m and v are arenas holding
// each parameter at its span, p.spans of them listed in `table` as [at, len, decay, 0] (ascending);
// elements between spans (alignment gaps) are left alone.

const WG: u32 = 256u;

struct Params {
    n: u32,
    clip: u32,
    beta1: f32,
    beta2: f32,
    eps: f32,
    decay_mul: f32,
    step_size: f32,
    bc2_sqrt: f32,
    max_norm: f32,
    spans: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> w: array<f32>;
@group(0) @binding(2) var<storage, read> grad: array<f32>;
@group(0) @binding(3) var<storage, read_write> m: array<f32>;
@group(0) @binding(4) var<storage, read_write> v: array<f32>;
@group(0) @binding(5) var<storage, read> norm: array<f32>;
@group(0) @binding(6) var<storage, read> table: array<u32>;

@compute @workgroup_size(WG)
fn adamw_step(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) li: u32,
) {
    let i = (wid.x + wid.y * nwg.x) * WG + li;
    if (i >= p.n) {
        return;
    }
    update(i, p.decay_mul);
}

fn update(i: u32, decay_mul: f32) {
    var c = 1.0;
    if (p.clip != 0u) {
        c = min(1.0, p.max_norm / (norm[0] + 1e-6));
    }
    let g = grad[i] * c;
    let mi = p.beta1 * m[i] + (1.0 - p.beta1) * g;
    let vi = p.beta2 * v[i] + (1.0 - p.beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    let wi = w[i] * decay_mul;
    w[i] = wi - p.step_size * mi / (sqrt(vi) / p.bc2_sqrt + p.eps);
}

@compute @workgroup_size(WG)
fn adamw_arena_step(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                    @builtin(local_invocation_index) li: u32) {
    let i = (wid.x + wid.y * nwg.x) * WG + li;
    if (i >= p.n) {
        return;
    }
    // The span holding element i: the last one starting at or before it (binary search).
    var lo = 0u;
    var hi = p.spans;
    while (hi - lo > 1u) {
        let mid = (lo + hi) / 2u;
        if (table[4u * mid] <= i) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    if (i >= table[4u * lo] + table[4u * lo + 1u]) {
        return;
    }
    update(i, select(1.0, p.decay_mul, table[4u * lo + 2u] != 0u));
}
