// What every WebGPU kernel shares: NaN and infinity by bit pattern (compilers fold float
// comparisons and x - x as if NaN did not exist -- lavapipe's gives NaN != -inf as false -- but
// not integer tests), the 16-bit float conversions with the CPU backend's
// rounding (nearest even; NaN becomes the canonical 0x7FFF), exact i32 -> f32 rounding, a value
// the compiler cannot see through (no contraction or reassociation across it), and the flat
// index of an invocation in a grid that may be two-dimensional (more than 65535 workgroups).

fn f32_inf() -> f32 {
  var bits = 0x7f800000u;  // a var: a const infinity is a shader-creation error
  return bitcast<f32>(bits);
}

fn f32_nan() -> f32 {
  var bits = 0x7fc00000u;
  return bitcast<f32>(bits);
}

fn is_nan(x: f32) -> bool {
  return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}

fn is_finite(x: f32) -> bool {
  return (bitcast<u32>(x) & 0x7fffffffu) < 0x7f800000u;
}

// x itself, through an integer op on a uniform the compiler cannot know is zero: products and
// sums on either side are rounded separately, as on the CPU.
fn opaque(x: f32) -> f32 {
  return bitcast<f32>(bitcast<u32>(x) ^ P.zero);
}

// max/min that propagate NaN (either operand), as Math.max/min.
fn nan_max(a: f32, b: f32) -> f32 {
  return select(select(b, a, a > b), a, is_nan(a));
}

fn nan_min(a: f32, b: f32) -> f32 {
  return select(select(b, a, a < b), a, is_nan(a));
}

// Math.max/Math.min exactly: NaN from either side, and of two zeros max is +0 and min is -0
// (equal operands differ at most in the sign bit, which AND clears and OR sets).
fn math_max(a: f32, b: f32) -> f32 {
  if (!is_nan(a) && !is_nan(b) && a == b) {
    return bitcast<f32>(bitcast<u32>(a) & bitcast<u32>(b));
  }
  return nan_max(a, b);
}

fn math_min(a: f32, b: f32) -> f32 {
  if (!is_nan(a) && !is_nan(b) && a == b) {
    return bitcast<f32>(bitcast<u32>(a) | bitcast<u32>(b));
  }
  return nan_min(a, b);
}

fn f16_to_f32(h: u32) -> f32 {
  let sign = (h & 0x8000u) << 16u;
  let e = (h >> 10u) & 0x1fu;
  let m = h & 0x3ffu;
  if (e == 0x1fu) {
    return bitcast<f32>(sign | 0x7f800000u | (m << 13u));
  }
  if (e == 0u) {
    // Zero or subnormal: m * 2^-24, a normal f32 (or zero).
    return bitcast<f32>(bitcast<u32>(f32(m) * 5.9604644775390625e-8) | sign);
  }
  return bitcast<f32>(sign | ((e + 112u) << 23u) | (m << 13u));
}

fn f32_to_f16(x: f32) -> u32 {
  let bits = bitcast<u32>(x);
  let sign = (bits >> 16u) & 0x8000u;
  let exp = (bits >> 23u) & 0xffu;
  let mant = bits & 0x7fffffu;
  if (exp == 0xffu) {
    return select(sign | 0x7c00u, 0x7fffu, mant != 0u);
  }
  let e = i32(exp) - 112;
  if (e >= 31) {
    return sign | 0x7c00u;
  }
  if (e <= 0) {
    if (e < -10) {
      return sign;
    }
    let significand = mant | 0x800000u;
    let shift = u32(14 - e);
    var r = significand >> shift;
    let rem = significand & ((1u << shift) - 1u);
    let half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (r & 1u) != 0u)) {
      r += 1u;
    }
    return sign | r;
  }
  var r = (u32(e) << 10u) | (mant >> 13u);
  let rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u) != 0u)) {
    r += 1u;  // a carry into the exponent gives infinity, as it should
  }
  return sign | r;
}

fn bf16_to_f32(h: u32) -> f32 {
  return bitcast<f32>(h << 16u);
}

fn f32_to_bf16(x: f32) -> u32 {
  let bits = bitcast<u32>(x);
  if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x7fffffu) != 0u) {
    return 0x7fffu;
  }
  return ((bits + 0x7fffu + ((bits >> 16u) & 1u)) >> 16u) & 0xffffu;
}

// i32 -> f32 rounded to nearest even (WGSL leaves the rounding of inexact conversions open).
fn i32_to_f32(v: i32) -> f32 {
  let neg = v < 0;
  let mag = select(bitcast<u32>(v), 0u - bitcast<u32>(v), neg);
  if (mag < 0x1000000u) {
    return select(f32(mag), -f32(mag), neg);
  }
  let lead = 31u - countLeadingZeros(mag);
  let shift = lead - 23u;
  var m = mag >> shift;
  let rem = mag & ((1u << shift) - 1u);
  let half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (m & 1u) != 0u)) {
    m += 1u;
  }
  // m may have carried to 2^24: the exponent field absorbs it.
  let bits = ((lead + 127u) << 23u) + (m - 0x800000u);
  return bitcast<f32>(bits | select(0u, 0x80000000u, neg));
}

// f32 -> i32: toward zero, saturating, NaN -> 0.
fn f32_to_i32(x: f32) -> i32 {
  if (is_nan(x)) {
    return 0;
  }
  if (x >= 2147483648.0) {
    return 2147483647;
  }
  if (x <= -2147483648.0) {
    return -2147483647 - 1;
  }
  return i32(x);
}

// Flat id of an invocation in a grid of (x, y) workgroups of `size` invocations.
fn flat_id(wid: vec3<u32>, nwg: vec3<u32>, lid: u32, size: u32) -> u32 {
  return (wid.y * nwg.x + wid.x) * size + lid;
}
