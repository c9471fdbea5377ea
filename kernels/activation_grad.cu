// Activation gradients for backprop: out[i] = dy[i] * f'(x[i]).
// Specialised with -DGC_DTYPE=<float dtype code> -DGC_OP=<gradient functor from ops.cuh>.
#include "dtype.cuh"
#include "elementwise.cuh"
#include "kernel_select.cuh"
#include "ops.cuh"

template <int W>
__device__ __forceinline__ void grad_body(const T* __restrict__ x, const T* __restrict__ dy, T* __restrict__ out, idx_t n,
                                          float alpha) {
  const GC_OP op;
  struct Regs {
    T x[W];
    T dy[W];
  };
  pack_loop<GC_UNROLL>(
      n / W,
      [&](idx_t i) {
        Regs r;
        load_pack<T, W>(x + i * W, r.x);
        load_pack<T, W>(dy + i * W, r.dy);
        return r;
      },
      [&](idx_t i, Regs& r) {
#pragma unroll
        for (int k = 0; k < W; ++k) r.x[k] = narrow<T>(op(widen(r.x[k]), widen(r.dy[k]), alpha));
        store_pack<T, W>(out + i * W, r.x);
      });
  pack_tail<W>(n, [&](idx_t i) { out[i] = narrow<T>(op(widen(x[i]), widen(dy[i]), alpha)); });
}

// x, dy and out 16-byte aligned.
#if GC_WANT_KERNEL(grad_vec)
extern "C" __global__ void grad_vec(const T* __restrict__ x, const T* __restrict__ dy, T* __restrict__ out, idx_t n,
                                    float alpha) {
  grad_body<VecWidth<T>::value>(x, dy, out, n, alpha);
}
#endif

#if GC_WANT_KERNEL(grad_scalar)
extern "C" __global__ void grad_scalar(const T* __restrict__ x, const T* __restrict__ dy, T* __restrict__ out, idx_t n,
                                       float alpha) {
  grad_body<1>(x, dy, out, n, alpha);
}
#endif
