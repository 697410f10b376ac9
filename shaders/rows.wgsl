// Reductions across the workgroup of a row kernel (softmax, layernorm, cross-entropy: RW threads
// per row), as a tree in workgroup memory, one barrier per level. rows_subgroup.wgsl defines the
// same functions with subgroup operations; each family's shader is built once after each file
// (`RowKernel` in src/gpu/record.rs) and the device picks (`Gpu::subgroups`). Every invocation of
// the workgroup calls them in uniform control flow, and every one gets the whole total.

// Threads per row: a short tree (few barriers) keeps software GPUs fast, and one 32-wide group per
// row still covers a real GPU's SIMD width.
const RW: u32 = 32u;

var<workgroup> red: array<vec2<f32>, RW>;

// Two sums at once (component-wise), in a fixed order.
fn row_sum2(li: u32, v: vec2<f32>) -> vec2<f32> {
    red[li] = v;
    workgroupBarrier();
    for (var s = RW / 2u; s > 0u; s /= 2u) {
        if (li < s) {
            red[li] += red[li + s];
        }
        workgroupBarrier();
    }
    let r = red[0];
    workgroupBarrier(); // nobody overwrites red before everyone has read the total
    return r;
}

fn row_sum(li: u32, v: f32) -> f32 {
    return row_sum2(li, vec2<f32>(v, 0.0)).x;
}

fn row_max(li: u32, v: f32) -> f32 {
    red[li].x = v;
    workgroupBarrier();
    for (var s = RW / 2u; s > 0u; s /= 2u) {
        if (li < s) {
            red[li].x = max(red[li].x, red[li + s].x);
        }
        workgroupBarrier();
    }
    let r = red[0].x;
    workgroupBarrier();
    return r;
}
