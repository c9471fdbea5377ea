// out = dy * f'(x) elementwise for an activation f; two elements per invocation.

fn op(x: f32, dy: f32) -> f32 {
  {{BODY}}
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let i = flat_id(wid, nwg, lid, 256u) * 2u;
  if (i + 1u < P.n) {
    st2_out(i, op(ld_x(i), ld_dy(i)), op(ld_x(i + 1u), ld_dy(i + 1u)));
  } else if (i < P.n) {
    st_out(i, op(ld_x(i), ld_dy(i)));
  }
}
