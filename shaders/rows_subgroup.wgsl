// Reductions across the workgroup of a row kernel with subgroup operations: the same functions as
// rows.wgsl (read its header), for devices that offer subgroups. In the browser the Rust side puts
// `enable subgroups;` in front (`ops::enable_subgroups!`); naga takes subgroup operations from the
// device's features and does not accept that directive yet. Each subgroup reduces its values in
// one operation; its first invocation (the one subgroupBroadcastFirst names) keeps the result in its
// own slot of `red` and every other invocation writes the identity there, so after one barrier every
// invocation adds all RW slots in index order. That is correct for any subgroup size (4 on
// SwiftShader, 8 or 16 on lavapipe, 32 on NVIDIA, up to 64 or 128 elsewhere: one subgroup then
// holds the whole row) and the same order on every run of one device.

const RW: u32 = 32u;

var<workgroup> red: array<vec2<f32>, RW>;

fn row_sum2(li: u32, v: vec2<f32>) -> vec2<f32> {
    let s = subgroupAdd(v);
    red[li] = select(vec2<f32>(0.0), s, subgroupBroadcastFirst(li) == li);
    workgroupBarrier();
    var t = red[0];
    for (var i = 1u; i < RW; i++) {
        t += red[i];
    }
    workgroupBarrier(); // nobody overwrites red before everyone has read it
    return t;
}

fn row_sum(li: u32, v: f32) -> f32 {
    return row_sum2(li, vec2<f32>(v, 0.0)).x;
}

fn row_max(li: u32, v: f32) -> f32 {
    let m = subgroupMax(v);
    red[li].x = select(-3.0e38, m, subgroupBroadcastFirst(li) == li);
    workgroupBarrier();
    var t = red[0].x;
    for (var i = 1u; i < RW; i++) {
        t = max(t, red[i].x);
    }
    workgroupBarrier();
    return t;
}
