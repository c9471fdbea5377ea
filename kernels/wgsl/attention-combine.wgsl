// Merges the KS parts of attention-split.wgsl's KSPLIT run (see attention-key-split.ts): part j
// of row r left its unnormalised output o_j (D values at part[(j·rows + r)·D]) and its running
// maximum m_j (base 2) and sum l_j (stats[2·(j·rows + r)], + 1), both relative to m_j. With
// M = max m_j and w_j = 2^(m_j − M): out = Σ w_j o_j / Σ w_j l_j and lse = M·ln 2 + ln Σ w_j l_j,
// what one workgroup over all the keys gives. A part that saw no key has m_j = -inf and w_j = 0;
// a row no part saw keeps M = -inf: output 0, log-sum-exp -inf. A NaN (a NaN score makes its
// part's sum NaN, and under the eager rescale its maximum) carries through M or the sum to the
// row's output and log-sum-exp. One invocation per row and 4-column group; rows are
// (batch, head, query) in out's order.

const D: u32 = {{D}}u;
const D4: u32 = D / 4u;
const KS: u32 = {{KS}}u;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let id = flat_id(wid, nwg, lid, 256u);
  let rows = P.batch * P.hq * P.sq;
  let r = id / D4;
  if (r >= rows) {
    return;
  }
  let c = (id % D4) * 4u;
  // The largest maximum; a NaN, once met, stays.
  var mx = -f32_inf();
  for (var j = 0u; j < KS; j++) {
    let mj = ld_stats(2u * (j * rows + r));
    mx = select(mx, mj, mj > mx || is_nan(mj));
  }
  // With no key seen anywhere every m_j is -inf: subtract 0 (each w_j is then 0).
  let m_use = select(mx, 0.0, is_neg_inf(mx));
  var l = 0.0;
  var acc = vec4<f32>(0.0);
  for (var j = 0u; j < KS; j++) {
    let at = j * rows + r;
    let w = exp2g(ld_stats(2u * at) - m_use);
    l += w * ld_stats(2u * at + 1u);
    let d = at * D + c;
    acc += w * vec4<f32>(ld_part(d), ld_part(d + 1u), ld_part(d + 2u), ld_part(d + 3u));
  }
  let live = l > 0.0 || is_nan(l);
  let v = acc * select(0.0, 1.0 / l, live);
  let o = r * D + c;
  st_out(o, v.x);
  st_out(o + 1u, v.y);
  st_out(o + 2u, v.z);
  st_out(o + 3u, v.w);
//#if LSE
  if (c == 0u) {
    st_lse(r, select(-f32_inf(), mx * LN2 + log_acc(l), live));
  }
//#endif
}
