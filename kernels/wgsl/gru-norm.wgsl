// The layer norm of a GRU's new states (rows of H in `pre`, f32, one row per member and batch
// row): (h - mean) / sqrt(var + eps) * gamma + beta with the biased variance, by two team
// reductions as in layernorm.wgsl; the result, rounded to the dtype, is the state carried on:
// stored to the sequence slot and, at the last step, to hN.

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

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let H = P.hidden;
  let lane = lid % {{TEAM}}u;
  let row = (wid.y * nwg.x + wid.x) * ({{WG}}u / {{TEAM}}u) + lid / {{TEAM}}u;
  let live = row < P.rows;
  let base = row * H;
  var sum = 0.0;
  if (live) {
    for (var j = lane; j < H; j += {{TEAM}}u) {
      sum += ld_pre(base + j);
    }
  }
  let mean = team_reduce(Acc(sum), lid).v / f32(H);
  var squares = 0.0;
  if (live) {
    for (var j = lane; j < H; j += {{TEAM}}u) {
      let d = ld_pre(base + j) - mean;
      squares += d * d;
    }
  }
  let inv_std = 1.0 / sqrt(team_reduce(Acc(squares), lid).v / f32(H) + P.eps);
  if (!live) {
    return;
  }
  let e = row / P.batch;
  let b = row % P.batch;
  for (var j = lane; j < H; j += {{TEAM}}u) {
    var y = (ld_pre(base + j) - mean) * inv_std;
//#if GAMMA
    y = y * ld_gamma(e * H + j);
//#endif
//#if BETA
    y = y + ld_beta(e * H + j);
//#endif
    st_seq(e * P.s_e + b * P.s_b + P.slot * P.s_t + j, y);
    if (P.last == 1u) {
      st_hn(row * H + j, y);
    }
  }
}
