// Swaps the last two dims of a [batch, rows, cols] tensor: out[b][c][r] = x[b][r][c].
// Moves raw element bits, so it is specialised by element size only:
// -DGC_DTYPE=GC_F32 serves f32 and i32, -DGC_DTYPE=GC_F16 serves f16 and bf16.
// 32x32 tiles staged through shared memory so both the reads and the writes are coalesced;
// the tile row is padded by one element so the column reads hit 32 different banks. Narrow
// matrices (a few rows or columns) take one thread per output element instead.
#include "dtype.cuh"

#define GC_TILE 32
#define GC_TILE_ROWS 8

// grid (ceil(cols/32), min(ceil(rows/32), 65535), min(batch, 65535)), block (32, 8); row tiles
// and batches beyond the grid's y and z are covered by striding.
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

// One thread per output element, writes coalesced; for a matrix with a few columns (or rows) a
// warp's reads fall in a few cache lines, which the neighbouring outputs' loads reuse.
extern "C" __global__ void __launch_bounds__(256)
    transpose_narrow(const T* __restrict__ x, T* __restrict__ out, unsigned int batch, unsigned int rows,
                     unsigned int cols) {
  const idx_t matrix = (idx_t)rows * cols;
  const idx_t n = matrix * batch;
  for (idx_t o = (idx_t)blockIdx.x * blockDim.x + threadIdx.x; o < n; o += (idx_t)gridDim.x * blockDim.x) {
    const idx_t b = o / matrix, within = o - b * matrix;
    const idx_t c = within / rows, r = within - c * rows;
    out[o] = x[b * matrix + r * cols + c];
  }
}
