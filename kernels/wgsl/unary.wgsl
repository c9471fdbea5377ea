// out = f(x) elementwise; two elements per invocation (one 32-bit word of a 16-bit output).
// INT: the i32 ops (neg, abs), which wrap.

//#if INT
fn op(x: i32) -> i32 {
  return {{EXPR}};
}
//#else
fn op(x: f32) -> f32 {
  {{BODY}}
}
//#endif

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let i = flat_id(wid, nwg, lid, 256u) * 2u;
//#if INT
  if (i < P.n) {
    sti_out(i, op(ldi_x(i)));
  }
  if (i + 1u < P.n) {
    sti_out(i + 1u, op(ldi_x(i + 1u)));
  }
//#else
  if (i + 1u < P.n) {
    st2_out(i, op(ld_x(i)), op(ld_x(i + 1u)));
  } else if (i < P.n) {
    st_out(i, op(ld_x(i)));
  }
//#endif
}
