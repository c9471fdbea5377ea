// (log)softmax over the rows of [rows, cols] (rows-io.wgsl says who holds which elements).
// One pass: each invocation loads its 4K elements into registers, takes their maximum m and
// turns them into e^(x - m) summed as s; one team reduction combines the (m, s) pairs into the
// row's (M, S); then out = e^(x - m) · e^(m - M) / S, or (x - M) - ln S for LOG (x - M is exact
// near M, so a large common offset costs nothing). Each element is read once and e^ taken once.
// SPLIT (rows longer than a team holds, or too few rows to fill the device): STATS writes each
// chunk's (m, s) to `part` (a 4-word record per chunk, row-major); APPLY combines the row's
// records (every workgroup of the row in the same order, so they agree), reads its chunk again
// and writes out = e^(x - M) / S.
// HW_EXP: e^ is the hardware's 2^ of x·log2 e (an error of a few parts in 10^7 for the values
// that carry a row; far below the norm-wise tolerance), else exp_fast (within 2 ulp).
// NaN anywhere in a row makes the row NaN, as +inf does (e^(inf - inf)); a row of -inf is NaN
// too, as on the CPU. A -inf entry gives 0 (log: -inf), and an invocation whose entries are all
// -inf must not turn its part into NaN.

struct Acc {
  m: f32,
  s: f32,
}

// e^x for x <= 0 (and NaN): 0 at -inf and below -104, NaN kept.
fn row_exp4(x: vec4<f32>) -> vec4<f32> {
//#if HW_EXP
  let y = select(exp2(x * 1.44269504088896341), vec4<f32>(0.0), x < vec4<f32>(-104.0));
  return select(y, x, (bitcast<vec4<u32>>(x) & vec4<u32>(0x7fffffffu)) > vec4<u32>(0x7f800000u));
//#else
  return exp_fast4(x);
//#endif
}

fn row_exp(x: f32) -> f32 {
//#if HW_EXP
  return select(select(exp2(x * 1.44269504088896341), 0.0, x < -104.0), x, is_nan(x));
//#else
  return exp_fast(x);
//#endif
}

// The factor taking a sum against maximum a to maximum b >= a (1 when equal, also both -inf).
fn rebase(a: f32, b: f32) -> f32 {
  if (a == b) {
    return 1.0;
  }
  return row_exp(a - b);
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

//#if STATS
fn put_part(i: u32, a: Acc) {
//#if VEC4
  st4_part(i, vec4<f32>(a.m, a.s, 0.0, 0.0));
//#else
  st_part(4u * i, a.m);
  st_part(4u * i + 1u, a.s);
//#endif
}
//#endif

//#if APPLY
fn get_part(i: u32) -> Acc {
  return Acc(ld_part(4u * i), ld_part(4u * i + 1u));
}
//#endif

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let lane = lid % TEAM;
  let sp = span_of(wid, nwg, lid);
  let ninf = vec4<f32>(-f32_inf());
//#if APPLY
  // The row's (M, S) from its chunks' records.
  let chunks = nwg.x;
  var acc = Acc(-f32_inf(), 0.0);
  for (var j = lid; j < chunks; j += WG) {
    acc = combine(acc, get_part(sp.row * chunks + j));
  }
  let r = team_reduce(acc, lid);
//#if LOG
  let log_s = log_acc(r.s);
//#else
  let inv_s = 1.0 / r.s;
//#endif
  for (var k = 0u; k < K; k++) {
    let x = load_x(sp, k, lane);
//#if LOG
    store_out(sp, k, lane, (x - vec4<f32>(r.m)) - vec4<f32>(log_s));
//#else
    store_out(sp, k, lane, row_exp4(x - vec4<f32>(r.m)) * inv_s);
//#endif
  }
//#else
  var v: array<vec4<f32>, K>;
  var m = -f32_inf();
  for (var k = 0u; k < K; k++) {
    v[k] = select(ninf, load_x(sp, k, lane), inside(sp, k, lane));
  }
  for (var k = 0u; k < K; k++) {
    m = nan_max(m, hmax(v[k]));
  }
  var s = 0.0;
  for (var k = 0u; k < K; k++) {
    let p = select(row_exp4(v[k] - vec4<f32>(m)), vec4<f32>(0.0), is_neg_inf4(v[k]));
//#if !LOG
    v[k] = p;
//#endif
    s += hsum(p);
  }
  let r = team_reduce(Acc(m, s), lid);
//#if STATS
  if (lid == 0u && sp.live) {
    put_part(sp.row * nwg.x + wid.x, r);
  }
//#else
  if (!sp.live) {
    return;
  }
//#if LOG
  let log_s = log_acc(r.s);
  for (var k = 0u; k < K; k++) {
    store_out(sp, k, lane, (v[k] - vec4<f32>(r.m)) - vec4<f32>(log_s));
  }
//#else
  let f = rebase(m, r.m) / r.s;
  for (var k = 0u; k < K; k++) {
    store_out(sp, k, lane, v[k] * f);
  }
//#endif
//#endif
//#endif
}
