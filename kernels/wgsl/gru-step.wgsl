// One GRU step for E members at once (PyTorch's gate order r, z, n), the product with W_hh fused
// with the gates and the update:
//   r = sigmoid(gx_r + b_ir + h W_hr^T + b_hr)   z = sigmoid(gx_z + b_iz + h W_hz^T + b_hz)
//   n = tanh(gx_n + b_in + r * (h W_hn^T + b_hn))   h' = (1 - z) * n + z * h
// A workgroup takes GPW = WG / KS consecutive hidden units for NB batch rows of one member, one
// group of KS consecutive invocations (a subgroup, or part of one) per unit. The NB rows of h are
// staged in workgroup memory, CK = KS·KI columns at a time, so each workgroup reads them from
// memory once and each row of W_hh is read once per NB rows. The KS lanes of a group split the
// columns (lane l takes l, l + KS, ...: each load of the group is one contiguous run), with the
// chunk's 3·KI loads of W_hh issued before the staging barrier, and the epilogue's loads (gx,
// biases, the unit's own h) issued before the product, so the step waits for memory about once
// per chunk. The group's 3·NB partial sums are combined in a fixed order by a butterfly of
// subgroup shuffles (SUBGROUPS) or through workgroup memory, and lane b < NB finishes row b.
// Arrays are only indexed by unrolled loop counters, so they stay in registers.
// h comes from h0 at step 0 (P.first), else from the previous slot of the state sequence,
// rounded as stored. NORM: h' goes to `pre` (f32) for the layer-norm pass; otherwise it is
// stored to the sequence slot and, at the last step, to hN.

const KS: u32 = {{KS}}u;
const NB: u32 = {{NB}}u;
const KI: u32 = {{KI}}u;
const WG: u32 = {{WG}}u;
const GPW: u32 = WG / KS;
const NA: u32 = 3u * NB;
const CK: u32 = KS * KI;

var<workgroup> hs: array<f32, NB * CK>;
//#if !SUBGROUPS
var<workgroup> partial: array<f32, WG * NA>;
//#endif

// Element k of the state before this step, for member e and batch row b.
fn prev(e: u32, b: u32, k: u32) -> f32 {
  if (P.first == 1u) {
    return ld_h0((e * P.batch + b) * P.hidden + k);
  }
  return ld_seq(e * P.s_e + b * P.s_b + P.prev_slot * P.s_t + k);
}

fn bias(g: u32, e: u32, j: u32) -> vec2<f32> {
  var v = vec2<f32>(0.0, 0.0);
//#if BIH
  v.x = ld_bih(e * 3u * P.hidden + g * P.hidden + j);
//#endif
//#if BHH
  v.y = ld_bhh(e * 3u * P.hidden + g * P.hidden + j);
//#endif
  return v;
}

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let H = P.hidden;
  let lane = tid % KS;
  let unit_blocks = (H + GPW - 1u) / GPW;
  let blocks = (P.batch + NB - 1u) / NB;
  let w = min(wid.y * nwg.x + wid.x, P.groups - 1u);
  let e = w / (unit_blocks * blocks);
  let b0 = ((w / unit_blocks) % blocks) * NB;
  let unit = (w % unit_blocks) * GPW + tid / KS;
  let live = wid.y * nwg.x + wid.x < P.groups && unit < H;
  let j = min(unit, H - 1u);
  let w_base = e * 3u * H * H + j * H;
  let last_b = P.batch - 1u;

  // The epilogue's operands, for the row this lane finishes.
  let row = min(lane, NB - 1u);
  let b = b0 + lane;
  let bc = min(b0 + row, last_b);
  let x = e * P.gx_e + bc * P.gx_b + P.step * P.gx_t;
  let gr = ld_gx(x + j);
  let gz = ld_gx(x + H + j);
  let gn = ld_gx(x + 2u * H + j);
  let br = bias(0u, e, j);
  let bz = bias(1u, e, j);
  let bn = bias(2u, e, j);
  let h_old = prev(e, bc, j);

  var acc: array<f32, NA>;
  for (var a = 0u; a < NA; a++) {
    acc[a] = 0.0;
  }
  for (var k0 = 0u; k0 < H; k0 += CK) {
    // This group's W_hh columns (clamped indices, masked to 0), before waiting on the staging.
    var wv: array<f32, 3u * KI>;
    for (var i = 0u; i < KI; i++) {
      let k = k0 + i * KS + lane;
      let kc = min(k, H - 1u);
      wv[i] = select(0.0, ld_w(w_base + kc), k < H);
      wv[KI + i] = select(0.0, ld_w(w_base + H * H + kc), k < H);
      wv[2u * KI + i] = select(0.0, ld_w(w_base + 2u * H * H + kc), k < H);
    }
    for (var i = 0u; i < (NB * CK + WG - 1u) / WG; i++) {
      let s = i * WG + tid;
      let r = s / CK;
      let k = k0 + s % CK;
      if (s < NB * CK) {
        hs[s] = select(0.0, prev(e, min(b0 + r, last_b), min(k, H - 1u)), k < H && b0 + r < P.batch);
      }
    }
    workgroupBarrier();
    for (var i = 0u; i < KI; i++) {
      for (var r = 0u; r < NB; r++) {
        let h = hs[r * CK + i * KS + lane];
        acc[3u * r] = fma(h, wv[i], acc[3u * r]);
        acc[3u * r + 1u] = fma(h, wv[KI + i], acc[3u * r + 1u]);
        acc[3u * r + 2u] = fma(h, wv[2u * KI + i], acc[3u * r + 2u]);
      }
    }
    if (k0 + CK < H) {
      workgroupBarrier();
    }
  }

  var sums = vec3<f32>(0.0, 0.0, 0.0);
//#if SUBGROUPS
  for (var off = KS / 2u; off > 0u; off = off / 2u) {
    for (var a = 0u; a < NA; a++) {
      acc[a] += subgroupShuffleXor(acc[a], off);
    }
  }
  for (var r = 0u; r < NB; r++) {
    sums = select(sums, vec3<f32>(acc[3u * r], acc[3u * r + 1u], acc[3u * r + 2u]), r == row);
  }
//#else
  for (var a = 0u; a < NA; a++) {
    partial[tid * NA + a] = acc[a];
  }
  workgroupBarrier();
  let first = tid - lane;
  for (var l = 0u; l < KS; l++) {
    let p = (first + l) * NA + 3u * row;
    sums += vec3<f32>(partial[p], partial[p + 1u], partial[p + 2u]);
  }
//#endif

  if (!live || lane >= NB || b >= P.batch) {
    return;
  }
  let r = sigmoid(gr + br.x + sums.x + br.y);
  let z = sigmoid(gz + bz.x + sums.y + bz.y);
  let nn = tanh_acc(gn + bn.x + r * (sums.z + bn.y));
  let h_new = (1.0 - z) * nn + z * h_old;
//#if NORM
  st_pre((e * P.batch + b) * H + j, h_new);
//#else
  st_seq(e * P.s_e + b * P.s_b + P.slot * P.s_t + j, h_new);
  if (P.last == 1u) {
    st_hn((e * P.batch + b) * H + j, h_new);
  }
//#endif
}
