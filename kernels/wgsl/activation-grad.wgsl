// out = dy * f'(x) elementwise for an activation f; two elements per invocation for a 16-bit
// output (PAIRS), else one.

fn op(x: f32, dy: f32) -> f32 {
  {{BODY}}
}

fn value(i: u32) -> f32 {
  return op(ld_x(i), ld_dy(i));
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let id = flat_id(wid, nwg, lid, 256u);
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
}
