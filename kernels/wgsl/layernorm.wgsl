// Layer normalisation over the rows of [rows, cols]: (x - mean) / sqrt(var + eps) * gamma + beta
// with the biased variance (rows-io.wgsl says who holds which elements). Each invocation keeps
// its elements in registers; the mean and then the sum of squared deviations from it come from
// two team reductions (the CPU's two passes, without reading the row twice). Every statistic is
// of the row less its first element (x - x0, exact for values within a factor 2 of x0): an f32
// mean of a row far from 0 is off by up to half an ulp of its magnitude, and each x - mean would
// carry that shift, large next to a small spread; the shifted row's mean is of the spread's size.
// SPLIT: STATS writes each chunk's (count, mean, sum of squared deviations) to `part`; APPLY
// combines the row's records (Chan et al.'s pairwise update, written symmetrically so every
// member of a butterfly holds the same value), reads its chunk again and writes the output.

//#if APPLY
struct Acc {
  n: f32,
  mean: f32,
  m2: f32,
}

fn combine(a: Acc, b: Acc) -> Acc {
  if (a.n == 0.0) {
    return b;
  }
  if (b.n == 0.0) {
    return a;
  }
  let n = a.n + b.n;
  let d = b.mean - a.mean;
  return Acc(n, (a.n * a.mean + b.n * b.mean) / n, (a.m2 + b.m2) + d * d * (a.n * b.n / n));
}

//#if SUBGROUPS
fn shuffle_xor(a: Acc, off: u32) -> Acc {
  return Acc(subgroupShuffleXor(a.n, off), subgroupShuffleXor(a.mean, off), subgroupShuffleXor(a.m2, off));
}
//#endif
//#else
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
//#endif

//#if !STATS
// Unit k of gamma / beta for the span's columns (clamped as load_x).
//#if GAMMA
fn load_gamma(sp: Span, k: u32, lane: u32) -> vec4<f32> {
//#if VEC4
  return ld4_gamma((sp.col >> 2u) + min(k * TEAM + lane, (sp.limit >> 2u) - 1u));
//#else
  let last = sp.limit - 1u;
  return vec4<f32>(ld_gamma(sp.col + min(elem(k, lane, 0u), last)), ld_gamma(sp.col + min(elem(k, lane, 1u), last)),
                   ld_gamma(sp.col + min(elem(k, lane, 2u), last)), ld_gamma(sp.col + min(elem(k, lane, 3u), last)));
//#endif
}
//#endif

//#if BETA
fn load_beta(sp: Span, k: u32, lane: u32) -> vec4<f32> {
//#if VEC4
  return ld4_beta((sp.col >> 2u) + min(k * TEAM + lane, (sp.limit >> 2u) - 1u));
//#else
  let last = sp.limit - 1u;
  return vec4<f32>(ld_beta(sp.col + min(elem(k, lane, 0u), last)), ld_beta(sp.col + min(elem(k, lane, 1u), last)),
                   ld_beta(sp.col + min(elem(k, lane, 2u), last)), ld_beta(sp.col + min(elem(k, lane, 3u), last)));
//#endif
}
//#endif

// (x - mean) * inv_std * gamma + beta, with x and mean both taken less the row's first element.
fn normalised(sp: Span, k: u32, lane: u32, x: vec4<f32>, mean: f32, inv_std: f32) -> vec4<f32> {
  var y = (x - vec4<f32>(mean)) * inv_std;
//#if GAMMA
  y = y * load_gamma(sp, k, lane);
//#endif
//#if BETA
  y = y + load_beta(sp, k, lane);
//#endif
  return y;
}
//#endif

//#if STATS
fn put_part(i: u32, n: f32, mean: f32, m2: f32) {
//#if VEC4
  st4_part(i, vec4<f32>(n, mean, m2, 0.0));
//#else
  st_part(4u * i, n);
  st_part(4u * i + 1u, mean);
  st_part(4u * i + 2u, m2);
//#endif
}
//#endif

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let lane = lid % TEAM;
  let sp = span_of(wid, nwg, lid);
  let pivot = vec4<f32>(ld_x(sp.row * P.cols));
//#if APPLY
  let chunks = nwg.x;
  var acc = Acc(0.0, 0.0, 0.0);
  for (var j = lid; j < chunks; j += WG) {
    let i = 4u * (sp.row * chunks + j);
    acc = combine(acc, Acc(ld_part(i), ld_part(i + 1u), ld_part(i + 2u)));
  }
  let r = team_reduce(acc, lid);
  let inv_std = 1.0 / sqrt(r.m2 / r.n + P.eps);
  for (var k = 0u; k < K; k++) {
    store_out(sp, k, lane, normalised(sp, k, lane, load_x(sp, k, lane) - pivot, r.mean, inv_std));
  }
//#else
  let zero = vec4<f32>(0.0);
  var v: array<vec4<f32>, K>;
  for (var k = 0u; k < K; k++) {
    v[k] = select(zero, load_x(sp, k, lane) - pivot, inside(sp, k, lane));
  }
  var sum = 0.0;
  for (var k = 0u; k < K; k++) {
    sum += hsum(v[k]);
  }
  let n = f32(sp.limit);
  let mean = team_reduce(Acc(sum), lid).v / n;
  var squares = 0.0;
  for (var k = 0u; k < K; k++) {
    let d = select(zero, v[k] - vec4<f32>(mean), inside(sp, k, lane));
    squares += hsum(d * d);
  }
  let m2 = team_reduce(Acc(squares), lid).v;
//#if STATS
  if (lid == 0u && sp.live) {
    put_part(sp.row * nwg.x + wid.x, n, mean, m2);
  }
//#else
  let inv_std = 1.0 / sqrt(m2 / n + P.eps);
  for (var k = 0u; k < K; k++) {
    store_out(sp, k, lane, normalised(sp, k, lane, v[k], mean, inv_std));
  }
//#endif
//#endif
}
