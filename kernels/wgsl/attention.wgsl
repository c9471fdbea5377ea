// Attention forward (see attention-common.wgsl), scalar: a workgroup takes BQ query rows of one
// (batch, head) and walks the keys in blocks of BKV staged through workgroup memory (K, then V in
// the same buffer). TPR invocations share a row. Per block: each scores its BKV / TPR keys
// against the row of q (one q value read per column, reused for all its keys); every one of them
// reads the row's BKV scores for the block maximum (no reduction across invocations) and turns
// its own scores into probabilities e^(s - m); then each accumulates its D / TPR output columns
// over the block's values, summing the row's probabilities as it goes. Rows in workgroup memory
// are padded to D + 1 words so the invocations of a row, which read different keys at the same
// column, hit different banks. For every head dim up to 256.

const D: u32 = {{D}}u;
const DP: u32 = {{D}}u + 1u;
const BQ: u32 = {{BQ}}u;
const BKV: u32 = {{BKV}}u;
const TPR: u32 = {{TPR}}u;
const T: u32 = BQ * TPR;
const KPT: u32 = BKV / TPR;
const DPT: u32 = (D + TPR - 1u) / TPR;

var<workgroup> Qs: array<f32, BQ * DP>;
var<workgroup> KV: array<f32, BKV * DP>;
var<workgroup> S: array<f32, BQ * BKV>;
var<workgroup> Pr: array<f32, BQ * BKV>;

@compute @workgroup_size({{BQ}} * {{TPR}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let row = tid / TPR;
  let lane = tid % TPR;
  let tile = attention_tile(wid, nwg, BQ);
  let q0 = tile.q0;
  let i = q0 + row;
  let live = i < P.sq;
  for (var b = tile.b0; b < P.batch; b += tile.b_step) {
    let valid = visible_keys(b, tid);
    let q_base = q_start(b, tile.h, D);
    let kv_base = kv_start(b, tile.kvh, D);
    workgroupBarrier();
    for (var idx = tid; idx < BQ * D; idx += T) {
      let r = idx / D;
      let d = idx % D;
      Qs[r * DP + d] = select(0.0, ld_q(q_base + (q0 + r) * D + d), q0 + r < P.sq);
    }
    let key_end = block_key_end(valid, q0, BQ);
    let row_end = row_key_end(valid, i);
    var m = -f32_inf();
    var l = 0.0;
    var acc: array<f32, DPT>;
    for (var c = 0u; c < DPT; c++) {
      acc[c] = 0.0;
    }
    for (var k0 = 0u; k0 < key_end; k0 += BKV) {
      workgroupBarrier();
      for (var idx = tid; idx < BKV * D; idx += T) {
        let j = idx / D;
        let d = idx % D;
        KV[j * DP + d] = select(0.0, ld_k(kv_base + (k0 + j) * D + d), k0 + j < key_end);
      }
      workgroupBarrier();
      var dots: array<f32, KPT>;
      for (var c = 0u; c < KPT; c++) {
        dots[c] = 0.0;
      }
      for (var d = 0u; d < D; d++) {
        let q = Qs[row * DP + d];
        for (var c = 0u; c < KPT; c++) {
          dots[c] = fma(q, KV[(lane + c * TPR) * DP + d], dots[c]);
        }
      }
      for (var c = 0u; c < KPT; c++) {
        let j = lane + c * TPR;
        S[row * BKV + j] = select(-f32_inf(), dots[c] * P.scale, k0 + j < row_end);
      }
      workgroupBarrier();
      for (var idx = tid; idx < BKV * D; idx += T) {
        let j = idx / D;
        let d = idx % D;
        KV[j * DP + d] = select(0.0, ld_v(kv_base + (k0 + j) * D + d), k0 + j < key_end);
      }
      // Every invocation of the row reads the row's scores: no reduction across invocations.
      var block_max = -f32_inf();
      for (var j = 0u; j < BKV; j++) {
        let s = S[row * BKV + j];
        block_max = select(block_max, s, s > block_max);
      }
      let m_new = max(m, block_max);
      // Nothing seen yet (every key so far masked, m_new = -inf): every probability is 0 (or
      // NaN from a NaN score), and the empty state is scaled by 0.
      for (var c = 0u; c < KPT; c++) {
        let j = lane + c * TPR;
        let s = S[row * BKV + j];
        // A NaN score stays NaN (NaN - m is NaN whatever m is): it makes its row NaN, as on the CPU.
        Pr[row * BKV + j] = select(exp_acc(s - m_new), 0.0, is_neg_inf(s));
      }
      workgroupBarrier();
      if (live) {
        let rescale = select(exp_acc(m - m_new), 0.0, is_neg_inf(m));
        l = l * rescale;
        for (var c = 0u; c < DPT; c++) {
          acc[c] = acc[c] * rescale;
        }
        for (var j = 0u; j < BKV; j++) {
          let p = Pr[row * BKV + j];
          l = l + p;
          for (var c = 0u; c < DPT; c++) {
            let d = lane + c * TPR;
            if (d < D) {
              acc[c] = fma(p, KV[j * DP + d], acc[c]);
            }
          }
        }
        m = m_new;
      }
    }
    if (live) {
      let o_base = q_base + i * D;
      let inv = select(0.0, 1.0 / l, l > 0.0);
      for (var c = 0u; c < DPT; c++) {
        let d = lane + c * TPR;
        if (d < D) {
          st_out(o_base + d, acc[c] * inv);
        }
      }
//#if LSE
      if (lane == 0u) {
        st_lse((b * P.hq + tile.h) * P.sq + i, select(-f32_inf(), m + log_acc(l), l > 0.0 || is_nan(l)));
      }
//#endif
    }
  }
}
