// (log)softmax over the rows of [rows, cols], a team of TEAM invocations per row (WG / TEAM rows
// per workgroup). Each invocation takes columns lane, lane + TEAM, ...: with CACHED (at most K
// each) they stay in registers, else they are read twice. An invocation's (maximum m, sum of
// e^(x - m)) pairs are combined over the team in one reduction; then out = e^(x - m) / s, or
// (x - m) - ln s for LOG (x - m is exact near m, so a large common offset costs nothing). NaN anywhere in a row makes the row NaN; a row of -inf is NaN too
// (e^(-inf + inf)), as on the CPU. A -inf entry adds nothing to a sum: against the row's maximum
// it gives 0, and an invocation whose entries are all -inf must not turn its part into NaN.

struct Acc {
  m: f32,
  s: f32,
}

// By bits: an ordered `x != -inf` is false for NaN on some compilers (lavapipe's).
fn is_neg_inf(x: f32) -> bool {
  return bitcast<u32>(x) == 0xff800000u;
}

// The factor taking a sum against maximum a to maximum b >= a (1 when equal, also both -inf).
fn rebase(a: f32, b: f32) -> f32 {
  if (a == b) {
    return 1.0;
  }
  return exp_acc(a - b);
}

fn combine(a: Acc, b: Acc) -> Acc {
  let m = nan_max(a.m, b.m);
  return Acc(m, a.s * rebase(a.m, m) + b.s * rebase(b.m, m));
}

//#if SUBGROUPS
fn shuffle_xor(a: Acc, off: u32) -> Acc {
  return Acc(subgroupShuffleXor(a.m, off), subgroupShuffleXor(a.s, off));
}
//#endif

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let lane = lid % {{TEAM}}u;
  let row = (wid.y * nwg.x + wid.x) * ({{WG}}u / {{TEAM}}u) + lid / {{TEAM}}u;
  let live = row < P.rows;
  let base = row * P.cols;
  var acc = Acc(-f32_inf(), 0.0);
//#if CACHED
  var v: array<f32, {{K}}>;
  var m = -f32_inf();
  for (var k = 0u; k < {{K}}u; k++) {
    let j = lane + k * {{TEAM}}u;
    v[k] = -f32_inf();
    if (live && j < P.cols) {
      v[k] = ld_x(base + j);
      m = nan_max(m, v[k]);
    }
  }
  var s = 0.0;
  for (var k = 0u; k < {{K}}u; k++) {
    if (lane + k * {{TEAM}}u < P.cols && !is_neg_inf(v[k])) {
      s += exp_acc(v[k] - m);
    }
  }
  acc = Acc(m, s);
//#else
  if (live) {
    for (var j = lane; j < P.cols; j += {{TEAM}}u) {
      let x = ld_x(base + j);
      if (!is_neg_inf(x)) {
        let m = nan_max(acc.m, x);
        acc = Acc(m, acc.s * rebase(acc.m, m) + exp_acc(x - m));
      }
    }
  }
//#endif
  let r = team_reduce(acc, lid);
  if (!live) {
    return;
  }
//#if LOG
  let log_s = log_acc(r.s);
//#else
  let scale = 1.0 / r.s;
//#endif
//#if CACHED
  for (var k = 0u; k < {{K}}u; k++) {
    let j = lane + k * {{TEAM}}u;
    if (j < P.cols) {
//#if LOG
      st_out(base + j, (v[k] - r.m) - log_s);
//#else
      st_out(base + j, exp_acc(v[k] - r.m) * scale);
//#endif
    }
  }
//#else
  for (var j = lane; j < P.cols; j += {{TEAM}}u) {
    let x = ld_x(base + j);
//#if LOG
    st_out(base + j, (x - r.m) - log_s);
//#else
    st_out(base + j, exp_acc(x - r.m) * scale);
//#endif
  }
//#endif
}
