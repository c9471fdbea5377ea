// out = x converted: floats through f32 (rounded to nearest even on store), to i32 toward zero
// with saturation (NaN -> 0), from i32 rounded to nearest even. PAIRS: 16-bit outputs, two per
// invocation.

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let id = flat_id(wid, nwg, lid, 256u);
//#if PAIRS
  let i = id * 2u;
  if (i + 1u < P.n) {
    stbits2_out(i, enc_out(ld_x(i)), enc_out(ld_x(i + 1u)));
  } else if (i < P.n) {
    stbits_out(i, enc_out(ld_x(i)));
  }
//#else
  if (id < P.n) {
    stbits_out(id, enc_out(ld_x(id)));
  }
//#endif
}
