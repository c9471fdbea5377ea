// Attention forward (see attention-common.wgsl), register-blocked: a workgroup of TR x TC
// invocations takes BQ query rows of one (batch, head) and walks the keys in blocks of BKV. Q's
// tile stays in workgroup memory for the whole walk; each block's K and V tiles are fetched into
// registers while the previous block is multiplied, then staged. Invocation (tr, tc) owns query
// rows tr + i·TR (i < RQ): for the scores, keys tc + j·TC (j < RK), so each 16-byte read of a row
// of Q serves RK keys and each read of a key RQ rows (the TC invocations of a row read the same Q
// words, a broadcast); for the output, columns (tc + c·TC)·4 .. + 3 (c < RD). Rows of Q and K are
// padded by 4 words so the keys a subgroup reads at one column sit in different banks.
// Per block: scores, the block's row maximum across the TC invocations of a row (subgroup
// shuffles where they fit, else workgroup memory), probabilities p = 2^(s·scale·log2 e - m)
// stored to workgroup memory, then out += p v. Each invocation keeps its own partial row sums;
// they are added across the row once at the end. The statistics are in base 2 (the exponent is
// the hardware's exp2), the log-sum-exp converted back. Under CAUSAL a block of rows stops at its
// last row's diagonal.

const D: u32 = {{D}}u;
const D4: u32 = D / 4u;
const DP4: u32 = D4 + 1u;
const BQ: u32 = {{BQ}}u;
const BKV: u32 = {{BKV}}u;
const TR: u32 = {{TR}}u;
const TC: u32 = {{TC}}u;
const T: u32 = TR * TC;
const RQ: u32 = BQ / TR;
const RK: u32 = BKV / TC;
const RD: u32 = D4 / TC;
const PS4: u32 = BKV / 4u + 1u;   // vec4s per row of probabilities (padded)
const KL: u32 = (BKV * D) / T;    // elements of a K (or V) tile each invocation fetches

var<workgroup> Qs: array<vec4<f32>, BQ * DP4>;
var<workgroup> Ks: array<vec4<f32>, BKV * DP4>;
var<workgroup> Vs: array<vec4<f32>, BKV * D4>;
var<workgroup> Ps: array<vec4<f32>, BQ * PS4>;
//#if !SUBGROUPS
var<workgroup> red: array<f32, T * RQ>;
//#endif

// Per-row values of the TC invocations of each row combined: max (MAX) or sum, every one of them
// getting the result. Uniform control flow.
fn row_combine(v: array<f32, RQ>, tid: u32, is_max: bool) -> array<f32, RQ> {
  var r = v;
//#if SUBGROUPS
  for (var off = TC / 2u; off > 0u; off = off / 2u) {
    for (var i = 0u; i < RQ; i++) {
      let o = subgroupShuffleXor(r[i], off);
      r[i] = select(r[i] + o, max_num(r[i], o), is_max);
    }
  }
//#else
  workgroupBarrier();
  for (var i = 0u; i < RQ; i++) {
    red[tid * RQ + i] = r[i];
  }
  workgroupBarrier();
  let first = tid - tid % TC;
  for (var i = 0u; i < RQ; i++) {
    var a = red[first * RQ + i];
    for (var l = 1u; l < TC; l++) {
      let o = red[(first + l) * RQ + i];
      a = select(a + o, max_num(a, o), is_max);
    }
    r[i] = a;
  }
//#endif
  return r;
}

@compute @workgroup_size({{T}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let tr = tid / TC;
  let tc = tid % TC;
  let tile = attention_tile(wid, nwg, BQ);
  let q0 = tile.q0;
  let scale2 = P.scale * LOG2E;
  for (var b = tile.b0; b < P.batch; b += tile.b_step) {
    let valid = visible_keys(b, tid);
    let q_base = q_start(b, tile.h, D);
    let kv_base = kv_start(b, tile.kvh, D);
    let key_end = block_key_end(valid, q0, BQ);
    workgroupBarrier();
    for (var idx = tid; idx < BQ * D; idx += T) {
      let r = idx / D;
      let d = idx % D;
      Qs[r * DP4 + d / 4u][d % 4u] = select(0.0, ld_q(q_base + min(q0 + r, P.sq - 1u) * D + d), q0 + r < P.sq);
    }
    // The first block's K and V.
    var kr: array<f32, KL>;
    var vr: array<f32, KL>;
    for (var l = 0u; l < KL; l++) {
      let idx = tid + l * T;
      let j = idx / D;
      let at = kv_base + min(j, max(key_end, 1u) - 1u) * D + idx % D;
      kr[l] = select(0.0, ld_k(at), j < key_end);
      vr[l] = select(0.0, ld_v(at), j < key_end);
    }
    var m: array<f32, RQ>;
    var l_sum: array<f32, RQ>;
    var o: array<array<vec4<f32>, RD>, RQ>;
    for (var i = 0u; i < RQ; i++) {
      m[i] = -f32_inf();
      l_sum[i] = 0.0;
      for (var c = 0u; c < RD; c++) {
        o[i][c] = vec4<f32>(0.0);
      }
    }
    for (var k0 = 0u; k0 < key_end; k0 += BKV) {
      workgroupBarrier();
      for (var l = 0u; l < KL; l++) {
        let idx = tid + l * T;
        let j = idx / D;
        let d = idx % D;
        Ks[j * DP4 + d / 4u][d % 4u] = kr[l];
        Vs[j * D4 + d / 4u][d % 4u] = vr[l];
      }
      workgroupBarrier();
      let next = k0 + BKV;
      if (next < key_end) {
        for (var l = 0u; l < KL; l++) {
          let idx = tid + l * T;
          let j = next + idx / D;
          let at = kv_base + min(j, key_end - 1u) * D + idx % D;
          kr[l] = select(0.0, ld_k(at), j < key_end);
          vr[l] = select(0.0, ld_v(at), j < key_end);
        }
      }
      // Scores.
      var s: array<array<f32, RK>, RQ>;
      for (var i = 0u; i < RQ; i++) {
        for (var j = 0u; j < RK; j++) {
          s[i][j] = 0.0;
        }
      }
      for (var d4 = 0u; d4 < D4; d4++) {
        var qv: array<vec4<f32>, RQ>;
        for (var i = 0u; i < RQ; i++) {
          qv[i] = Qs[(tr + i * TR) * DP4 + d4];
        }
        for (var j = 0u; j < RK; j++) {
          let kv = Ks[(tc + j * TC) * DP4 + d4];
          for (var i = 0u; i < RQ; i++) {
            s[i][j] += dot(qv[i], kv);
          }
        }
      }
      // Masks and the block's row maxima (in base 2).
      var bmax: array<f32, RQ>;
      for (var i = 0u; i < RQ; i++) {
        let row_end = row_key_end(valid, q0 + tr + i * TR);
        bmax[i] = -f32_inf();
        for (var j = 0u; j < RK; j++) {
          let x = select(-f32_inf(), s[i][j] * scale2, k0 + tc + j * TC < row_end);
          s[i][j] = x;
          bmax[i] = max_num(bmax[i], x);
        }
      }
      bmax = row_combine(bmax, tid, true);
      for (var i = 0u; i < RQ; i++) {
        let m_new = max_num(m[i], bmax[i]);
        let rescale = select(exp2g(m[i] - m_new), 0.0, is_neg_inf(m[i]));
        l_sum[i] = l_sum[i] * rescale;
        for (var c = 0u; c < RD; c++) {
          o[i][c] = o[i][c] * rescale;
        }
        m[i] = m_new;
        let row = tr + i * TR;
        for (var j = 0u; j < RK; j++) {
          let x = s[i][j];
          let p = select(exp2g(x - m_new), 0.0, is_neg_inf(x));
          l_sum[i] += p;
          let key = tc + j * TC;
          Ps[row * PS4 + key / 4u][key % 4u] = p;
        }
      }
      workgroupBarrier();
      // out += p v.
      for (var k4 = 0u; k4 < BKV / 4u; k4++) {
        var pv: array<vec4<f32>, RQ>;
        for (var i = 0u; i < RQ; i++) {
          pv[i] = Ps[(tr + i * TR) * PS4 + k4];
        }
        for (var e = 0u; e < 4u; e++) {
          for (var c = 0u; c < RD; c++) {
            let vv = Vs[(4u * k4 + e) * D4 + tc + c * TC];
            for (var i = 0u; i < RQ; i++) {
              o[i][c] = fma(vec4<f32>(pv[i][e]), vv, o[i][c]);
            }
          }
        }
      }
    }
    let l_row = row_combine(l_sum, tid, false);
    for (var i = 0u; i < RQ; i++) {
      let row = q0 + tr + i * TR;
      if (row >= P.sq) {
        continue;
      }
      let inv = select(0.0, 1.0 / l_row[i], l_row[i] > 0.0 || is_nan(l_row[i]));
      let o_base = q_base + row * D;
      for (var c = 0u; c < RD; c++) {
        let v = o[i][c] * inv;
        let d = (tc + c * TC) * 4u;
        st_out(o_base + d, v.x);
        st_out(o_base + d + 1u, v.y);
        st_out(o_base + d + 2u, v.z);
        st_out(o_base + d + 3u, v.w);
      }
//#if LSE
      if (tc == 0u) {
        st_lse((b * P.hq + tile.h) * P.sq + row, select(-f32_inf(), m[i] * LN2 + log_acc(l_row[i]), l_row[i] > 0.0 || is_nan(l_row[i])));
      }
//#endif
    }
  }
}
