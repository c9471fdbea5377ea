// out[i] = the element bit pattern P.bits (the host rounds the value to the dtype). PAIRS:
// 16-bit outputs, two per invocation.

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let id = flat_id(wid, nwg, lid, 256u);
//#if PAIRS
  let i = id * 2u;
  if (i + 1u < P.n) {
    stbits2_out(i, P.bits, P.bits);
  } else if (i < P.n) {
    stbits_out(i, P.bits);
  }
//#else
  if (id < P.n) {
    stbits_out(id, P.bits);
  }
//#endif
}
