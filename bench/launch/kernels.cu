// Kernels of the launch benchmark. The TypeScript bench compiles this file with
// NVRTC and hands the same CUBIN to the C program; CuPy compiles the same source.

// No arguments, no work: the launch's host cost alone.
extern "C" __global__ void empty_kernel() {}

// Four arguments (ptr, ptr, ptr, u32): the host cost with argument packing.
extern "C" __global__ void vector_add(const float *a, const float *b, float *c, unsigned int n) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
