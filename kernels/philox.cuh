// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11),
// the counter-based generator behind GpuCompute's seeded randomness. The host backend
// implements the same spec, so both give the same bits:
//   key = (seed low 32, seed high 32); counter = (index/4 low 32, index/4 high 32, 0, 0);
//   element `index` uses output word index % 4.
// The generator is written for host and device so it can be checked against the published test vectors.
#pragma once

#define GC_PHILOX_M0 0xD2511F53u
#define GC_PHILOX_M1 0xCD9E8D57u
#define GC_PHILOX_W0 0x9E3779B9u
#define GC_PHILOX_W1 0xBB67AE85u

struct PhiloxWords {
  unsigned int w[4];
};

__host__ __device__ __forceinline__ void philox_mulhilo(unsigned int a, unsigned int b, unsigned int& hi, unsigned int& lo) {
  const unsigned long long p = (unsigned long long)a * b;
  hi = (unsigned int)(p >> 32);
  lo = (unsigned int)p;
}

// Ten rounds over counter (c0..c3) with key (k0, k1).
__host__ __device__ __forceinline__ PhiloxWords philox4x32_10(unsigned int c0, unsigned int c1, unsigned int c2,
                                                              unsigned int c3, unsigned int k0, unsigned int k1) {
#pragma unroll
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += GC_PHILOX_W0;
      k1 += GC_PHILOX_W1;
    }
    unsigned int hi0, lo0, hi1, lo1;
    philox_mulhilo(GC_PHILOX_M0, c0, hi0, lo0);
    philox_mulhilo(GC_PHILOX_M1, c2, hi1, lo1);
    const unsigned int n0 = hi1 ^ c1 ^ k0;
    const unsigned int n2 = hi0 ^ c3 ^ k1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
  }
  PhiloxWords r;
  r.w[0] = c0;
  r.w[1] = c1;
  r.w[2] = c2;
  r.w[3] = c3;
  return r;
}

// The block of four words that holds element `index`'s randomness.
__host__ __device__ __forceinline__ PhiloxWords philox_block(unsigned long long block, unsigned int seedLo,
                                                             unsigned int seedHi) {
  return philox4x32_10((unsigned int)block, (unsigned int)(block >> 32), 0u, 0u, seedLo, seedHi);
}

// u32 → [0, 1): the top 24 bits × 2^-24 (exact in f32).
__host__ __device__ __forceinline__ float philox_unit(unsigned int u) { return (float)(u >> 8) * 5.9604644775390625e-8f; }

// u32 → (0, 1): (top 24 bits + 0.5) × 2^-24, never 0, for the logarithm of Box–Muller.
__host__ __device__ __forceinline__ double philox_unit_open(unsigned int u) {
  return ((double)(u >> 8) + 0.5) * 5.9604644775390625e-8;
}

// Element index·4 + pair·2 (z0) and + 1 (z1) of a Normal(mean, std) stream, by Box–Muller on the
// block's word pair (2·pair, 2·pair + 1) in f64 like the host: z0 = sqrt(-2 ln u0') cos(2π u1'),
// z1 = sqrt(-2 ln u0') sin(2π u1'); value = mean + std·z, rounded to f32.
__device__ __forceinline__ void philox_normal_pair(const PhiloxWords& r, int pair, double mean, double std, float& z0, float& z1) {
  const double twoPi = 6.283185307179586;
  const double radius = sqrt(__dmul_rn(-2.0, log(philox_unit_open(r.w[2 * pair]))));
  const double angle = __dmul_rn(twoPi, philox_unit_open(r.w[2 * pair + 1]));
  double s, c;
  sincos(angle, &s, &c);
  z0 = __double2float_rn(__dadd_rn(mean, __dmul_rn(std, __dmul_rn(radius, c))));
  z1 = __double2float_rn(__dadd_rn(mean, __dmul_rn(std, __dmul_rn(radius, s))));
}
