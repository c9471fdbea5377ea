// out[i] = x[i], bit for bit, for views a buffer copy cannot take (same buffer, or 16-bit views
// that do not start on a 4-byte boundary). PAIRS: 16-bit elements, two per invocation.

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let id = flat_id(wid, nwg, lid, 256u);
//#if PAIRS
  let i = id * 2u;
  if (i + 1u < P.n) {
    stbits2_out(i, bits_x(i), bits_x(i + 1u));
  } else if (i < P.n) {
    stbits_out(i, bits_x(i));
  }
//#else
  if (id < P.n) {
    stbits_out(id, bits_x(id));
  }
//#endif
}
