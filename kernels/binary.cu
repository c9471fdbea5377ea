// Binary elementwise ops with broadcasting: out = OP(a, b), one kernel per BroadcastPlan kind.
// Specialised with -DGC_DTYPE=<dtype code> -DGC_OP=<binary functor from ops.cuh>.
// *_vec kernels need every pointer 16-byte aligned (and, for rows, cols a multiple of the
// vector width); *_scalar kernels take any alignment.
#include "dtype.cuh"
#include "kernel_select.cuh"
#include "elementwise.cuh"
#include "ops.cuh"

template <int W> struct Pair {
  T a[W];
  T b[W];
};

template <int W> __device__ __forceinline__ void apply_store(T* out, const Pair<W>& r) {
  const GC_OP op;
  T o[W];
#pragma unroll
  for (int k = 0; k < W; ++k) o[k] = narrow<T>(op(widen(r.a[k]), widen(r.b[k])));
  store_pack<T, W>(out, o);
}

// ---- same shape ----
template <int W>
__device__ __forceinline__ void same_body(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out, idx_t n) {
  const GC_OP op;
  pack_loop<GC_UNROLL>(
      n / W,
      [&](idx_t i) {
        Pair<W> r;
        load_pack<T, W>(a + i * W, r.a);
        load_pack<T, W>(b + i * W, r.b);
        return r;
      },
      [&](idx_t i, Pair<W>& r) { apply_store<W>(out + i * W, r); });
  pack_tail<W>(n, [&](idx_t i) { out[i] = narrow<T>(op(widen(a[i]), widen(b[i]))); });
}

#if GC_WANT_KERNEL(binary_same_vec)
extern "C" __global__ void binary_same_vec(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out, idx_t n) {
  same_body<VecWidth<T>::value>(a, b, out, n);
}
#endif
#if GC_WANT_KERNEL(binary_same_scalar)
extern "C" __global__ void binary_same_scalar(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                                              idx_t n) {
  same_body<1>(a, b, out, n);
}
#endif

// ---- one side is a single value (B_SCALAR: b is; otherwise a is) ----
// The value comes either from a one-element tensor (binary_scalar_*) or as the kernel argument
// `s` in the compute type (binary_imm_*: a JS number operand, already rounded to the dtype).
template <int W, bool B_SCALAR>
__device__ __forceinline__ void scalar_body(const T* __restrict__ full, const C s, T* __restrict__ out, idx_t n) {
  const GC_OP op;
  struct Regs {
    T v[W];
  };
  pack_loop<GC_UNROLL>(
      n / W,
      [&](idx_t i) {
        Regs r;
        load_pack<T, W>(full + i * W, r.v);
        return r;
      },
      [&](idx_t i, Regs& r) {
        T o[W];
#pragma unroll
        for (int k = 0; k < W; ++k) o[k] = narrow<T>(B_SCALAR ? op(widen(r.v[k]), s) : op(s, widen(r.v[k])));
        store_pack<T, W>(out + i * W, o);
      });
  pack_tail<W>(n, [&](idx_t i) { out[i] = narrow<T>(B_SCALAR ? op(widen(full[i]), s) : op(s, widen(full[i]))); });
}

#if GC_WANT_KERNEL(binary_scalar_b_vec)
extern "C" __global__ void binary_scalar_b_vec(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                                               idx_t n) {
  scalar_body<VecWidth<T>::value, true>(a, widen(b[0]), out, n);
}
#endif
#if GC_WANT_KERNEL(binary_scalar_b_scalar)
extern "C" __global__ void binary_scalar_b_scalar(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                                                  idx_t n) {
  scalar_body<1, true>(a, widen(b[0]), out, n);
}
#endif
#if GC_WANT_KERNEL(binary_scalar_a_vec)
extern "C" __global__ void binary_scalar_a_vec(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                                               idx_t n) {
  scalar_body<VecWidth<T>::value, false>(b, widen(a[0]), out, n);
}
#endif
#if GC_WANT_KERNEL(binary_scalar_a_scalar)
extern "C" __global__ void binary_scalar_a_scalar(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                                                  idx_t n) {
  scalar_body<1, false>(b, widen(a[0]), out, n);
}
#endif
#if GC_WANT_KERNEL(binary_imm_b_vec)
extern "C" __global__ void binary_imm_b_vec(const T* __restrict__ x, const C s, T* __restrict__ out, idx_t n) {
  scalar_body<VecWidth<T>::value, true>(x, s, out, n);
}
#endif
#if GC_WANT_KERNEL(binary_imm_b_scalar)
extern "C" __global__ void binary_imm_b_scalar(const T* __restrict__ x, const C s, T* __restrict__ out, idx_t n) {
  scalar_body<1, true>(x, s, out, n);
}
#endif
#if GC_WANT_KERNEL(binary_imm_a_vec)
extern "C" __global__ void binary_imm_a_vec(const T* __restrict__ x, const C s, T* __restrict__ out, idx_t n) {
  scalar_body<VecWidth<T>::value, false>(x, s, out, n);
}
#endif
#if GC_WANT_KERNEL(binary_imm_a_scalar)
extern "C" __global__ void binary_imm_a_scalar(const T* __restrict__ x, const C s, T* __restrict__ out, idx_t n) {
  scalar_body<1, false>(x, s, out, n);
}
#endif

// ---- one side is a row [cols] repeated over [rows, cols] (B_ROW: b is the row) ----
// The column advances by a fixed step per grid-stride iteration, so only the first needs a division.
template <int W, bool B_ROW>
__device__ __forceinline__ void row_body(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out, idx_t n,
                                         unsigned int cols) {
  const GC_OP op;
  const T* __restrict__ full = B_ROW ? a : b;
  const T* __restrict__ row = B_ROW ? b : a;
  const unsigned int colPacks = cols / W;
  const idx_t npacks = n / W;
  const idx_t stride = grid_threads();
  const unsigned int step = (unsigned int)(stride % colPacks);
  idx_t i = global_thread();
  unsigned int c = (unsigned int)(i % colPacks);
  for (; i < npacks; i += stride) {
    Pair<W> r;
    load_pack<T, W>(full + i * W, r.a);
    load_pack<T, W>(row + (idx_t)c * W, r.b);
    T o[W];
#pragma unroll
    for (int k = 0; k < W; ++k) o[k] = narrow<T>(B_ROW ? op(widen(r.a[k]), widen(r.b[k])) : op(widen(r.b[k]), widen(r.a[k])));
    store_pack<T, W>(out + i * W, o);
    c += step;
    if (c >= colPacks) c -= colPacks;
  }
}

// Rows of any length over 16-byte aligned full-size operands: the full side and the output move
// in 16-byte packs and the row is read element by element, its column wrapping within a pack.
template <bool B_ROW>
__device__ __forceinline__ void row_wrap_body(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                                              idx_t n, unsigned int cols) {
  constexpr int W = VecWidth<T>::value;
  const GC_OP op;
  const T* __restrict__ full = B_ROW ? a : b;
  const T* __restrict__ row = B_ROW ? b : a;
  const idx_t npacks = n / W;
  const idx_t stride = grid_threads();
  const unsigned int step = (unsigned int)((stride * W) % cols);
  idx_t i = global_thread();
  unsigned int c = (unsigned int)((i * W) % cols);
  for (; i < npacks; i += stride) {
    T f[W], o[W];
    load_pack<T, W>(full + i * W, f);
#pragma unroll
    for (int k = 0; k < W; ++k) {
      unsigned int cc = c + k;
      if (cc >= cols) cc %= cols;
      o[k] = narrow<T>(B_ROW ? op(widen(f[k]), widen(row[cc])) : op(widen(row[cc]), widen(f[k])));
    }
    store_pack<T, W>(out + i * W, o);
    c += step;
    if (c >= cols) c -= cols;
  }
  pack_tail<W>(n, [&](idx_t e) {
    const unsigned int cc = (unsigned int)(e % cols);
    out[e] = narrow<T>(B_ROW ? op(widen(full[e]), widen(row[cc])) : op(widen(row[cc]), widen(full[e])));
  });
}

#if GC_WANT_KERNEL(binary_row_b_wrap)
extern "C" __global__ void binary_row_b_wrap(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                                             idx_t n, unsigned int cols) {
  row_wrap_body<true>(a, b, out, n, cols);
}
#endif
#if GC_WANT_KERNEL(binary_row_a_wrap)
extern "C" __global__ void binary_row_a_wrap(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                                             idx_t n, unsigned int cols) {
  row_wrap_body<false>(a, b, out, n, cols);
}
#endif

// cols % (16 / sizeof(T)) == 0 and every pointer 16-byte aligned.
#if GC_WANT_KERNEL(binary_row_b_vec)
extern "C" __global__ void binary_row_b_vec(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out, idx_t n,
                                            unsigned int cols) {
  row_body<VecWidth<T>::value, true>(a, b, out, n, cols);
}
#endif
#if GC_WANT_KERNEL(binary_row_b_scalar)
extern "C" __global__ void binary_row_b_scalar(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                                               idx_t n, unsigned int cols) {
  row_body<1, true>(a, b, out, n, cols);
}
#endif
#if GC_WANT_KERNEL(binary_row_a_vec)
extern "C" __global__ void binary_row_a_vec(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out, idx_t n,
                                            unsigned int cols) {
  row_body<VecWidth<T>::value, false>(a, b, out, n, cols);
}
#endif
#if GC_WANT_KERNEL(binary_row_a_scalar)
extern "C" __global__ void binary_row_a_scalar(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                                               idx_t n, unsigned int cols) {
  row_body<1, false>(a, b, out, n, cols);
}
#endif

// ---- general strided broadcast, rank padded to 6 (leading dims of size 1) ----
// I is the index type: 32-bit when every index is below 2^31, where each division by a dim is a
// multiply-high, an add and a shift with the host's magic numbers (launch-plans.ts: fastDivisor;
// exact below 2^31); the 64-bit kernels divide.
template <typename I>
__device__ __forceinline__ I divide_by_dim(I n, const I (&dims)[6], const unsigned int (&magic)[6],
                                           const unsigned int (&shift)[6], int d) {
  if constexpr (sizeof(I) == 4) {
    return (__umulhi(n, magic[d]) + n) >> shift[d];
  } else {
    return n / dims[d];
  }
}

// Offsets in a and b of output element i, and i's coordinates along the last two dims.
template <typename I>
__device__ __forceinline__ void general_offsets(I i, const I (&dims)[6], const unsigned int (&magic)[6],
                                                const unsigned int (&shift)[6], const I (&as)[6], const I (&bs)[6],
                                                I& offA, I& offB, I& last, I& second) {
  I rem = i;
  offA = 0;
  offB = 0;
#pragma unroll
  for (int d = 5; d > 0; --d) {
    const I q = divide_by_dim(rem, dims, magic, shift, d);
    const I coord = rem - q * dims[d];
    if (d == 5) last = coord;
    if (d == 4) second = coord;
    offA += coord * as[d];
    offB += coord * bs[d];
    rem = q;
  }
  offA += rem * as[0];
  offB += rem * bs[0];
}

// 64-bit: one output per thread and pass, each indexed from scratch.
__device__ __forceinline__ void general_body64(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                                               idx_t n, const idx_t (&dims)[6], const idx_t (&as)[6],
                                               const idx_t (&bs)[6]) {
  const GC_OP op;
  const unsigned int unused[6] = {};
  const idx_t stride = (idx_t)gridDim.x * blockDim.x;
  for (idx_t i = (idx_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    idx_t offA, offB, last, second;
    general_offsets(i, dims, unused, unused, as, bs, offA, offB, last, second);
    out[i] = narrow<T>(op(widen(a[offA]), widen(b[offB])));
  }
}

// 32-bit: GC_GENERAL_RUN consecutive outputs per thread and pass, indexed once and then stepped
// along the last dim, carrying into the one before (indexed again only where that one ends too),
// stored as one vector access where the output is aligned for it.
#define GC_GENERAL_RUN 4
__device__ __forceinline__ void general_body32(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                                               unsigned int n, const unsigned int (&dims)[6],
                                               const unsigned int (&magic)[6], const unsigned int (&shift)[6],
                                               const unsigned int (&as)[6], const unsigned int (&bs)[6]) {
  typedef unsigned int I;
  const GC_OP op;
  const bool vector_store = (reinterpret_cast<size_t>(out) % (GC_GENERAL_RUN * sizeof(T))) == 0;
  // Moving from the end of a last-dim row to the start of the next.
  const I carryA = as[4] - dims[5] * as[5], carryB = bs[4] - dims[5] * bs[5];
  const I runs = (n + GC_GENERAL_RUN - 1) / GC_GENERAL_RUN;
  const I stride = gridDim.x * blockDim.x;
  for (I r = blockIdx.x * blockDim.x + threadIdx.x; r < runs; r += stride) {
    const I i0 = r * GC_GENERAL_RUN;
    I offA, offB, last, second;
    general_offsets(i0, dims, magic, shift, as, bs, offA, offB, last, second);
    T v[GC_GENERAL_RUN];
#pragma unroll
    for (int k = 0; k < GC_GENERAL_RUN; ++k) {
      if (k > 0) {
        offA += as[5];
        offB += bs[5];
        if (++last == dims[5]) {
          last = 0;
          offA += carryA;
          offB += carryB;
          if (++second == dims[4]) general_offsets(i0 + k, dims, magic, shift, as, bs, offA, offB, last, second);
        }
      }
      if (i0 + k < n) v[k] = narrow<T>(op(widen(a[offA]), widen(b[offB])));
    }
    if (vector_store && i0 + GC_GENERAL_RUN <= n) {
      store_pack<T, GC_GENERAL_RUN>(out + i0, v);
    } else {
#pragma unroll
      for (int k = 0; k < GC_GENERAL_RUN; ++k) {
        if (i0 + k < n) out[i0 + k] = v[k];
      }
    }
  }
}

// The 32-bit kernels' parameters after the count: dims, their magic numbers and shifts, then
// the strides of a and of b.
#define GC_GENERAL32_PARAMS                                                                            \
  unsigned int d0, unsigned int d1, unsigned int d2, unsigned int d3, unsigned int d4, unsigned int d5, \
      unsigned int m0, unsigned int m1, unsigned int m2, unsigned int m3, unsigned int m4, unsigned int m5, \
      unsigned int s0, unsigned int s1, unsigned int s2, unsigned int s3, unsigned int s4, unsigned int s5, \
      unsigned int a0, unsigned int a1, unsigned int a2, unsigned int a3, unsigned int a4, unsigned int a5, \
      unsigned int b0, unsigned int b1, unsigned int b2, unsigned int b3, unsigned int b4, unsigned int b5
#define GC_GENERAL32_ARRAYS                                      \
  const unsigned int dims[6] = {d0, d1, d2, d3, d4, d5};        \
  const unsigned int magic[6] = {m0, m1, m2, m3, m4, m5};       \
  const unsigned int shift[6] = {s0, s1, s2, s3, s4, s5};       \
  const unsigned int as[6] = {a0, a1, a2, a3, a4, a5};          \
  const unsigned int bs[6] = {b0, b1, b2, b3, b4, b5};

#if GC_WANT_KERNEL(binary_general32)
extern "C" __global__ void binary_general32(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                                            unsigned int n, GC_GENERAL32_PARAMS) {
  GC_GENERAL32_ARRAYS
  general_body32(a, b, out, n, dims, magic, shift, as, bs);
}
#endif

#if GC_WANT_KERNEL(binary_general64)
extern "C" __global__ void binary_general64(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out, idx_t n,
                                            idx_t d0, idx_t d1, idx_t d2, idx_t d3, idx_t d4, idx_t d5, idx_t a0, idx_t a1,
                                            idx_t a2, idx_t a3, idx_t a4, idx_t a5, idx_t b0, idx_t b1, idx_t b2, idx_t b3,
                                            idx_t b4, idx_t b5) {
  const idx_t dims[6] = {d0, d1, d2, d3, d4, d5};
  const idx_t as[6] = {a0, a1, a2, a3, a4, a5};
  const idx_t bs[6] = {b0, b1, b2, b3, b4, b5};
  general_body64(a, b, out, n, dims, as, bs);
}
#endif

// ---- general broadcast with a long last dim: rows of the output, indexed once per row ----
// dims/strides as binary_general*; the last dim (d5, strides a5 and b5 of 0 or 1) is the row.
// grid (column chunks of 4 x block, rows capped at 65535 and strided): the division chain runs
// per row, not per element, and every row is read and written with coalesced accesses.
template <typename I>
__device__ __forceinline__ void general_rows_body(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                                                  I rows, const I (&dims)[6], const unsigned int (&magic)[6],
                                                  const unsigned int (&shift)[6], const I (&as)[6], const I (&bs)[6]) {
  const GC_OP op;
  const I cols = dims[5], sa = as[5], sb = bs[5];
  const I step = (I)blockDim.x, chunk = 4 * step;
  for (I r = blockIdx.y; r < rows; r += gridDim.y) {
    I rem = r, offA = 0, offB = 0;
#pragma unroll
    for (int d = 4; d > 0; --d) {
      const I q = divide_by_dim(rem, dims, magic, shift, d);
      const I coord = rem - q * dims[d];
      offA += coord * as[d];
      offB += coord * bs[d];
      rem = q;
    }
    offA += rem * as[0];
    offB += rem * bs[0];
    const T* ar = a + offA;
    const T* br = b + offB;
    T* orow = out + (idx_t)r * cols;
    for (I c = (I)blockIdx.x * chunk + threadIdx.x; c < cols; c += (I)gridDim.x * chunk) {
      T va[4], vb[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const I cc = c + u * step;
        if (cc < cols) {
          va[u] = ar[cc * sa];
          vb[u] = br[cc * sb];
        }
      }
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const I cc = c + u * step;
        if (cc < cols) orow[cc] = narrow<T>(op(widen(va[u]), widen(vb[u])));
      }
    }
  }
}

#if GC_WANT_KERNEL(binary_general_rows32)
extern "C" __global__ void binary_general_rows32(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                                                 unsigned int rows, GC_GENERAL32_PARAMS) {
  GC_GENERAL32_ARRAYS
  general_rows_body<unsigned int>(a, b, out, rows, dims, magic, shift, as, bs);
}
#endif

#if GC_WANT_KERNEL(binary_general_rows64)
extern "C" __global__ void binary_general_rows64(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                                                 idx_t rows, idx_t d0, idx_t d1, idx_t d2, idx_t d3, idx_t d4, idx_t d5,
                                                 idx_t a0, idx_t a1, idx_t a2, idx_t a3, idx_t a4, idx_t a5, idx_t b0,
                                                 idx_t b1, idx_t b2, idx_t b3, idx_t b4, idx_t b5) {
  const idx_t dims[6] = {d0, d1, d2, d3, d4, d5};
  const idx_t as[6] = {a0, a1, a2, a3, a4, a5};
  const idx_t bs[6] = {b0, b1, b2, b3, b4, b5};
  const unsigned int unused[6] = {};
  general_rows_body<idx_t>(a, b, out, rows, dims, unused, unused, as, bs);
}
#endif
