// One GRU step for E members at once (PyTorch's gate order r, z, n), the product with W_hh fused
// with the gates and the update:
//   r = sigmoid(gx_r + b_ir + h W_hr^T + b_hr)   z = sigmoid(gx_z + b_iz + h W_hz^T + b_hz)
//   n = tanh(gx_n + b_in + r * (h W_hn^T + b_hn))   h' = (1 - z) * n + z * h
// A workgroup takes BB batch rows x BJ hidden units of one member (grid z): the rows of h and the
// 3 x BJ rows of W_hh they need pass through workgroup memory in chunks of KC columns (padded by
// one word: the units of a subgroup read different rows at the same column). h comes from h0 at
// step 0 (P.first), else from the previous slot of the state sequence, rounded as stored.
// NORM: h' goes to `pre` (f32) for the layer-norm pass; otherwise it is stored to the sequence
// slot and, at the last step, to hN.

const BB: u32 = {{BB}}u;
const BJ: u32 = {{BJ}}u;
const KC: u32 = {{KC}}u;
const KP: u32 = {{KC}}u + 1u;
const T: u32 = BB * BJ;

var<workgroup> Hs: array<f32, BB * KP>;
var<workgroup> Ws: array<f32, 3u * BJ * KP>;

// Unit k of the state before this step, for member e and batch row b.
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

@compute @workgroup_size({{BB}} * {{BJ}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let H = P.hidden;
  let jl = tid % BJ;
  let bl = tid / BJ;
  let j0 = wid.x * BJ;
  let b0 = wid.y * BB;
  let e = wid.z;
  let j = j0 + jl;
  let b = b0 + bl;
  let w_base = e * 3u * H * H;
  var acc = vec3<f32>(0.0, 0.0, 0.0);
  for (var k0 = 0u; k0 < H; k0 += KC) {
    workgroupBarrier();
    for (var idx = tid; idx < BB * KC; idx += T) {
      let r = idx / KC;
      let kk = idx % KC;
      let rb = b0 + r;
      var v = 0.0;
      if (rb < P.batch && k0 + kk < H) {
        v = prev(e, rb, k0 + kk);
      }
      Hs[r * KP + kk] = v;
    }
    for (var idx = tid; idx < 3u * BJ * KC; idx += T) {
      let rr = idx / KC;
      let kk = idx % KC;
      let unit = j0 + rr % BJ;
      var v = 0.0;
      if (unit < H && k0 + kk < H) {
        v = ld_w(w_base + ((rr / BJ) * H + unit) * H + k0 + kk);
      }
      Ws[rr * KP + kk] = v;
    }
    workgroupBarrier();
    for (var kk = 0u; kk < KC; kk++) {
      let h = Hs[bl * KP + kk];
      acc = fma(vec3<f32>(h, h, h), vec3<f32>(Ws[jl * KP + kk], Ws[(BJ + jl) * KP + kk], Ws[(2u * BJ + jl) * KP + kk]), acc);
    }
  }
  if (b >= P.batch || j >= H) {
    return;
  }
  let x = e * P.gx_e + b * P.gx_b + P.step * P.gx_t;
  let br = bias(0u, e, j);
  let bz = bias(1u, e, j);
  let bn = bias(2u, e, j);
  let r = sigmoid(ld_gx(x + j) + br.x + acc.x + br.y);
  let z = sigmoid(ld_gx(x + H + j) + bz.x + acc.y + bz.y);
  let n = tanh_acc(ld_gx(x + 2u * H + j) + bn.x + r * (acc.z + bn.y));
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
