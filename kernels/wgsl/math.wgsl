// The math of the elementwise ops in f32, written to hold their relative precision on both tails
// (the CPU backend computes them in f64 and rounds once). WGSL's own log, tanh and erf-less
// builtins are not used where their allowed error (an absolute 2^-21 for log near 1, tanh through
// sinh/cosh, which overflow) would show: log is reduced to [sqrt(1/2), sqrt(2)) and summed as
// 2*atanh(s); tanh is a series near 0 and 1 - 2/(e^2x + 1) beyond; erfc is the Chebyshev-fitted
// formula of Numerical Recipes (fractional error below 1.2e-7 everywhere).

const LN2_HI: f32 = 0.693145751953125;
const LN2_LO: f32 = 1.42860682030941723212e-6;
const SQRT1_2: f32 = 0.70710678118654752440;
const INV_SQRT_2PI: f32 = 0.39894228040143267794;
const SQRT_2_OVER_PI: f32 = 0.79788456080286535588;
const GELU_TANH_C: f32 = 0.044715;

// 2^k for -126 <= k <= 127, exactly.
fn pow2(k: i32) -> f32 {
  return bitcast<f32>(u32(k + 127) << 23u);
}

// e^x to about 1 ulp (exp() may be off by 3 + 2|x| ulp and flush subnormal results): x = k ln 2 + r
// with |r| <= ln(2)/2 (Cody-Waite, ln 2 in two parts), e^r by its Taylor series to r^7, then
// scaled by 2^k in two exact halves so subnormal results round once.
fn exp_acc(x: f32) -> f32 {
  if (is_nan(x)) {
    return x;
  }
  if (x > 88.7228394) {
    return f32_inf();
  }
  if (x < -103.972084) {
    return 0.0;
  }
  let k = round(x * 1.44269504088896341);
  let r = (x - k * LN2_HI) - k * LN2_LO;
  let p = 1.0 + r * (1.0 + r * (0.5 + r * (0.16666666666666667 + r * (0.041666666666666667 + r * (0.0083333333333333333 +
          r * (0.0013888888888888889 + r * 0.00019841269841269841))))));
  let ki = i32(k);
  let k1 = ki / 2;
  return p * pow2(k1) * pow2(ki - k1);
}

// e^x for the row ops and attention, where x = s - max <= 0, branch-free and vectorised: the same
// reduction as exp_acc and Taylor to r^7 (within 2 ulp), 2^k applied in two halves so subnormal
// results still come out; 0 below -104 (where e^x rounds to 0), NaN stays NaN. Arguments above
// 88.7 give +inf or a large value, never NaN.
fn exp_fast4(x: vec4<f32>) -> vec4<f32> {
  let xc = clamp(x, vec4<f32>(-104.0), vec4<f32>(88.7228394));
  let k = round(xc * 1.44269504088896341);
  let r = fma(k, vec4<f32>(-LN2_LO), fma(k, vec4<f32>(-LN2_HI), xc));
  var p = fma(r, vec4<f32>(0.00019841269841269841), vec4<f32>(0.0013888888888888889));
  p = fma(r, p, vec4<f32>(0.0083333333333333333));
  p = fma(r, p, vec4<f32>(0.041666666666666667));
  p = fma(r, p, vec4<f32>(0.16666666666666667));
  p = fma(r, p, vec4<f32>(0.5));
  p = fma(r, p, vec4<f32>(1.0));
  p = fma(r, p, vec4<f32>(1.0));
  let ki = vec4<i32>(k);
  let k1 = ki >> vec4<u32>(1u);
  let s1 = bitcast<vec4<f32>>(vec4<u32>(k1 + 127) << vec4<u32>(23u));
  let s2 = bitcast<vec4<f32>>(vec4<u32>(ki - k1 + 127) << vec4<u32>(23u));
  let y = select(p * s1 * s2, vec4<f32>(0.0), x < vec4<f32>(-103.972084));
  return select(y, x, (bitcast<vec4<u32>>(x) & vec4<u32>(0x7fffffffu)) > vec4<u32>(0x7f800000u));
}

fn exp_fast(x: f32) -> f32 {
  let xc = clamp(x, -104.0, 88.7228394);
  let k = round(xc * 1.44269504088896341);
  let r = fma(k, -LN2_LO, fma(k, -LN2_HI, xc));
  var p = fma(r, 0.00019841269841269841, 0.0013888888888888889);
  p = fma(r, p, 0.0083333333333333333);
  p = fma(r, p, 0.041666666666666667);
  p = fma(r, p, 0.16666666666666667);
  p = fma(r, p, 0.5);
  p = fma(r, p, 1.0);
  p = fma(r, p, 1.0);
  let ki = i32(k);
  let k1 = ki >> 1u;
  let y = select(p * pow2(k1) * pow2(ki - k1), 0.0, x < -103.972084);
  return select(y, x, is_nan(x));
}

// Natural logarithm to about 1 ulp: x = m * 2^e with m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s).
fn log_acc(x: f32) -> f32 {
  if (is_nan(x) || x < 0.0) {
    return f32_nan();
  }
  if (x == 0.0) {
    return -f32_inf();
  }
  if (x == f32_inf()) {
    return x;
  }
  let fr = frexp(x);
  var m = fr.fract;
  var e = fr.exp;
  if (m < SQRT1_2) {
    m = m * 2.0;
    e = e - 1;
  }
  let s = (m - 1.0) / (m + 1.0);
  let z = s * s;
  let series = s * (2.0 + z * (0.66666666666666667 + z * (0.4 + z * (0.28571428571428571 + z * (0.22222222222222222 + z * 0.18181818181818182)))));
  let ef = f32(e);
  return ef * LN2_HI + (ef * LN2_LO + series);
}

// ln(1 + u) for u >= 0, exact in its rounding: the error of 1 + u is added back.
fn log1p_acc(u: f32) -> f32 {
  let w = opaque(1.0 + u);
  if (w == 1.0) {
    return u;
  }
  let c = u - opaque(w - 1.0);
  return log_acc(w) + c / w;
}

// tanh without overflow, with its relative precision near 0.
fn tanh_acc(x: f32) -> f32 {
  let a = abs(x);
  if (a < 0.55) {
    let z = x * x;
    // x - x^3/3 + 2x^5/15 - 17x^7/315 + ... (Taylor, to x^17)
    let p = -0.33333333333333333 + z * (0.13333333333333333 + z * (-0.053968253968253968 + z * (0.021869488536155203 +
            z * (-0.0088632355299021966 + z * (0.0035921280365724810 + z * (-0.0014558343870513183 + z * 0.00059002744094558598))))));
    return x + x * z * p;
  }
  if (is_nan(x)) {
    return x;
  }
  let t = 1.0 - 2.0 / (exp_acc(2.0 * a) + 1.0);
  return select(t, -t, x < 0.0);
}

fn sigmoid(x: f32) -> f32 {
  if (x >= 0.0) {
    return 1.0 / (1.0 + exp_acc(-x));
  }
  let e = exp_acc(x);
  return e / (1.0 + e);
}

// sigmoid'(x) = e^-|x| / (1 + e^-|x|)^2, with no cancellation on either tail.
fn sigmoid_slope(x: f32) -> f32 {
  let e = exp_acc(-abs(x));
  let d = 1.0 + e;
  return e / (d * d);
}

// erfc(z) for z >= 0 (Numerical Recipes' erfcc).
fn erfc_pos(z: f32) -> f32 {
  let t = 1.0 / (1.0 + 0.5 * z);
  let p = -1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 +
          t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
  return t * exp_acc(-z * z + p);
}

// The standard normal CDF, from erfc on the side where it is small.
fn normal_cdf(x: f32) -> f32 {
  let half_tail = 0.5 * erfc_pos(abs(x) * SQRT1_2);
  return select(1.0 - half_tail, half_tail, x < 0.0);
}

fn gelu(x: f32) -> f32 {
  return x * normal_cdf(x);
}

// 1 + tanh(u) = 2 sigmoid(2u): GELU's tanh form as x * sigmoid(2u), without the cancellation.
fn gelu_tanh_arg(x: f32) -> f32 {
  return 2.0 * SQRT_2_OVER_PI * (x + GELU_TANH_C * x * x * x);
}

fn gelu_tanh(x: f32) -> f32 {
  return x * sigmoid(gelu_tanh_arg(x));
}

fn silu(x: f32) -> f32 {
  return x * sigmoid(x);
}

fn softplus(x: f32) -> f32 {
  return select(0.0, x, x > 0.0) + log1p_acc(exp_acc(-abs(x)));
}

fn relu(x: f32) -> f32 {
  return select(0.0, x, x > 0.0 || is_nan(x));
}

// The fused matmul activations (MatmulActivation), by code: 1 relu, 2 gelu, 3 geluTanh, 4 silu, 5 sigmoid, 6 tanh.
fn activation(code: u32, x: f32) -> f32 {
  switch code {
    case 1u: { return relu(x); }
    case 2u: { return gelu(x); }
    case 3u: { return gelu_tanh(x); }
    case 4u: { return silu(x); }
    case 5u: { return sigmoid(x); }
    case 6u: { return tanh_acc(x); }
    default: { return x; }
  }
}
