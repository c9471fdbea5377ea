// The math of every elementwise op, as functors on the compute type (float for
// f32/f16/bf16, int for i32). A module picks one with -DGC_OP=<functor name>.
// NaN and signed-zero handling follows the CPU backend: max/min and relu propagate NaN.
// i32 supports neg/abs and add/sub/mul/max/min, wrapping modulo 2^32 as the CPU backend does.
#pragma once

#define GC_SQRT1_2 0.70710678118654752440f
#define GC_INV_SQRT_2PI 0.39894228040143267794f
#define GC_SQRT_2_OVER_PI 0.79788456080286535588f
#define GC_GELU_TANH_C 0.044715f

// Host and device, so the formulas can be checked against float64 on the host.
#define GC_FN __host__ __device__ __forceinline__

// Every formula avoids cancellation on both tails (1 + erf, 1 - tanh², 1 - sigmoid), so
// tiny results keep their relative precision (they matter once rounded to f16).

// Logistic function: no e^-x overflow for very negative x.
GC_FN float gc_sigmoid(float x) {
  if (x >= 0.0f) return 1.0f / (1.0f + expf(-x));
  const float e = expf(x);
  return e / (1.0f + e);
}
// sigmoid'(x) = s(1 - s) = e^-|x| / (1 + e^-|x|)^2.
GC_FN float gc_sigmoid_slope(float x) {
  const float e = expf(-fabsf(x));
  const float d = 1.0f + e;
  return e / (d * d);
}
// Standard normal CDF Φ(x) = erfc(-x/√2) / 2.
GC_FN float gc_normal_cdf(float x) { return 0.5f * erfcf(-x * GC_SQRT1_2); }
// The tanh form of GELU is x·σ(2u) with u = √(2/π)(x + 0.044715x³), as 1 + tanh u = 2σ(2u).
GC_FN float gc_gelu_tanh_arg(float x) { return 2.0f * GC_SQRT_2_OVER_PI * (x + GC_GELU_TANH_C * x * x * x); }

// ---- unary: out = f(x); alpha is the leakyRelu slope and unused elsewhere ----

struct OpNeg {
  GC_FN float operator()(float x, float) const { return -x; }
  GC_FN int operator()(int x, float) const { return (int)(0u - (unsigned int)x); }  // wraps, as `-x | 0`
};
struct OpAbs {
  GC_FN float operator()(float x, float) const { return fabsf(x); }
  GC_FN int operator()(int x, float) const { return x < 0 ? (int)(0u - (unsigned int)x) : x; }
};
struct OpExp {
  GC_FN float operator()(float x, float) const { return expf(x); }
};
struct OpLog {
  GC_FN float operator()(float x, float) const { return logf(x); }
};
struct OpSqrt {
  GC_FN float operator()(float x, float) const { return sqrtf(x); }
};
struct OpRsqrt {
  GC_FN float operator()(float x, float) const { return rsqrtf(x); }
};
struct OpRelu {
  // As Math.max(x, 0): NaN stays NaN, -0 becomes +0.
  GC_FN float operator()(float x, float) const { return (x > 0.0f || x != x) ? x : 0.0f; }
};
struct OpLeakyRelu {
  GC_FN float operator()(float x, float alpha) const { return x > 0.0f ? x : alpha * x; }
};
// 16-bit results keep 8–11 bits, so sigmoid there may use the fast exponential and division
// (a few f32 ulps): the accurate pair makes a large f16/bf16 sigmoid compute-bound. Below −80
// (results in bf16's subnormals, where the fast exponential flushes) it takes the accurate path.
struct OpSigmoid {
  GC_FN float operator()(float x, float) const {
#if defined(__CUDA_ARCH__) && defined(GC_DTYPE) && (GC_DTYPE == GC_F16 || GC_DTYPE == GC_BF16)
    if (x > -80.0f) return __fdividef(1.0f, 1.0f + __expf(-x));
#endif
    return gc_sigmoid(x);
  }
};
struct OpTanh {
  GC_FN float operator()(float x, float) const { return tanhf(x); }
};
struct OpGelu {
  GC_FN float operator()(float x, float) const { return x * gc_normal_cdf(x); }
};
struct OpGeluTanh {
  GC_FN float operator()(float x, float) const { return x * gc_sigmoid(gc_gelu_tanh_arg(x)); }
};
struct OpSilu {
  GC_FN float operator()(float x, float) const { return x * gc_sigmoid(x); }
};
struct OpSoftplus {
  // log(1 + e^x) without overflow: max(x, 0) + log1p(e^-|x|).
  GC_FN float operator()(float x, float) const { return fmaxf(x, 0.0f) + log1pf(expf(-fabsf(x))); }
};

// ---- activation gradients: out = dy * f'(x) ----

struct OpReluGrad {
  // f'(NaN) is NaN; dy * 0 keeps the host's signed zeros and NaN for infinite dy.
  GC_FN float operator()(float x, float dy, float) const { return dy * (x > 0.0f ? 1.0f : x <= 0.0f ? 0.0f : x); }
};
struct OpLeakyReluGrad {
  GC_FN float operator()(float x, float dy, float alpha) const { return dy * (x > 0.0f ? 1.0f : x <= 0.0f ? alpha : x); }
};
struct OpSigmoidGrad {
  GC_FN float operator()(float x, float dy, float) const { return dy * gc_sigmoid_slope(x); }
};
struct OpTanhGrad {
  // 1 - tanh²(x) = 4σ'(2x)
  GC_FN float operator()(float x, float dy, float) const { return dy * (4.0f * gc_sigmoid_slope(2.0f * x)); }
};
struct OpGeluGrad {
  // Φ(x) + x·φ(x)
  GC_FN float operator()(float x, float dy, float) const {
    return dy * (gc_normal_cdf(x) + x * (GC_INV_SQRT_2PI * expf(-0.5f * x * x)));
  }
};
struct OpGeluTanhGrad {
  // d/dx x·σ(v) = σ(v) + x·σ'(v)·v', with v = 2u. Where σ'(v) underflows for a finite x (|x| past
  // ~10) the second term is 0, and must not become 0·∞ once x³ overflows f32; at ±∞ it is ∞·0 =
  // NaN, as on the CPU.
  GC_FN float operator()(float x, float dy, float) const {
    const float v = gc_gelu_tanh_arg(x);
    const float slope = gc_sigmoid_slope(v);
    const float dv = 2.0f * GC_SQRT_2_OVER_PI * (1.0f + 3.0f * GC_GELU_TANH_C * x * x);
    return dy * (gc_sigmoid(v) + (slope == 0.0f && isfinite(x) ? 0.0f : x * slope * dv));
  }
};
struct OpSiluGrad {
  // σ(x) + x·σ'(x)
  GC_FN float operator()(float x, float dy, float) const { return dy * (gc_sigmoid(x) + x * gc_sigmoid_slope(x)); }
};
struct OpSoftplusGrad {
  GC_FN float operator()(float x, float dy, float) const { return dy * gc_sigmoid(x); }
};

// ---- binary: out = f(a, b) ----

struct OpAdd {
  GC_FN float operator()(float a, float b) const { return a + b; }
  GC_FN int operator()(int a, int b) const { return (int)((unsigned int)a + (unsigned int)b); }
};
struct OpSub {
  GC_FN float operator()(float a, float b) const { return a - b; }
  GC_FN int operator()(int a, int b) const { return (int)((unsigned int)a - (unsigned int)b); }
};
struct OpMul {
  GC_FN float operator()(float a, float b) const { return a * b; }
  GC_FN int operator()(int a, int b) const { return (int)((unsigned int)a * (unsigned int)b); }
};
struct OpDiv {  // float only: the front-end refuses i32 division
  GC_FN float operator()(float a, float b) const { return a / b; }
};
struct OpMax {
  GC_FN float operator()(float a, float b) const { return (a > b || a != a) ? a : b; }
  GC_FN int operator()(int a, int b) const { return a > b ? a : b; }
};
struct OpMin {
  GC_FN float operator()(float a, float b) const { return (a < b || a != a) ? a : b; }
  GC_FN int operator()(int a, int b) const { return a < b ? a : b; }
};
