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
// other rows' lanes the same words (a broadcast). K and V blocks move as 16-byte words; with
// PREFETCH the next block is fetched into registers while this one is multiplied. Masks apply
// only to chunks some row of the block cannot see whole (the diagonal, the key length). With
// LAZY a row's running maximum moves only when a chunk's exceeds it by more than LAZY_BITS
// (base 2: the probabilities stay below 2^LAZY_BITS; the sums and outputs share that maximum, so
// their ratio is the same), which skips the rescale of the output on almost every chunk (on an
// H200 within 2% of the eager rescale either way). Statistics in base 2 (the hardware's exp2),
// the log-sum-exp converted back. Under CAUSAL a block of rows stops at its last row's diagonal.
// (Tried on an H200: a reduce-scatter of the scores, so that each lane computes KC / G of the
// probabilities, then an all-gather, ran 7x slower: the step-dependent indices put s in memory.
// With the halving steps written out and the shuffles kept out of the per-row loop that holds the
// rescale's branch, it ran within 1% of the butterfly at 2 rows per lane (D128-D256, one
// exponential per row and key instead of G, 18 shuffles per row and chunk instead of 24), and at
// half speed at 3 or 4 rows: neither the softmax's instructions nor its shuffles limit this kernel.)
// With KSPLIT the keys of each block of rows are split into KS parts, one workgroup each (the KS
// workgroups of a block are consecutive along y): each takes whole blocks of BKV keys of the
// block's visible keys and writes its rows' unnormalised output to `part` and their running
// maximum (base 2) and sum to `stats`, for attention-combine.wgsl to merge (see
// attention-key-split.ts for when that pays).

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
const KV4: u32 = BKV * D4;        // 16-byte words of a K (or V) block
const KL: u32 = (KV4 + T - 1u) / T;    // words of a K (or V) block each invocation fetches (at most)
const LAZY_BITS: f32 = 8.0;
//#if KSPLIT
const KS: u32 = {{KS}}u;
//#endif

var<workgroup> Ks: array<vec4<f32>, KV4>;
var<workgroup> Vs: array<vec4<f32>, KV4>;

fn ld4k(at: u32) -> vec4<f32> {
  return vec4<f32>(ld_k(at), ld_k(at + 1u), ld_k(at + 2u), ld_k(at + 3u));
}

fn ld4v(at: u32) -> vec4<f32> {
  return vec4<f32>(ld_v(at), ld_v(at + 1u), ld_v(at + 2u), ld_v(at + 3u));
}

@compute @workgroup_size({{T}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let g = tid % G;
  let rg = tid / G;
//#if KSPLIT
  let part = wid.y % KS;
  let tile = attention_tile(vec3<u32>(wid.x, wid.y / KS, wid.z), vec3<u32>(nwg.x, nwg.y / KS, nwg.z), BQ);
//#else
  let tile = attention_tile(wid, nwg, BQ);
//#endif
  let q0 = tile.q0;
  let scale2 = P.scale * LOG2E;
  for (var b = tile.b0; b < P.batch; b += tile.b_step) {
    let valid = visible_keys(b, tid);
    let q_base = q_start(b, tile.h, D);
    let kv_base = kv_start(b, tile.kvh, D);
    let key_end = block_key_end(valid, q0, BQ);
    let dense_end = block_dense_end(valid, q0);
    // The keys this workgroup takes: all of them, or with KSPLIT its part (whole blocks of BKV, the last part the rest).
//#if KSPLIT
    let span = ((key_end + BKV - 1u) / BKV + KS - 1u) / KS * BKV;
    let k_lo = min(part * span, key_end);
    let k_hi = min(k_lo + span, key_end);
//#else
    let k_lo = 0u;
    let k_hi = key_end;
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
      row_end[i] = row_key_end(valid, row);
    }
//#if PREFETCH
    // The first block's K and V.
    var kr: array<vec4<f32>, KL>;
    var vr: array<vec4<f32>, KL>;
    for (var l = 0u; l < KL; l++) {
      let idx = tid + l * T;
      let j = k_lo + idx / D4;
      let at = kv_base + min(j, max(k_hi, 1u) - 1u) * D + (idx % D4) * 4u;
      let live = j < k_hi;
      kr[l] = select(vec4<f32>(0.0), ld4k(at), live);
      vr[l] = select(vec4<f32>(0.0), ld4v(at), live);
    }
//#endif
    for (var k0 = k_lo; k0 < k_hi; k0 += BKV) {
      workgroupBarrier();
      for (var l = 0u; l < KL; l++) {
        let idx = tid + l * T;
        if (KV4 % T == 0u || idx < KV4) {
//#if PREFETCH
          Ks[idx] = kr[l];
          Vs[idx] = vr[l];
//#else
          let j = k0 + idx / D4;
          let at = kv_base + min(j, k_hi - 1u) * D + (idx % D4) * 4u;
          Ks[idx] = select(vec4<f32>(0.0), ld4k(at), j < k_hi);
          Vs[idx] = select(vec4<f32>(0.0), ld4v(at), j < k_hi);
//#endif
        }
      }
      workgroupBarrier();
//#if PREFETCH
      let next = k0 + BKV;
      if (next < k_hi) {
        for (var l = 0u; l < KL; l++) {
          let idx = tid + l * T;
          let j = next + idx / D4;
          let at = kv_base + min(j, k_hi - 1u) * D + (idx % D4) * 4u;
          kr[l] = select(vec4<f32>(0.0), ld4k(at), j < k_hi);
          vr[l] = select(vec4<f32>(0.0), ld4v(at), j < k_hi);
        }
      }
//#endif
      for (var kc = 0u; kc < BKV; kc += KC) {
        let c0 = k0 + kc;
        if (c0 >= k_hi) {
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
              // Four fused multiply-adds (a dot product, then an add, is one more instruction).
              let qc = q[i][c];
              s[i][j] = fma(qc.w, kv.w, fma(qc.z, kv.z, fma(qc.y, kv.y, fma(qc.x, kv.x, s[i][j]))));
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
        // Masks (where some row misses a key of the chunk), the online-softmax update,
        // probabilities in place of the scores.
        if (c0 + KC > dense_end) {
          for (var i = 0u; i < RQ; i++) {
            for (var j = 0u; j < KC; j++) {
              s[i][j] = select(-f32_inf(), s[i][j], c0 + j < row_end[i]);
            }
          }
        }
        for (var i = 0u; i < RQ; i++) {
          // A NaN score may or may not win the maximum: either way its probability is NaN (exp2g).
          var cmax = s[i][0];
          for (var j = 1u; j < KC; j++) {
            cmax = max(cmax, s[i][j]);
          }
//#if LAZY
          if (cmax > m[i] + LAZY_BITS) {
            let rescale = exp2g(m[i] - cmax);
//#else
          {
            let m_new = max(m[i], cmax);
            let rescale = select(exp2g(m[i] - m_new), 0.0, is_neg_inf(m[i]));
//#endif
            l_sum[i] = l_sum[i] * rescale;
            for (var c = 0u; c < DV; c++) {
              o[i][c] = o[i][c] * rescale;
            }
//#if LAZY
            m[i] = cmax;
//#else
            m[i] = m_new;
//#endif
          }
          // While no key has been seen, -inf - -inf would be NaN: subtract 0 instead.
          let m_use = select(m[i], 0.0, is_neg_inf(m[i]));
          for (var j = 0u; j < KC; j++) {
            let p = exp2g(s[i][j] - m_use);
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
//#if KSPLIT
      // This part's share, unnormalised: its sum and output relative to its own running maximum.
      let at = part * (P.batch * P.hq * P.sq) + (b * P.hq + tile.h) * P.sq + row;
      for (var c = 0u; c < DV; c++) {
        let v = o[i][c];
        let d = at * D + (c * G + g) * 4u;
        st_part(d, v.x);
        st_part(d + 1u, v.y);
        st_part(d + 2u, v.z);
        st_part(d + 3u, v.w);
      }
      if (g == 0u) {
        st_stats(2u * at, m[i]);
        st_stats(2u * at + 1u, l_sum[i]);
      }
//#else
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
        st_lse((b * P.hq + tile.h) * P.sq + row, select(-f32_inf(), m[i] * LN2 + log_acc(l_sum[i]), live));
      }
//#endif
//#endif
    }
  }
}
