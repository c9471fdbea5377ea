// One GRU step for E members at once (PyTorch's gate order r, z, n), the product with W_hh fused
// with the gates and the update:
//   r = sigmoid(gx_r + b_ir + h W_hr^T + b_hr)   z = sigmoid(gx_z + b_iz + h W_hz^T + b_hz)
//   n = tanh(gx_n + b_in + r * (h W_hn^T + b_hn))   h' = (1 - z) * n + z * h
// A group of KS consecutive invocations (a subgroup, or part of one) takes one hidden unit j
// for NB batch rows of one member: the KS lanes split the H columns of the dot products
// (lane l takes columns l, l + KS, ...: each load of the group is one contiguous run), loading
// KI columns of the NB rows of h and of the 3 rows of W_hh at a time into registers before any
// multiply, so a step waits for memory about once per KS·KI columns instead of once per chunk.
// The group's 3·NB partial sums are then combined by a butterfly of subgroup shuffles
// (SUBGROUPS) or through workgroup memory, in a fixed order, and lane b < NB finishes row b.
// Workgroups hold WG / KS groups with consecutive units of the same rows, so they share h's rows.
// h comes from h0 at step 0 (P.first), else from the previous slot of the state sequence,
// rounded as stored. NORM: h' goes to `pre` (f32) for the layer-norm pass; otherwise it is
// stored to the sequence slot and, at the last step, to hN.

const KS: u32 = {{KS}}u;
const NB: u32 = {{NB}}u;
const KI: u32 = {{KI}}u;
const WG: u32 = {{WG}}u;
const GPW: u32 = WG / KS;
const NA: u32 = 3u * NB;

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
  let grp = (wid.y * nwg.x + wid.x) * GPW + tid / KS;
  let live = grp < P.groups;
  let g = min(grp, P.groups - 1u);
  let j = g % H;
  let blocks = (P.batch + NB - 1u) / NB;
  let b0 = ((g / H) % blocks) * NB;
  let e = g / (H * blocks);
  let w_base = e * 3u * H * H + j * H;
  let last_b = P.batch - 1u;

  var acc: array<f32, NA>;
  for (var a = 0u; a < NA; a++) {
    acc[a] = 0.0;
  }
  for (var k0 = 0u; k0 < H; k0 += KS * KI) {
    // Every load first (clamped indices, masked to 0), then the multiplies.
    var hv: array<f32, NB * KI>;
    var wv: array<f32, 3u * KI>;
    for (var i = 0u; i < KI; i++) {
      let k = k0 + i * KS + lane;
      let ok = k < H;
      let kc = min(k, H - 1u);
      wv[i] = select(0.0, ld_w(w_base + kc), ok);
      wv[KI + i] = select(0.0, ld_w(w_base + H * H + kc), ok);
      wv[2u * KI + i] = select(0.0, ld_w(w_base + 2u * H * H + kc), ok);
      for (var b = 0u; b < NB; b++) {
        hv[b * KI + i] = select(0.0, prev(e, min(b0 + b, last_b), kc), ok && b0 + b < P.batch);
      }
    }
    for (var i = 0u; i < KI; i++) {
      for (var b = 0u; b < NB; b++) {
        let h = hv[b * KI + i];
        acc[3u * b] = fma(h, wv[i], acc[3u * b]);
        acc[3u * b + 1u] = fma(h, wv[KI + i], acc[3u * b + 1u]);
        acc[3u * b + 2u] = fma(h, wv[2u * KI + i], acc[3u * b + 2u]);
      }
    }
  }

  // The group's sums: lane b (< NB) needs those of row b.
  var sums = vec3<f32>(0.0, 0.0, 0.0);
//#if SUBGROUPS
  for (var off = KS / 2u; off > 0u; off = off / 2u) {
    for (var a = 0u; a < NA; a++) {
      acc[a] += subgroupShuffleXor(acc[a], off);
    }
  }
  let bl = min(lane, NB - 1u);
  sums = vec3<f32>(acc[3u * bl], acc[3u * bl + 1u], acc[3u * bl + 2u]);
//#else
  for (var a = 0u; a < NA; a++) {
    partial[tid * NA + a] = acc[a];
  }
  workgroupBarrier();
  if (lane < NB) {
    let first = tid - lane;
    for (var l = 0u; l < KS; l++) {
      let at = (first + l) * NA + 3u * lane;
      sums += vec3<f32>(partial[at], partial[at + 1u], partial[at + 2u]);
    }
  }
//#endif

  let b = b0 + lane;
  if (!live || lane >= NB || b >= P.batch) {
    return;
  }
  let x = e * P.gx_e + b * P.gx_b + P.step * P.gx_t;
  let br = bias(0u, e, j);
  let bz = bias(1u, e, j);
  let bn = bias(2u, e, j);
  let r = sigmoid(ld_gx(x + j) + br.x + sums.x + br.y);
  let z = sigmoid(ld_gx(x + H + j) + bz.x + sums.y + bz.y);
  let n = tanh_acc(ld_gx(x + 2u * H + j) + bn.x + r * (sums.z + bn.y));
  let h_new = (1.0 - z) * n + z * prev(e, b, j);
//#if NORM
  st_pre((e * P.batch + b) * H + j, h_new);
//#else
  st_seq(e * P.s_e + b * P.s_b + P.slot * P.s_t + j, h_new);
  if (P.last == 1u) {
    st_hn((e * P.batch + b) * H + j, h_new);
  }
//#endif
}
