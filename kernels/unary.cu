// Unary elementwise ops and activations: out[i] = OP(x[i], alpha).
// Specialised with -DGC_DTYPE=<dtype code> -DGC_OP=<functor from ops.cuh>.
#include "dtype.cuh"
#include "elementwise.cuh"
#include "kernel_select.cuh"
#include "ops.cuh"

template <int W>
__device__ __forceinline__ void unary_body(const T* __restrict__ x, T* __restrict__ out, idx_t n, float alpha) {
  const GC_OP op;
  struct Regs {
    T v[W];
  };
  pack_loop<GC_UNROLL>(
      n / W,
      [&](idx_t i) {
        Regs r;
        load_pack<T, W>(x + i * W, r.v);
        return r;
      },
      [&](idx_t i, Regs& r) {
#pragma unroll
        for (int k = 0; k < W; ++k) r.v[k] = narrow<T>(op(widen(r.v[k]), alpha));
        store_pack<T, W>(out + i * W, r.v);
      });
  pack_tail<W>(n, [&](idx_t i) { out[i] = narrow<T>(op(widen(x[i]), alpha)); });
}

// x and out 16-byte aligned.
#if GC_WANT_KERNEL(unary_vec)
extern "C" __global__ void unary_vec(const T* __restrict__ x, T* __restrict__ out, idx_t n, float alpha) {
  unary_body<VecWidth<T>::value>(x, out, n, alpha);
}
#endif

#if GC_WANT_KERNEL(unary_scalar)
extern "C" __global__ void unary_scalar(const T* __restrict__ x, T* __restrict__ out, idx_t n, float alpha) {
  unary_body<1>(x, out, n, alpha);
}
#endif
