// Seeded random fill and dropout from the Philox4x32-10 stream (philox.cuh), bit-compatible
// with the CPU backend. Specialised with -DGC_DTYPE=<float dtype code>. Each thread computes
// one Philox block, i.e. the four elements 4j..4j+3, grid-stride over blocks.
// The arithmetic mirrors the CPU backend operation by operation (explicitly rounded
// intrinsics, no FMA contraction) so uniform values and dropout masks match bit for bit.
#include "dtype.cuh"
#include "elementwise.cuh"
#include "kernel_select.cuh"
#include "philox.cuh"

// Uniform in [low, low + span): low + span * u in f32, u = top 24 bits × 2^-24.
#if GC_WANT_KERNEL(random_uniform)
extern "C" __global__ void random_uniform(T* __restrict__ out, idx_t n, unsigned int seedLo, unsigned int seedHi,
                                          float low, float span) {
  const idx_t blocks = (n + 3) / 4;
  for (idx_t j = global_thread(); j < blocks; j += grid_threads()) {
    const PhiloxWords r = philox_block(j, seedLo, seedHi);
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      const idx_t i = j * 4 + w;
      if (i < n) out[i] = narrow<T>(__fadd_rn(low, __fmul_rn(span, philox_unit(r.w[w]))));
    }
  }
}
#endif

// Normal(mean, std) by Box–Muller on word pairs (0,1) and (2,3), in f64 like the host:
// z0 = sqrt(-2 ln u0') cos(2π u1'), z1 = sqrt(-2 ln u0') sin(2π u1'); out = mean + std·z.
#if GC_WANT_KERNEL(random_normal)
extern "C" __global__ void random_normal(T* __restrict__ out, idx_t n, unsigned int seedLo, unsigned int seedHi,
                                         double mean, double std) {
  const idx_t blocks = (n + 3) / 4;
  for (idx_t j = global_thread(); j < blocks; j += grid_threads()) {
    const PhiloxWords r = philox_block(j, seedLo, seedHi);
#pragma unroll
    for (int pair = 0; pair < 2; ++pair) {
      float z0, z1;
      philox_normal_pair(r, pair, mean, std, z0, z1);
      const idx_t i = j * 4 + 2 * pair;
      if (i < n) out[i] = narrow<T>(z0);
      if (i + 1 < n) out[i + 1] = narrow<T>(z1);
    }
  }
}
#endif

// Keeps x[i] scaled by `scale` when u_i >= threshold, else writes 0 (threshold = p and
// scale = 1/(1-p), both rounded to f32 by the host, as the CPU backend does).
#if GC_WANT_KERNEL(dropout)
extern "C" __global__ void dropout(const T* __restrict__ x, T* __restrict__ out, idx_t n, unsigned int seedLo,
                                   unsigned int seedHi, float threshold, float scale) {
  const idx_t blocks = (n + 3) / 4;
  for (idx_t j = global_thread(); j < blocks; j += grid_threads()) {
    const PhiloxWords r = philox_block(j, seedLo, seedHi);
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      const idx_t i = j * 4 + w;
      if (i < n) out[i] = narrow<T>(philox_unit(r.w[w]) >= threshold ? __fmul_rn(widen(x[i]), scale) : 0.0f);
    }
  }
}
#endif
