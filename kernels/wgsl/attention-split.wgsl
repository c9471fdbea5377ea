// Attention forward (see attention-common.wgsl) with the query rows in registers and the head dim
// split across lanes: a workgroup takes BQ query rows of one (batch, head); G consecutive lanes
// of a subgroup share RQ rows (rows rg + i·NR of row group rg), lane g holding the 4-column
// groups c·G + g (c < DV) of each row's q, pre-scaled by scale·log2 e, and of its output.
// Workgroup memory holds only one block of BKV keys and values (no Q tile, no probabilities), so
// long heads keep large row blocks within 48 KB. Per chunk of KC keys: each lane's partial
// scores over its columns, summed across the G lanes by shuffles (a butterfly: every lane ends
// with the same full scores, so each computes its rows' maxima, probabilities and sums itself and
// none of them crosses lanes), the online-softmax update, then out += p v over its own columns.
// At one key the G lanes of a row read G consecutive 16-byte words (no bank conflicts) and the
// other rows' lanes the same words (a broadcast). The next block's K and V are fetched into
// registers while this one is multiplied. Statistics in base 2 (the hardware's exp2), the
// log-sum-exp converted back. Under CAUSAL a block of rows stops at its last row's diagonal, and
// the heaviest blocks start first.

const D: u32 = {{D}}u;
const D4: u32 = D / 4u;
const G: u32 = {{G}}u;
const RQ: u32 = {{RQ}}u;
const BQ: u32 = {{BQ}}u;
const BKV: u32 = {{BKV}}u;
const KC: u32 = {{KC}}u;
const NR: u32 = BQ / RQ;          // row groups
const T: u32 = NR * G;
const DV: u32 = D4 / G;           // 4-column groups per lane
const KL: u32 = (BKV * D + T - 1u) / T;    // elements of a K (or V) block each invocation fetches (at most)

var<workgroup> Ks: array<vec4<f32>, BKV * D4>;
var<workgroup> Vs: array<vec4<f32>, BKV * D4>;

@compute @workgroup_size({{T}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let g = tid % G;
  let rg = tid / G;
  let q0 = (nwg.x - 1u - wid.x) * BQ;
  let h = wid.y;
  let kvh = h / (P.hq / P.hkv);
  let scale2 = P.scale * LOG2E;
  for (var b = wid.z; b < P.batch; b += nwg.z) {
    let valid = visible_keys(b, tid);
    let q_base = ((b * P.hq + h) * P.sq) * D;
    let kv_base = ((b * P.hkv + kvh) * P.sk) * D;
//#if CAUSAL
    let key_end = min(valid, q0 + BQ);
//#else
    let key_end = valid;
//#endif
    var q: array<array<vec4<f32>, DV>, RQ>;
    var o: array<array<vec4<f32>, DV>, RQ>;
    var m: array<f32, RQ>;
    var l_sum: array<f32, RQ>;
    var row_end: array<u32, RQ>;
    for (var i = 0u; i < RQ; i++) {
      let row = q0 + rg + i * NR;
      let at = q_base + min(row, P.sq - 1u) * D;
      for (var c = 0u; c < DV; c++) {
        let d = at + (c * G + g) * 4u;
        let x = vec4<f32>(ld_q(d), ld_q(d + 1u), ld_q(d + 2u), ld_q(d + 3u));
        q[i][c] = select(vec4<f32>(0.0), x * scale2, row < P.sq);
        o[i][c] = vec4<f32>(0.0);
      }
      m[i] = -f32_inf();
      l_sum[i] = 0.0;
//#if CAUSAL
      row_end[i] = min(valid, row + 1u);
//#else
      row_end[i] = valid;
//#endif
    }
    // The first block's K and V.
    var kr: array<f32, KL>;
    var vr: array<f32, KL>;
    for (var l = 0u; l < KL; l++) {
      let idx = tid + l * T;
      let j = idx / D;
      let at = kv_base + min(j, max(key_end, 1u) - 1u) * D + idx % D;
      kr[l] = select(0.0, ld_k(at), j < min(key_end, BKV));
      vr[l] = select(0.0, ld_v(at), j < min(key_end, BKV));
    }
    for (var k0 = 0u; k0 < key_end; k0 += BKV) {
      workgroupBarrier();
      for (var l = 0u; l < KL; l++) {
        let idx = tid + l * T;
        if (idx < BKV * D) {
          Ks[idx / 4u][idx % 4u] = kr[l];
          Vs[idx / 4u][idx % 4u] = vr[l];
        }
      }
      workgroupBarrier();
      let next = k0 + BKV;
      if (next < key_end) {
        for (var l = 0u; l < KL; l++) {
          let idx = tid + l * T;
          let j = next + idx / D;
          let at = kv_base + min(j, key_end - 1u) * D + idx % D;
          kr[l] = select(0.0, ld_k(at), j < min(key_end, next + BKV));
          vr[l] = select(0.0, ld_v(at), j < min(key_end, next + BKV));
        }
      }
      for (var kc = 0u; kc < BKV; kc += KC) {
        let c0 = k0 + kc;
        if (c0 >= key_end) {
          break;
        }
        // Partial scores over this lane's columns, then summed across the row's G lanes.
        var s: array<array<f32, KC>, RQ>;
        for (var j = 0u; j < KC; j++) {
          for (var i = 0u; i < RQ; i++) {
            s[i][j] = 0.0;
          }
          for (var c = 0u; c < DV; c++) {
            let kv = Ks[(kc + j) * D4 + c * G + g];
            for (var i = 0u; i < RQ; i++) {
              s[i][j] += dot(q[i][c], kv);
            }
          }
        }
        for (var off = G / 2u; off > 0u; off = off / 2u) {
          for (var i = 0u; i < RQ; i++) {
            for (var j = 0u; j < KC; j++) {
              s[i][j] += subgroupShuffleXor(s[i][j], off);
            }
          }
        }
        // Masks, the online-softmax update, probabilities in place of the scores.
        for (var i = 0u; i < RQ; i++) {
          var cmax = -f32_inf();
          for (var j = 0u; j < KC; j++) {
            let x = select(-f32_inf(), s[i][j], c0 + j < row_end[i]);
            s[i][j] = x;
            cmax = max_num(cmax, x);
          }
          let m_new = max_num(m[i], cmax);
          let rescale = select(exp2g(m[i] - m_new), 0.0, is_neg_inf(m[i]));
          l_sum[i] = l_sum[i] * rescale;
          for (var c = 0u; c < DV; c++) {
            o[i][c] = o[i][c] * rescale;
          }
          m[i] = m_new;
          for (var j = 0u; j < KC; j++) {
            let x = s[i][j];
            let p = select(exp2g(x - m_new), 0.0, is_neg_inf(x));
            s[i][j] = p;
            l_sum[i] += p;
          }
        }
        // out += p v.
        for (var j = 0u; j < KC; j++) {
          for (var c = 0u; c < DV; c++) {
            let vv = Vs[(kc + j) * D4 + c * G + g];
            for (var i = 0u; i < RQ; i++) {
              o[i][c] = fma(vec4<f32>(s[i][j]), vv, o[i][c]);
            }
          }
        }
      }
    }
    for (var i = 0u; i < RQ; i++) {
      let row = q0 + rg + i * NR;
      if (row >= P.sq) {
        continue;
      }
      let live = l_sum[i] > 0.0 || is_nan(l_sum[i]);
      let inv = select(0.0, 1.0 / l_sum[i], live);
      let o_base = q_base + row * D;
      for (var c = 0u; c < DV; c++) {
        let v = o[i][c] * inv;
        let d = o_base + (c * G + g) * 4u;
        st_out(d, v.x);
        st_out(d + 1u, v.y);
        st_out(d + 2u, v.z);
        st_out(d + 3u, v.w);
      }
//#if LSE
      if (g == 0u) {
        st_lse((b * P.hq + h) * P.sq + row, select(-f32_inf(), m[i] * LN2 + log_acc(l_sum[i]), live));
      }
//#endif
    }
  }
}
