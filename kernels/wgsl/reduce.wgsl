// Reductions of x seen as [outer, len, inner] (sum, mean, max, min, argmax). The accumulator
// Acc (value, axis index), its identity, combine and load come from the host ({{...}}), per op
// and dtype: sums add in f32 (i32 wraps), max/min propagate NaN, argmax keeps the first NaN,
// else the first maximum. Modes:
// ROWS (inner = 1): a team of TEAM invocations per row; with PARTIAL, workgroup (s, g) reduces
//   chunk s of its rows into partial s of each row.
// COLS (inner > 1): an invocation per output, walking the axis (neighbours read neighbours);
//   with PARTIAL, grid z splits the axis into chunks.
// FINISH: an invocation per output combines its partials in order.
// Partial p is two words of `part`: the value's bits and the index.

struct Acc {
  v: {{VT}},
  i: u32,
}

fn identity() -> Acc {
  return {{IDENTITY}};
}

fn combine(a: Acc, b: Acc) -> Acc {
  {{COMBINE}}
}

//#if !FINISH
fn element(k: u32, j: u32) -> Acc {
  return {{LOAD}};
}
//#endif

//#if SUBGROUPS
fn shuffle_xor(a: Acc, off: u32) -> Acc {
  return Acc(subgroupShuffleXor(a.v, off), subgroupShuffleXor(a.i, off));
}
//#endif

//#if PARTIAL
fn store(p: u32, a: Acc) {
  stbits_part(2u * p, bitcast<u32>(a.v));
  stbits_part(2u * p + 1u, a.i);
}
//#else
fn store(o: u32, a: Acc) {
  {{STORE}}
}
//#endif

//#if FINISH
fn partial(p: u32) -> Acc {
  return Acc(bitcast<{{VT}}>(bits_part(2u * p)), bits_part(2u * p + 1u));
}
//#endif

//#if ROWS
//#if !FINISH
fn reduce_rows(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) {
  let lane = lid % {{TEAM}}u;
//#if PARTIAL
  let s = wid.x;
  let row = wid.y * ({{WG}}u / {{TEAM}}u) + lid / {{TEAM}}u;
//#else
  let s = 0u;
  let row = (wid.y * nwg.x + wid.x) * ({{WG}}u / {{TEAM}}u) + lid / {{TEAM}}u;
//#endif
  var acc = identity();
  if (row < P.rows) {
    let base = row * P.len;
    let end = min((s + 1u) * P.chunk, P.len);
    for (var j = s * P.chunk + lane; j < end; j += {{TEAM}}u) {
      acc = combine(acc, element(base + j, j));
    }
  }
  let r = team_reduce(acc, lid);
  if (lane == 0u && row < P.rows) {
//#if PARTIAL
    store(row * P.splits + s, r);
//#else
    store(row, r);
//#endif
  }
}
//#endif
//#endif

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
//#if ROWS
  reduce_rows(wid, nwg, lid);
//#endif
//#if COLS
  let flat = (wid.y * nwg.x + wid.x) * {{WG}}u + lid;
  if (flat >= P.rows) {
    return;
  }
  let o = flat / P.inner;
  let i = flat % P.inner;
  let base = o * P.len * P.inner + i;
  let s = wid.z;
  var acc = identity();
  let end = min((s + 1u) * P.chunk, P.len);
  for (var j = s * P.chunk; j < end; j++) {
    acc = combine(acc, element(base + j * P.inner, j));
  }
//#if PARTIAL
  store(flat * P.splits + s, acc);
//#else
  store(flat, acc);
//#endif
//#endif
//#if FINISH
  let o = (wid.y * nwg.x + wid.x) * {{WG}}u + lid;
  if (o >= P.rows) {
    return;
  }
  var acc = partial(o * P.splits);
  for (var s = 1u; s < P.splits; s++) {
    acc = combine(acc, partial(o * P.splits + s));
  }
  store(o, acc);
//#endif
}
