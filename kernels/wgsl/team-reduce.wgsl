// Reduction of one value per invocation over a team of TEAM consecutive invocations (TEAM a
// power of two dividing the workgroup size WG): every member gets the team's result. The
// including kernel defines the type `Acc`, `combine(a, b)` and, with subgroups, `shuffle_xor`.
// SUBGROUPS (fixed subgroup size SG, checked at device open to lay invocations out in order):
// a butterfly of subgroup shuffles inside each subgroup; a team larger than a subgroup then
// puts each subgroup's result in workgroup memory and every subgroup reduces those the same way
// (a second butterfly where they fit in a subgroup, else in order). Otherwise a tree in
// workgroup memory. combine must be commutative, as sums and maxima are, so both partners of a
// butterfly step hold the same value and every member gets exactly the same result. The order
// of combination is fixed, so results are deterministic. Call from uniform control flow (every
// invocation, every time).

var<workgroup> team_scratch: array<Acc, {{WG}}>;

fn team_reduce(value: Acc, lid: u32) -> Acc {
  var v = value;
//#if SUBGROUPS
  for (var off = min({{TEAM}}u, {{SG}}u) / 2u; off > 0u; off = off / 2u) {
    v = combine(v, shuffle_xor(v, off));
  }
  if ({{TEAM}}u <= {{SG}}u) {
    return v;
  }
  let parts = {{TEAM}}u / {{SG}}u;
  if (lid % {{SG}}u == 0u) {
    team_scratch[lid / {{SG}}u] = v;
  }
  workgroupBarrier();
  let base = (lid / {{TEAM}}u) * parts;
  var r: Acc;
  if (parts <= {{SG}}u) {
    r = team_scratch[base + lid % parts];
    for (var off = parts / 2u; off > 0u; off = off / 2u) {
      r = combine(r, shuffle_xor(r, off));
    }
  } else {
    r = team_scratch[base];
    for (var j = 1u; j < parts; j++) {
      r = combine(r, team_scratch[base + j]);
    }
  }
  workgroupBarrier();
  return r;
//#else
  team_scratch[lid] = v;
  workgroupBarrier();
  for (var s = {{TEAM}}u / 2u; s > 0u; s = s / 2u) {
    if (lid % {{TEAM}}u < s) {
      team_scratch[lid] = combine(team_scratch[lid], team_scratch[lid + s]);
    }
    workgroupBarrier();
  }
  let r = team_scratch[(lid / {{TEAM}}u) * {{TEAM}}u];
  workgroupBarrier();
  return r;
//#endif
}
