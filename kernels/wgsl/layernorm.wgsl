// Layer normalisation over the rows of [rows, cols]: (x - mean) / sqrt(var + eps) * gamma + beta
// with the biased variance, mean and variance by two team reductions (the second over squared
// deviations from the mean, as the CPU's two passes). A team of TEAM invocations per row;
// CACHED keeps an invocation's K columns in registers, else the row is read again.

struct Acc {
  v: f32,
}

fn combine(a: Acc, b: Acc) -> Acc {
  return Acc(a.v + b.v);
}

//#if SUBGROUPS
fn shuffle_xor(a: Acc, off: u32) -> Acc {
  return Acc(subgroupShuffleXor(a.v, off));
}
//#endif

fn scale_shift(j: u32, normalised: f32) -> f32 {
  var y = normalised;
//#if GAMMA
  y = y * ld_gamma(j);
//#endif
//#if BETA
  y = y + ld_beta(j);
//#endif
  return y;
}

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let lane = lid % {{TEAM}}u;
  let row = (wid.y * nwg.x + wid.x) * ({{WG}}u / {{TEAM}}u) + lid / {{TEAM}}u;
  let live = row < P.rows;
  let base = row * P.cols;
  var sum = 0.0;
//#if CACHED
  var v: array<f32, {{K}}>;
  for (var k = 0u; k < {{K}}u; k++) {
    let j = lane + k * {{TEAM}}u;
    v[k] = 0.0;
    if (live && j < P.cols) {
      v[k] = ld_x(base + j);
      sum += v[k];
    }
  }
//#else
  if (live) {
    for (var j = lane; j < P.cols; j += {{TEAM}}u) {
      sum += ld_x(base + j);
    }
  }
//#endif
  let mean = team_reduce(Acc(sum), lid).v / f32(P.cols);
  var squares = 0.0;
//#if CACHED
  for (var k = 0u; k < {{K}}u; k++) {
    if (lane + k * {{TEAM}}u < P.cols) {
      let d = v[k] - mean;
      squares += d * d;
    }
  }
//#else
  if (live) {
    for (var j = lane; j < P.cols; j += {{TEAM}}u) {
      let d = ld_x(base + j) - mean;
      squares += d * d;
    }
  }
//#endif
  let inv_std = 1.0 / sqrt(team_reduce(Acc(squares), lid).v / f32(P.cols) + P.eps);
  if (!live) {
    return;
  }
//#if CACHED
  for (var k = 0u; k < {{K}}u; k++) {
    let j = lane + k * {{TEAM}}u;
    if (j < P.cols) {
      st_out(base + j, scale_shift(j, (v[k] - mean) * inv_std));
    }
  }
//#else
  for (var j = lane; j < P.cols; j += {{TEAM}}u) {
    st_out(base + j, scale_shift(j, (ld_x(base + j) - mean) * inv_std));
  }
//#endif
}
