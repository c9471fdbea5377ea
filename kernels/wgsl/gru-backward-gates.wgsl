// One step of a GRU layer's backward pass through time (PyTorch's gate order r, z, n), for every
// member, batch row and unit at once, in f32; the WGSL twin of kernels/gru_backward.cu, which
// has the equations. Before step t < T − 1 a product has left in `sent` what step t + 1 sends
// back to h_t (dGh_{t+1}·W_hh + dh_{t+1}·z_{t+1}); this adds the gradient arriving from above
// (DHSEQ) or, at the last step, that of the final state (DHN), recomputes the gates from the
// forward's projections and writes dGx_t, dGh_t (into its slot of dHW or dH0W, and densely into
// `gates` for the next product) and carried = dh·z. One invocation per (member, row, unit), each
// reading and writing only its own unit. The last step also zeroes the unused last slot of dHW.

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let i = flat_id(wid, nwg, lid, 256u);
  let H = P.hidden;
  if (i >= P.total) {
    return;
  }
  let j = i % H;
  let row = i / H;
  let e = row / P.batch;
  let G = 3u * H;
  let step = row * P.steps + P.step;
  let x = step * G;
  let last = P.step + 1u == P.steps;
  var prev: f32;
  var dh = 0.0;
//#if DHSEQ
  dh = ld_dhseq(step * H + j);
//#endif
  if (last) {
//#if DHN
    dh += ld_dhn(i);
//#endif
  } else {
    dh += ld_sent(i);
  }
  var gr: f32;
  var gz: f32;
  var gn: f32;
  if (P.step > 0u) {
    let g = (step - 1u) * G;
    gr = ld_hw(g + j);
    gz = ld_hw(g + H + j);
    gn = ld_hw(g + 2u * H + j);
    prev = ld_hseq((step - 1u) * H + j);
  } else {
    let g = row * G;
    gr = ld_h0w(g + j);
    gz = ld_h0w(g + H + j);
    gn = ld_h0w(g + 2u * H + j);
    prev = ld_h0(i);
  }
  let b = e * G + j;
  var bi = vec3<f32>(0.0, 0.0, 0.0);
  var bh = vec3<f32>(0.0, 0.0, 0.0);
//#if BIH
  bi = vec3<f32>(ld_bih(b), ld_bih(b + H), ld_bih(b + 2u * H));
//#endif
//#if BHH
  bh = vec3<f32>(ld_bhh(b), ld_bhh(b + H), ld_bhh(b + 2u * H));
//#endif
  let r = sigmoid(ld_gx(x + j) + bi.x + gr + bh.x);
  let z = sigmoid(ld_gx(x + H + j) + bi.y + gz + bh.y);
  let ghn = gn + bh.z;
  let n = tanh_acc(ld_gx(x + 2u * H + j) + bi.z + r * ghn);
  let da_n = dh * (1.0 - z) * (1.0 - n * n);
  let da_z = dh * (prev - n) * z * (1.0 - z);
  let da_r = da_n * ghn * r * (1.0 - r);
  st_dgx(x + j, da_r);
  st_dgx(x + H + j, da_z);
  st_dgx(x + 2u * H + j, da_n);
  let dense = row * G;
  st_gates(dense + j, da_r);
  st_gates(dense + H + j, da_z);
  st_gates(dense + 2u * H + j, da_n * r);
  if (P.step > 0u) {
    let g = (step - 1u) * G;
    st_dhw(g + j, da_r);
    st_dhw(g + H + j, da_z);
    st_dhw(g + 2u * H + j, da_n * r);
  } else {
    let g = row * G;
    st_dh0w(g + j, da_r);
    st_dh0w(g + H + j, da_z);
    st_dh0w(g + 2u * H + j, da_n * r);
  }
  st_carried(i, dh * z);
  if (last) {
    st_dhw(x + j, 0.0);
    st_dhw(x + H + j, 0.0);
    st_dhw(x + 2u * H + j, 0.0);
  }
}
