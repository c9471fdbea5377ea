// Casts between dtypes: out[i] = (DST) x[i], through f32 (or exactly, int → int).
// Specialised with -DGC_SRC=<dtype code> -DGC_DST=<dtype code>. Float → i32 truncates toward
// zero, saturating, NaN → 0; to f16/bf16 rounds to nearest even.
#include "dtype.cuh"
#include "elementwise.cuh"

typedef StorageOf<GC_SRC>::type S;
typedef StorageOf<GC_DST>::type D;

__device__ __forceinline__ D convert(S x) {
#if GC_SRC == GC_I32 && GC_DST == GC_I32
  return x;
#elif GC_SRC == GC_I32
  return from_float<D>((float)x);  // int → float rounds to nearest even
#else
  return from_float<D>(to_float(x));
#endif
}

template <int W> __device__ __forceinline__ void cast_body(const S* __restrict__ x, D* __restrict__ out, idx_t n) {
  struct Regs {
    S v[W];
  };
  pack_loop<GC_UNROLL>(
      n / W,
      [&](idx_t i) {
        Regs r;
        load_pack<S, W>(x + i * W, r.v);
        return r;
      },
      [&](idx_t i, Regs& r) {
        D o[W];
#pragma unroll
        for (int k = 0; k < W; ++k) o[k] = convert(r.v[k]);
        store_pack<D, W>(out + i * W, o);
      });
  pack_tail<W>(n, [&](idx_t i) { out[i] = convert(x[i]); });
}

// Four elements per access (8 or 16 bytes); x and out 16-byte aligned.
extern "C" __global__ void cast_vec(const S* __restrict__ x, D* __restrict__ out, idx_t n) { cast_body<4>(x, out, n); }
extern "C" __global__ void cast_scalar(const S* __restrict__ x, D* __restrict__ out, idx_t n) { cast_body<1>(x, out, n); }
