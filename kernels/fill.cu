// Fills a buffer with one bit pattern, by element size (dtype-independent): 32-bit elements
// (f32, i32) and 16-bit elements (f16, bf16). The host passes the value's bit pattern.
#include "dtype.cuh"
#include "elementwise.cuh"

template <typename U, int W> __device__ __forceinline__ void fill_body(U* __restrict__ out, idx_t n, U value) {
  struct Regs {
    U v[W];
  };
  pack_loop<1>(
      n / W,
      [&](idx_t) {
        Regs r;
#pragma unroll
        for (int k = 0; k < W; ++k) r.v[k] = value;
        return r;
      },
      [&](idx_t i, Regs& r) { store_pack<U, W>(out + i * W, r.v); });
  pack_tail<W>(n, [&](idx_t i) { out[i] = value; });
}

// out 16-byte aligned.
extern "C" __global__ void fill32_vec(unsigned int* __restrict__ out, idx_t n, unsigned int bits) {
  fill_body<unsigned int, 4>(out, n, bits);
}
extern "C" __global__ void fill32_scalar(unsigned int* __restrict__ out, idx_t n, unsigned int bits) {
  fill_body<unsigned int, 1>(out, n, bits);
}
extern "C" __global__ void fill16_vec(unsigned short* __restrict__ out, idx_t n, unsigned int bits) {
  fill_body<unsigned short, 8>(out, n, (unsigned short)bits);
}
extern "C" __global__ void fill16_scalar(unsigned short* __restrict__ out, idx_t n, unsigned int bits) {
  fill_body<unsigned short, 1>(out, n, (unsigned short)bits);
}
