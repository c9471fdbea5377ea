// out = f(x) elementwise. PAIRS (16-bit outputs): two elements per invocation, one 32-bit word;
// otherwise one. INT: the i32 ops (neg, abs), which wrap.

//#if INT
fn op(x: i32) -> i32 {
  return {{EXPR}};
}

fn value(i: u32) -> i32 {
  return op(ldi_x(i));
}
//#else
fn op(x: f32) -> f32 {
  {{BODY}}
}

fn value(i: u32) -> f32 {
  return op(ld_x(i));
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
