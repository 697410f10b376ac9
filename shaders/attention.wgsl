// Fused causal attention with dropout (src/ops/attention/mod.rs has the maths). q, k, v, o are
// (B·T, C) read as (B, NH, T, HS); stats is (B·T, NH, 2): the row logsumexp L, then D.
// A workgroup owns ROWS rows of one (batch row, head): queries in the forward and dQ, keys in
// dK/dV. It walks the other side in tiles of TILE rows staged in workgroup memory, each thread
// summing over them in index order (online softmax in the forward), so results are deterministic
// and no (T, T) matrix exists. The dropout mask is the dropout op's hash (shaders/dropout.wgsl) of
// (seed, keys[(b·NH + h)·T + i], j).

const ROWS: u32 = 64u;
const TILE: u32 = 16u;
const HS_MAX: u32 = 64u;
const NEG_BIG: f32 = -3.0e38;

struct Params {
    b: u32,
    t: u32,
    nh: u32,
    hs: u32,
    scale: f32,
    drop_p: f32,
    keep_scale: f32,
    seed: u32,
}

@group(0) @binding(0) var<uniform> p: Params;

var<workgroup> tile_a: array<f32, TILE * HS_MAX>;
var<workgroup> tile_b: array<f32, TILE * HS_MAX>;
var<workgroup> tile_l: array<f32, TILE>;
var<workgroup> tile_d: array<f32, TILE>;
var<workgroup> tile_h: array<u32, TILE>;

fn pcg(v: u32) -> u32 {
    let s = v * 747796405u + 2891336453u;
    let w = ((s >> ((s >> 28u) + 4u)) ^ s) * 277803737u;
    return (w >> 22u) ^ w;
}

fn hash(seed: u32, i: u32) -> u32 {
    return pcg(pcg(i ^ pcg(seed)) + seed);
}

// The row hash of attention row (bh, i) (bh = b·NH + h), or 0 without dropout.
fn row_hash(bh: u32, i: u32) -> u32 {
    if (p.drop_p == 0.0) {
        return 0u;
    }
    return hash(p.seed, keys[bh * p.t + i]);
}

// keep_scale where element (row hash rh, key j) is kept, else 0.
fn mask(rh: u32, j: u32) -> f32 {
    if (p.drop_p == 0.0) {
        return p.keep_scale;
    }
    let u = f32(hash(rh, j) >> 8u) * (1.0 / 16777216.0);
    return select(0.0, p.keep_scale, u >= p.drop_p);
}

// The workgroup's (batch row, head) pair and first row; bh = B·NH past the last workgroup.
struct Block {
    b: u32,
    h: u32,
    bh: u32,
    r0: u32,
}

fn block(wid: vec3<u32>, nwg: vec3<u32>) -> Block {
    let g = wid.x + wid.y * nwg.x;
    let tiles = (p.t + ROWS - 1u) / ROWS;
    let bh = g / tiles;
    return Block(bh / p.nh, bh % p.nh, bh, (g % tiles) * ROWS);
}

// Offset of row i's head h in a (B·T, C) tensor.
fn at(b: u32, i: u32, h: u32) -> u32 {
    return (b * p.t + i) * p.nh * p.hs + h * p.hs;
}

@group(0) @binding(1) var<storage, read> keys: array<u32>;
@group(0) @binding(2) var<storage, read> q: array<f32>;
@group(0) @binding(3) var<storage, read> k: array<f32>;
@group(0) @binding(4) var<storage, read> v: array<f32>;
@group(0) @binding(5) var<storage, read_write> o: array<f32>;
@group(0) @binding(6) var<storage, read_write> stats: array<f32>;

// Stage rows r0..r0+TILE of x and y (head h of batch row b; zeros past T) in tile_a and tile_b.
fn stage_kv(b: u32, h: u32, r0: u32, li: u32) {
    for (var e = li; e < TILE * p.hs; e += ROWS) {
        let r = r0 + e / p.hs;
        var a = 0.0;
        var c = 0.0;
        if (r < p.t) {
            a = k[at(b, r, h) + e % p.hs];
            c = v[at(b, r, h) + e % p.hs];
        }
        tile_a[e] = a;
        tile_b[e] = c;
    }
}

@compute @workgroup_size(ROWS)
fn attention(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) li: u32) {
    let blk = block(wid, nwg);
    if (blk.bh >= p.b * p.nh) {
        return;
    }
    let hs = p.hs;
    let i = blk.r0 + li;
    let live = i < p.t;
    var qi: array<f32, HS_MAX>;
    var acc: array<f32, HS_MAX>;
    var m = NEG_BIG;
    var l = 0.0;
    var rh = 0u;
    if (live) {
        for (var e = 0u; e < hs; e++) {
            qi[e] = q[at(blk.b, i, blk.h) + e];
            acc[e] = 0.0;
        }
        rh = row_hash(blk.bh, i);
    }
    let last = min(blk.r0 + ROWS, p.t);
    for (var j0 = 0u; j0 < last; j0 += TILE) {
        workgroupBarrier();
        stage_kv(blk.b, blk.h, j0, li);
        workgroupBarrier();
        if (live) {
            let end = min(j0 + TILE, i + 1u);
            for (var j = j0; j < end; j++) {
                let kt = (j - j0) * hs;
                var s = 0.0;
                for (var e = 0u; e < hs; e++) {
                    s += qi[e] * tile_a[kt + e];
                }
                s *= p.scale;
                if (s > m) {
                    let corr = exp(m - s);
                    l *= corr;
                    for (var e = 0u; e < hs; e++) {
                        acc[e] *= corr;
                    }
                    m = s;
                }
                let w = exp(s - m);
                l += w;
                let wd = w * mask(rh, j);
                if (wd != 0.0) {
                    for (var e = 0u; e < hs; e++) {
                        acc[e] += wd * tile_b[kt + e];
                    }
                }
            }
        }
    }
    if (live) {
        let inv = 1.0 / l;
        for (var e = 0u; e < hs; e++) {
            o[at(blk.b, i, blk.h) + e] = acc[e] * inv;
        }
        stats[((blk.b * p.t + i) * p.nh + blk.h) * 2u] = m + log(l);
    }
}

// dQ, one thread per query row: D = dO·O (stored for dK/dV), then over keys j ≤ i:
// P = exp(S − L), dP = (dO·v_j)·mask, dQ += scale·P·(dP − D)·k_j.
@group(0) @binding(5) var<storage, read> o_in: array<f32>;
@group(0) @binding(6) var<storage, read> dout: array<f32>;
@group(0) @binding(7) var<storage, read_write> stats_dq: array<f32>;
@group(0) @binding(8) var<storage, read_write> dq: array<f32>;

@compute @workgroup_size(ROWS)
fn attention_backward_dq(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                         @builtin(local_invocation_index) li: u32) {
    let blk = block(wid, nwg);
    if (blk.bh >= p.b * p.nh) {
        return;
    }
    let hs = p.hs;
    let i = blk.r0 + li;
    let live = i < p.t;
    var qi: array<f32, HS_MAX>;
    var doi: array<f32, HS_MAX>;
    var acc: array<f32, HS_MAX>;
    var lse = 0.0;
    var dsum = 0.0;
    var rh = 0u;
    if (live) {
        let a = at(blk.b, i, blk.h);
        for (var e = 0u; e < hs; e++) {
            qi[e] = q[a + e];
            doi[e] = dout[a + e];
            acc[e] = 0.0;
            dsum += doi[e] * o_in[a + e];
        }
        let st = ((blk.b * p.t + i) * p.nh + blk.h) * 2u;
        lse = stats_dq[st];
        stats_dq[st + 1u] = dsum;
        rh = row_hash(blk.bh, i);
    }
    let last = min(blk.r0 + ROWS, p.t);
    for (var j0 = 0u; j0 < last; j0 += TILE) {
        workgroupBarrier();
        stage_kv(blk.b, blk.h, j0, li);
        workgroupBarrier();
        if (live) {
            let end = min(j0 + TILE, i + 1u);
            for (var j = j0; j < end; j++) {
                let kt = (j - j0) * hs;
                var s = 0.0;
                for (var e = 0u; e < hs; e++) {
                    s += qi[e] * tile_a[kt + e];
                }
                let pij = exp(p.scale * s - lse);
                let mk = mask(rh, j);
                var dp = 0.0;
                if (mk != 0.0) {
                    for (var e = 0u; e < hs; e++) {
                        dp += doi[e] * tile_b[kt + e];
                    }
                    dp *= mk;
                }
                let ds = p.scale * pij * (dp - dsum);
                for (var e = 0u; e < hs; e++) {
                    acc[e] += ds * tile_a[kt + e];
                }
            }
        }
    }
    if (live) {
        let a = at(blk.b, i, blk.h);
        for (var e = 0u; e < hs; e++) {
            dq[a + e] += acc[e];
        }
    }
}

// dK and dV, one thread per key row j, over queries i ≥ j staged with their L, D and row hash:
// dV += P·mask·dO_i, dK += scale·P·(dP − D)·q_i.
@group(0) @binding(5) var<storage, read> dout_kv: array<f32>;
@group(0) @binding(6) var<storage, read> stats_kv: array<f32>;
@group(0) @binding(7) var<storage, read_write> dk: array<f32>;
@group(0) @binding(8) var<storage, read_write> dv: array<f32>;

@compute @workgroup_size(ROWS)
fn attention_backward_dkv(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                          @builtin(local_invocation_index) li: u32) {
    let blk = block(wid, nwg);
    if (blk.bh >= p.b * p.nh) {
        return;
    }
    let hs = p.hs;
    let j = blk.r0 + li;
    let live = j < p.t;
    var kj: array<f32, HS_MAX>;
    var vj: array<f32, HS_MAX>;
    var dka: array<f32, HS_MAX>;
    var dva: array<f32, HS_MAX>;
    if (live) {
        let a = at(blk.b, j, blk.h);
        for (var e = 0u; e < hs; e++) {
            kj[e] = k[a + e];
            vj[e] = v[a + e];
            dka[e] = 0.0;
            dva[e] = 0.0;
        }
    }
    for (var i0 = blk.r0; i0 < p.t; i0 += TILE) {
        workgroupBarrier();
        for (var e = li; e < TILE * hs; e += ROWS) {
            let r = i0 + e / hs;
            var a = 0.0;
            var c = 0.0;
            if (r < p.t) {
                a = q[at(blk.b, r, blk.h) + e % hs];
                c = dout_kv[at(blk.b, r, blk.h) + e % hs];
            }
            tile_a[e] = a;
            tile_b[e] = c;
        }
        if (li < TILE && i0 + li < p.t) {
            let st = ((blk.b * p.t + i0 + li) * p.nh + blk.h) * 2u;
            tile_l[li] = stats_kv[st];
            tile_d[li] = stats_kv[st + 1u];
            tile_h[li] = row_hash(blk.bh, i0 + li);
        }
        workgroupBarrier();
        if (live) {
            let start = max(i0, j);
            let end = min(i0 + TILE, p.t);
            for (var i = start; i < end; i++) {
                let r = i - i0;
                let qt = r * hs;
                var s = 0.0;
                for (var e = 0u; e < hs; e++) {
                    s += tile_a[qt + e] * kj[e];
                }
                let pij = exp(p.scale * s - tile_l[r]);
                let mk = mask(tile_h[r], j);
                var dp = 0.0;
                if (mk != 0.0) {
                    for (var e = 0u; e < hs; e++) {
                        dp += tile_b[qt + e] * vj[e];
                    }
                    dp *= mk;
                }
                let ds = p.scale * pij * (dp - tile_d[r]);
                let w = pij * mk;
                for (var e = 0u; e < hs; e++) {
                    dka[e] += ds * tile_a[qt + e];
                    dva[e] += w * tile_b[qt + e];
                }
            }
        }
    }
    if (live) {
        let a = at(blk.b, j, blk.h);
        for (var e = 0u; e < hs; e++) {
            dk[a + e] += dka[e];
            dv[a + e] += dva[e];
        }
    }
}
