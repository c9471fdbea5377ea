// The matmul epilogue as a separate pass, for products computed by cuBLAS:
//   out = act(out + beta · C + bias[col])
// where out already holds alpha·op(A)·op(B) for `batch` row-major m × n matrices stored back to
// back, C (or null) advances c_batch_stride elements per batch entry (0 repeats it), and bias
// (or null) is a row vector of n. Grid-stride over every element. Define GC_DTYPE.
#include "matmul_epilogue.cuh"

extern "C" __global__ void matmul_epilogue(T* __restrict__ out, const T* __restrict__ c, const T* __restrict__ bias,
                                           unsigned long long total, int m, int n, long long c_batch_stride,
                                           float beta, int act) {
  const idx_t stride = (idx_t)gridDim.x * blockDim.x;
  for (idx_t i = (idx_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
    const idx_t col = i % n;
    const idx_t row_all = i / n;
    float v = to_float(out[i]);
    if (c) v += beta * to_float(c[(row_all / m) * c_batch_stride + (row_all % m) * n + col]);
    if (bias) v += to_float(bias[col]);
    out[i] = from_float<T>(gc_activate(v, act));
  }
}
