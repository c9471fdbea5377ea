// What the row kernels (softmax.wgsl, layernorm.wgsl) share: where an invocation's elements are
// and how they come in and go out. A team of TEAM invocations takes a row, or with SPLIT one
// chunk of CHUNK elements of a row (the workgroup is then one team). Invocation `lane` holds K
// units of 4 elements each in registers: with VEC4 unit k is elements 4(k·TEAM + lane) .. + 3
// (one 16-byte load; the row length and every view's offset are multiples of 4), otherwise its
// component c is element (4k + c)·TEAM + lane. Loads never branch: indices past the end are
// clamped to the last element (the kernels mask what those give), so each unit's loads issue
// back to back.

const TEAM: u32 = {{TEAM}}u;
const K: u32 = {{K}}u;
const WG: u32 = {{WG}}u;

// The span of the row this team covers: its first element `base` (in the tensor), `limit`
// elements from there, `col` its first column, and whether the team has a row at all.
struct Span {
  base: u32,
  limit: u32,
  col: u32,
  row: u32,
  live: bool,
}

fn span_of(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> Span {
//#if SPLIT
  // Grid: x the chunk, y (and z past the device's limit) the row.
  let row = wid.z * nwg.y + wid.y;
  let r = min(row, P.rows - 1u);
  let col = wid.x * {{CHUNK}}u;
  return Span(r * P.cols + col, min({{CHUNK}}u, P.cols - col), col, r, row < P.rows);
//#else
  let row = (wid.y * nwg.x + wid.x) * (WG / TEAM) + lid / TEAM;
  let live = row < P.rows;
  let r = min(row, P.rows - 1u);
  return Span(r * P.cols, P.cols, 0u, r, live);
//#endif
}

// Element index (from the span's start) of component c of unit k.
fn elem(k: u32, lane: u32, c: u32) -> u32 {
//#if VEC4
  return 4u * (k * TEAM + lane) + c;
//#else
  return (4u * k + c) * TEAM + lane;
//#endif
}

// Which components of unit k lie inside the span.
fn inside(sp: Span, k: u32, lane: u32) -> vec4<bool> {
  let e = vec4<u32>(elem(k, lane, 0u), elem(k, lane, 1u), elem(k, lane, 2u), elem(k, lane, 3u));
  return (e < vec4<u32>(sp.limit)) & vec4<bool>(sp.live);
}

// Unit k of role x (clamped: components past the end repeat the last element).
fn load_x(sp: Span, k: u32, lane: u32) -> vec4<f32> {
//#if VEC4
  return ld4_x((sp.base >> 2u) + min(k * TEAM + lane, (sp.limit >> 2u) - 1u));
//#else
  let last = sp.limit - 1u;
  return vec4<f32>(ld_x(sp.base + min(elem(k, lane, 0u), last)), ld_x(sp.base + min(elem(k, lane, 1u), last)),
                   ld_x(sp.base + min(elem(k, lane, 2u), last)), ld_x(sp.base + min(elem(k, lane, 3u), last)));
//#endif
}

//#if !STATS
// Stores the components of unit k that lie inside the span.
fn store_out(sp: Span, k: u32, lane: u32, v: vec4<f32>) {
  if (!sp.live) {
    return;
  }
//#if VEC4
  let u = k * TEAM + lane;
  if (4u * u < sp.limit) {
    st4_out((sp.base >> 2u) + u, v);
  }
//#else
  for (var c = 0u; c < 4u; c++) {
    let e = elem(k, lane, c);
    if (e < sp.limit) {
      st_out(sp.base + e, v[c]);
    }
  }
//#endif
}
//#endif

// NaN tests and NaN-propagating max on vectors, by bits (see common.wgsl).
fn is_nan4(x: vec4<f32>) -> vec4<bool> {
  return (bitcast<vec4<u32>>(x) & vec4<u32>(0x7fffffffu)) > vec4<u32>(0x7f800000u);
}

fn is_neg_inf4(x: vec4<f32>) -> vec4<bool> {
  return bitcast<vec4<u32>>(x) == vec4<u32>(0xff800000u);
}

// The largest component, NaN if any is.
fn hmax(x: vec4<f32>) -> f32 {
  return nan_max(nan_max(x.x, x.y), nan_max(x.z, x.w));
}

fn hsum(x: vec4<f32>) -> f32 {
  return (x.x + x.y) + (x.z + x.w);
}
