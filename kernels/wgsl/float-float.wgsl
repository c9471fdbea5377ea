// Float-float arithmetic (an unevaluated sum hi + lo of two f32, about 44 bits), enough for
// randn's Box-Muller to round to within one ulp of the CPU backend's f64 result. Error-free
// transforms need every rounding where it is written: each intermediate goes through opaque(),
// which keeps the compiler from fusing a product into a sum (Dekker's split breaks under
// contraction) and from simplifying (s - a) - s and the like as if they were exact.

fn qts(a: f32, b: f32) -> vec2<f32> {  // |a| >= |b|
  let s = opaque(a + b);
  return vec2<f32>(s, b - opaque(s - a));
}

fn two_sum(a: f32, b: f32) -> vec2<f32> {
  let s = opaque(a + b);
  let bb = opaque(s - a);
  let aa = opaque(s - bb);
  return vec2<f32>(s, (a - aa) + (b - bb));
}

fn split(a: f32) -> vec2<f32> {
  let t = opaque(4097.0 * a);
  let hi = opaque(t - opaque(t - a));
  return vec2<f32>(hi, a - hi);
}

fn two_prod(a: f32, b: f32) -> vec2<f32> {
  let p = opaque(a * b);
  let x = split(a);
  let y = split(b);
  return vec2<f32>(p, ((x.x * y.x - p) + x.x * y.y + x.y * y.x) + x.y * y.y);
}

fn ff_add(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  let s = two_sum(a.x, b.x);
  let t = two_sum(a.y, b.y);
  let u = qts(s.x, s.y + t.x);
  return qts(u.x, u.y + t.y);
}

fn ff_mul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  let p = two_prod(a.x, b.x);
  return qts(p.x, p.y + (a.x * b.y + a.y * b.x));
}

fn ff_div(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  let q1 = a.x / b.x;
  let r = ff_add(a, -ff_mul(b, vec2<f32>(q1, 0.0)));
  let q2 = r.x / b.x;
  let r2 = ff_add(r, -ff_mul(b, vec2<f32>(q2, 0.0)));
  let q3 = r2.x / b.x;
  let q = qts(q1, q2);
  return ff_add(q, vec2<f32>(q3, 0.0));
}

fn ff_sqrt(a: vec2<f32>) -> vec2<f32> {
  let y = sqrt(a.x);
  let d = ff_add(a, -two_prod(y, y));
  return qts(y, d.x / (2.0 * y));
}

const FF_LN2: vec2<f32> = vec2<f32>(0.693147182464599609375, -1.9046542121259336e-09);
const FF_PI_4: vec2<f32> = vec2<f32>(0.785398185253143310546875, -2.1855694143368964e-08);
const FF_NEG_SIXTH: vec2<f32> = vec2<f32>(-0.1666666716337204, 4.967053879312289e-09);
const FF_SQRT1_2: vec2<f32> = vec2<f32>(0.707106769084930419921875, 1.2101617485882343e-08);

// ln(u) for 0 < u < 1 given as hi + lo: u = m * 2^e with m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s),
// s = (m - 1) / (m + 1); 2s carries the precision, the series' tail (relatively < 1%) is f32.
fn ff_log(u: vec2<f32>) -> vec2<f32> {
  let fr = frexp(u.x);
  var m = vec2<f32>(fr.fract, ldexp(u.y, -fr.exp));
  var e = fr.exp;
  if (m.x < 0.70710678118654752) {
    m = m * 2.0;
    e = e - 1;
  }
  // m.x - 1 is exact (m.x within a factor of two of 1).
  let s = ff_div(two_sum(m.x - 1.0, m.y), ff_add(vec2<f32>(1.0, 0.0), m));
  let z = s.x * s.x;
  let tail = 2.0 * s.x * z * (0.33333333333333333 + z * (0.2 + z * (0.14285714285714286 + z * (0.11111111111111111 + z * (0.090909090909090909 + z * 0.076923076923076923)))));
  let log_m = ff_add(s * 2.0, vec2<f32>(tail, 0.0));
  return ff_add(ff_mul(FF_LN2, vec2<f32>(f32(e), 0.0)), log_m);
}

// (cos 2 pi t, sin 2 pi t) for t in [0, 1) given as hi + lo: t reduced by eighths of a turn
// (exactly), r = (8t - k) pi / 4 with |r| <= pi / 8, Taylor series with the leading terms
// exact, then rotated back by k eighths.
fn ff_cos_sin_turn(t: vec2<f32>) -> array<vec2<f32>, 2> {
  let t8 = t * 8.0;
  let k = floor(t8.x + 0.5);
  let f = two_sum(t8.x - k, t8.y);
  let r = ff_mul(f, FF_PI_4);
  // The terms above 1% of the result in float-float (r, r^3 / 6, r^2 / 2), the rest in f32.
  let r2 = ff_mul(r, r);
  let z = r2.x;
  let sin_tail = r.x * z * z * (0.0083333333333333333 + z * (-0.00019841269841269841 + z * (2.7557319223985891e-06 + z * -2.5052108385441719e-08)));
  let cos_tail = z * z * (0.041666666666666667 + z * (-0.0013888888888888889 + z * (2.4801587301587302e-05 + z * (-2.7557319223985891e-07 + z * 2.0876756987868099e-09))));
  let sr = ff_add(ff_add(r, ff_mul(ff_mul(r2, r), FF_NEG_SIXTH)), vec2<f32>(sin_tail, 0.0));
  let cr = ff_add(ff_add(vec2<f32>(1.0, 0.0), r2 * -0.5), vec2<f32>(cos_tail, 0.0));
  // cos/sin of k eighths of a turn, k in 0..8, as (c, s) with entries 0, +-1 or +-sqrt(1/2).
  let oct = u32(k) & 7u;
  var c = vec2<f32>(0.0, 0.0);
  var s = vec2<f32>(0.0, 0.0);
  switch oct {
    case 0u: { c = vec2<f32>(1.0, 0.0); }
    case 1u: { c = FF_SQRT1_2; s = FF_SQRT1_2; }
    case 2u: { s = vec2<f32>(1.0, 0.0); }
    case 3u: { c = -FF_SQRT1_2; s = FF_SQRT1_2; }
    case 4u: { c = vec2<f32>(-1.0, 0.0); }
    case 5u: { c = -FF_SQRT1_2; s = -FF_SQRT1_2; }
    case 6u: { s = vec2<f32>(-1.0, 0.0); }
    default: { c = FF_SQRT1_2; s = -FF_SQRT1_2; }
  }
  let cos_v = ff_add(ff_mul(c, cr), -ff_mul(s, sr));
  let sin_v = ff_add(ff_mul(s, cr), ff_mul(c, sr));
  return array<vec2<f32>, 2>(cos_v, sin_v);
}
