// Swaps the last two dims of a [batch, rows, cols] tensor: out[b][c][r] = x[b][r][c].
// Moves raw element bits, so it is specialised by element size only:
// -DGC_DTYPE=GC_F32 serves f32 and i32, -DGC_DTYPE=GC_F16 serves f16 and bf16.
// 32x32 tiles staged through shared memory so both the reads and the writes are coalesced;
// the tile row is padded by one element so the column reads hit 32 different banks. Narrow
// matrices (at most 8 rows or columns) skip the tiles, which would be mostly empty: each thread
// moves W rows (or columns) whole through registers, with 16-byte accesses where the long dim is
// a multiple of the vector width W.
#include "dtype.cuh"
#include "kernel_select.cuh"

#define GC_TILE 32
#define GC_TILE_ROWS 8
// The most rows or columns a narrow matrix has (launch-plans.ts: NARROW_TRANSPOSE).
#define GC_NARROW 8

// grid (ceil(cols/32), min(ceil(rows/32), 65535), min(batch, 65535)), block (32, 8); row tiles
// and batches beyond the grid's y and z are covered by striding.
#if GC_WANT_KERNEL(transpose_tiled)
extern "C" __global__ void __launch_bounds__(GC_TILE* GC_TILE_ROWS)
    transpose_tiled(const T* __restrict__ x, T* __restrict__ out, unsigned int batch, unsigned int rows,
                    unsigned int cols) {
  __shared__ T tile[GC_TILE][GC_TILE + 1];
  const unsigned int c0 = blockIdx.x * GC_TILE;
  const idx_t matrix = (idx_t)rows * cols;
  for (unsigned int b = blockIdx.z; b < batch; b += gridDim.z) {
    const T* src = x + b * matrix;
    T* dst = out + b * matrix;
    for (unsigned int r0 = blockIdx.y * GC_TILE; r0 < rows; r0 += gridDim.y * GC_TILE) {
#pragma unroll
      for (int i = threadIdx.y; i < GC_TILE; i += GC_TILE_ROWS) {
        const unsigned int r = r0 + i, c = c0 + threadIdx.x;
        if (r < rows && c < cols) tile[i][threadIdx.x] = src[(idx_t)r * cols + c];
      }
      __syncthreads();
#pragma unroll
      for (int i = threadIdx.y; i < GC_TILE; i += GC_TILE_ROWS) {
        const unsigned int c = c0 + i, r = r0 + threadIdx.x;
        if (c < cols && r < rows) dst[(idx_t)c * rows + r] = tile[threadIdx.x][i];
      }
      __syncthreads();
    }
  }
}
#endif

template <int W> struct Pack {
  T e[W];
};

// Element k of the N packs p, read as one flat array (k known at compile time once unrolled).
#define GC_FLAT(p, k) p[(k) / W].e[(k) % W]

// Grid-stride over the groups of W long-dim indices of every matrix: calls f(b, i0) with the
// matrix b and the group's first index i0. The group count fits 32 bits (the host checks).
template <typename F>
__device__ __forceinline__ void for_each_group(unsigned int batch, unsigned int groups_per_matrix, F f) {
  const unsigned int total = batch * groups_per_matrix;
  for (unsigned int g = blockIdx.x * blockDim.x + threadIdx.x; g < total; g += gridDim.x * blockDim.x) {
    const unsigned int b = g / groups_per_matrix;
    f(b, g - b * groups_per_matrix);
  }
}

// NC (≤ 8) columns: a thread takes W rows r0.. of matrix b, reads their W·NC contiguous elements
// and writes W contiguous elements to each of the NC output rows. W > 1 needs rows % W == 0.
template <int NC, int W>
__device__ __forceinline__ void narrow_cols(const T* __restrict__ x, T* __restrict__ out, unsigned int batch,
                                           unsigned int rows) {
  for_each_group(batch, rows / W, [&](unsigned int b, unsigned int group) {
    const idx_t r0 = (idx_t)group * W;
    const T* src = x + ((idx_t)b * rows + r0) * NC;
    T* dst = out + (idx_t)b * rows * NC + r0;
    Pack<W> in[NC];
#pragma unroll
    for (int k = 0; k < NC; ++k) load_pack<T, W>(src + k * W, in[k].e);
#pragma unroll
    for (int j = 0; j < NC; ++j) {
      Pack<W> o;
#pragma unroll
      for (int i = 0; i < W; ++i) o.e[i] = GC_FLAT(in, i * NC + j);
      store_pack<T, W>(dst + (idx_t)j * rows, o.e);
    }
  });
}

// NR (≤ 8) rows: a thread takes W columns c0.. of matrix b, reads W elements of each of the NR
// input rows and writes their W·NR contiguous outputs. W > 1 needs cols % W == 0.
template <int NR, int W>
__device__ __forceinline__ void narrow_rows(const T* __restrict__ x, T* __restrict__ out, unsigned int batch,
                                           unsigned int cols) {
  for_each_group(batch, cols / W, [&](unsigned int b, unsigned int group) {
    const idx_t c0 = (idx_t)group * W;
    const T* src = x + (idx_t)b * NR * cols + c0;
    T* dst = out + ((idx_t)b * cols + c0) * NR;
    Pack<W> in[NR];
#pragma unroll
    for (int r = 0; r < NR; ++r) load_pack<T, W>(src + (idx_t)r * cols, in[r].e);
    Pack<W> o[NR];
#pragma unroll
    for (int i = 0; i < W; ++i) {
#pragma unroll
      for (int r = 0; r < NR; ++r) GC_FLAT(o, i * NR + r) = in[r].e[i];
    }
#pragma unroll
    for (int k = 0; k < NR; ++k) store_pack<T, W>(dst + k * W, o[k].e);
  });
}

// The narrow dim's size picks the unrolled body; the host sends only 1..GC_NARROW.
#define GC_NARROW_SWITCH(BODY, W, n, ...) \
  switch (n) {                            \
    case 1: BODY<1, W>(__VA_ARGS__); break; \
    case 2: BODY<2, W>(__VA_ARGS__); break; \
    case 3: BODY<3, W>(__VA_ARGS__); break; \
    case 4: BODY<4, W>(__VA_ARGS__); break; \
    case 5: BODY<5, W>(__VA_ARGS__); break; \
    case 6: BODY<6, W>(__VA_ARGS__); break; \
    case 7: BODY<7, W>(__VA_ARGS__); break; \
    case 8: BODY<8, W>(__VA_ARGS__); break; \
  }

// grid-stride, 1-D: cols ≤ 8; the _vec kernel needs 16-byte aligned tensors and rows % W == 0.
#if GC_WANT_KERNEL(transpose_narrow_cols_vec)
extern "C" __global__ void __launch_bounds__(256)
    transpose_narrow_cols_vec(const T* __restrict__ x, T* __restrict__ out, unsigned int batch, unsigned int rows,
                              unsigned int cols) {
  GC_NARROW_SWITCH(narrow_cols, VecWidth<T>::value, cols, x, out, batch, rows)
}
#endif
#if GC_WANT_KERNEL(transpose_narrow_cols_scalar)
extern "C" __global__ void __launch_bounds__(256)
    transpose_narrow_cols_scalar(const T* __restrict__ x, T* __restrict__ out, unsigned int batch, unsigned int rows,
                                 unsigned int cols) {
  GC_NARROW_SWITCH(narrow_cols, 1, cols, x, out, batch, rows)
}
#endif

// grid-stride, 1-D: rows ≤ 8; the _vec kernel needs 16-byte aligned tensors and cols % W == 0.
#if GC_WANT_KERNEL(transpose_narrow_rows_vec)
extern "C" __global__ void __launch_bounds__(256)
    transpose_narrow_rows_vec(const T* __restrict__ x, T* __restrict__ out, unsigned int batch, unsigned int rows,
                              unsigned int cols) {
  GC_NARROW_SWITCH(narrow_rows, VecWidth<T>::value, rows, x, out, batch, cols)
}
#endif
#if GC_WANT_KERNEL(transpose_narrow_rows_scalar)
extern "C" __global__ void __launch_bounds__(256)
    transpose_narrow_rows_scalar(const T* __restrict__ x, T* __restrict__ out, unsigned int batch, unsigned int rows,
                                 unsigned int cols) {
  GC_NARROW_SWITCH(narrow_rows, 1, rows, x, out, batch, cols)
}
#endif
