// out = f(a, b) with NumPy broadcasting, by the plan's kind: SAME (both dense), SCALAR_A /
// SCALAR_B (one element repeated), ROW_A / ROW_B (a [cols] row repeated over rows), GENERAL (up
// to six dims with per-input strides, 0 on broadcast dims). PAIRS (16-bit outputs): two outputs
// per invocation, one 32-bit word; otherwise one.

//#if INT
fn op(a: i32, b: i32) -> i32 {
  return {{EXPR}};
}
//#else
fn op(a: f32, b: f32) -> f32 {
  return {{EXPR}};
}
//#endif

//#if GENERAL
// Input offsets of output element i: dims d0..d5 and strides, outermost first.
fn offsets(i: u32) -> vec2<u32> {
  var rest = i;
  var ai = 0u;
  var bi = 0u;
  let c5 = rest % P.d5; rest = rest / P.d5; ai += c5 * P.a5; bi += c5 * P.b5;
  let c4 = rest % P.d4; rest = rest / P.d4; ai += c4 * P.a4; bi += c4 * P.b4;
  let c3 = rest % P.d3; rest = rest / P.d3; ai += c3 * P.a3; bi += c3 * P.b3;
  let c2 = rest % P.d2; rest = rest / P.d2; ai += c2 * P.a2; bi += c2 * P.b2;
  let c1 = rest % P.d1; rest = rest / P.d1; ai += c1 * P.a1; bi += c1 * P.b1;
  ai += rest * P.a0;
  bi += rest * P.b0;
  return vec2<u32>(ai, bi);
}
//#else
fn offsets(i: u32) -> vec2<u32> {
//#if SAME
  return vec2<u32>(i, i);
//#endif
//#if SCALAR_A
  return vec2<u32>(0u, i);
//#endif
//#if SCALAR_B
  return vec2<u32>(i, 0u);
//#endif
//#if ROW_A
  return vec2<u32>(i % P.cols, i);
//#endif
//#if ROW_B
  return vec2<u32>(i, i % P.cols);
//#endif
}
//#endif

//#if INT
fn value(i: u32) -> i32 {
  let o = offsets(i);
  return op(ldi_a(o.x), ldi_b(o.y));
}
//#else
fn value(i: u32) -> f32 {
  let o = offsets(i);
  return op(ld_a(o.x), ld_b(o.y));
}
//#endif

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let id = flat_id(wid, nwg, lid, 256u);
//#if INT
  if (id < P.n) {
    sti_out(id, value(id));
  }
//#else
//#if PAIRS
  let i = id * 2u;
  if (i + 1u < P.n) {
    st2_out(i, value(i), value(i + 1u));
  } else if (i < P.n) {
    st_out(i, value(i));
  }
//#else
  if (id < P.n) {
    st_out(id, value(id));
  }
//#endif
//#endif
}
