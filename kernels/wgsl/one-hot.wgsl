// out[(o·classes + c)·inner + i] = 1 where indices[o·inner + i] = c, else 0, for out seen as
// [outer, classes, inner]: an index outside [0, classes) gives zeros. One invocation per output
// element.

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let e = flat_id(wid, nwg, lid, 256u);
  if (e >= P.n) {
    return;
  }
  let i = e % P.inner;
  let rest = e / P.inner;
  let c = rest % P.classes;
  let o = rest / P.classes;
  st_out(e, select(0.0, 1.0, ldi_indices(o * P.inner + i) == i32(c)));
}
