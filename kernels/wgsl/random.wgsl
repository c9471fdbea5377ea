// Seeded random fill and dropout from the Philox stream, bit-compatible with the CPU backend.
// One invocation per Philox block: elements 4j .. 4j+3.
// UNIFORM: low + span * u, the product rounded before the sum (as the CPU's two fround).
// NORMAL: Box-Muller on word pairs (0, 1) and (2, 3) in float-float, mean + std * z rounded once.
// DROPOUT: x * scale where u >= threshold, else 0.

//#if NORMAL
// A word -> (top 24 bits + 0.5) * 2^-24, never 0, as hi + lo.
fn open_unit(word: u32) -> vec2<f32> {
  return two_sum(f32(word >> 8u) * 5.9604644775390625e-8, 2.98023223876953125e-8);
}

// Two normals from two words: (cosine branch, sine branch).
fn box_muller(w0: u32, w1: u32) -> vec2<f32> {
  let radius = ff_sqrt(ff_log(open_unit(w0)) * -2.0);
  let cs = ff_cos_sin_turn(open_unit(w1));
  let mean = vec2<f32>(P.mean_hi, P.mean_lo);
  let sd = vec2<f32>(P.std_hi, P.std_lo);
  let v0 = ff_add(mean, ff_mul(sd, ff_mul(radius, cs[0])));
  let v1 = ff_add(mean, ff_mul(sd, ff_mul(radius, cs[1])));
  return vec2<f32>(v0.x + v0.y, v1.x + v1.y);
}
//#endif

fn value(word: u32, i: u32) -> f32 {
//#if UNIFORM
  return P.low + opaque(P.span * unit(word));
//#endif
//#if DROPOUT
  return select(0.0, ld_x(min(i, P.n - 1u)) * P.scale, unit(word) >= P.threshold);
//#endif
//#if NORMAL
  return 0.0;
//#endif
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let j = flat_id(wid, nwg, lid, 64u);
  let i = j * 4u;
  if (i >= P.n) {
    return;
  }
  let w = philox(j, 0u, P.seed_lo, P.seed_hi);
//#if NORMAL
  let a = box_muller(w.x, w.y);
  let b = box_muller(w.z, w.w);
  let v = vec4<f32>(a.x, a.y, b.x, b.y);
//#else
  let v = vec4<f32>(value(w.x, i), value(w.y, i + 1u), value(w.z, i + 2u), value(w.w, i + 3u));
//#endif
  if (i + 3u < P.n) {
    st2_out(i, v.x, v.y);
    st2_out(i + 2u, v.z, v.w);
    return;
  }
  st_out(i, v.x);
  if (i + 1u < P.n) {
    st_out(i + 1u, v.y);
  }
  if (i + 2u < P.n) {
    st_out(i + 2u, v.z);
  }
}
