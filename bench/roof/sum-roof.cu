// Where a full f32 sum loses time against the copy roof, in CUDA C++ without the library:
// cuMemcpyDtoD and a copy kernel moving the same bytes as the sum reads, and a one-launch
// reduction (last block combines the partials, as kernels/reduce.cu) over grid shapes, with
// and without that final combine. Numbers for bench/notes and the README's roof definition.
//
// Run on a GPU machine: nvcc -arch=sm_90 -O3 -std=c++17 -o /tmp/sum-roof bench/roof/sum-roof.cu && /tmp/sum-roof
#include <cstdio>
#include <cuda_runtime.h>

#define CHECK(x)                                                         \
  do {                                                                   \
    cudaError_t e = (x);                                                 \
    if (e != cudaSuccess) {                                              \
      printf("%s: %s\n", #x, cudaGetErrorString(e));                     \
      return 1;                                                          \
    }                                                                    \
  } while (0)

// COMBINE: the last block to finish (by an atomic ticket) sums the partials; otherwise each
// block only writes its partial.
template <bool COMBINE>
__global__ void sum(const float4* __restrict__ x, float* partial, float* out, unsigned* counter, long long n4) {
  __shared__ float warps[32];
  __shared__ bool last;
  const long long chunk = (n4 + gridDim.x - 1) / gridDim.x;
  const long long begin = blockIdx.x * chunk, end = min(begin + chunk, n4);
  float acc[4] = {};
  long long p = begin + threadIdx.x;
  for (; p + 3 * blockDim.x < end; p += 4 * blockDim.x) {
    float4 v[4];
#pragma unroll
    for (int u = 0; u < 4; u++) v[u] = x[p + u * blockDim.x];
#pragma unroll
    for (int u = 0; u < 4; u++) acc[u] += (v[u].x + v[u].y) + (v[u].z + v[u].w);
  }
  for (; p < end; p += blockDim.x) acc[0] += (x[p].x + x[p].y) + (x[p].z + x[p].w);
  float s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
  for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(~0u, s, o);
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < blockDim.x / 32; w++) s += warps[w];
    partial[blockIdx.x] = s;
    if (COMBINE) {
      __threadfence();
      last = atomicAdd(counter, 1u) == gridDim.x - 1;
    }
  }
  if (!COMBINE) return;
  __syncthreads();
  if (!last) return;
  __threadfence();
  float a = 0.f;
  for (int i = threadIdx.x; i < gridDim.x; i += blockDim.x) a += __ldcg(partial + i);
  for (int o = 16; o; o >>= 1) a += __shfl_xor_sync(~0u, a, o);
  __syncthreads();
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = a;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < blockDim.x / 32; w++) a += warps[w];
    out[0] = a;
    *counter = 0;
  }
}

__global__ void copy(const float4* __restrict__ x, float4* y, long long n4) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += (long long)gridDim.x * blockDim.x) y[i] = x[i];
}

__global__ void fill(float* x, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    x[i] = (float)((i * 2654435761ull) % 1000) * 1e-3f;
}

int main() {
  int sms;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  const long long most = 1ll << 26;
  float *x, *y, *partial, *out;
  unsigned* counter;
  CHECK(cudaMalloc(&x, most * 4));
  CHECK(cudaMalloc(&y, most * 4));
  CHECK(cudaMalloc(&partial, 1 << 20));
  CHECK(cudaMalloc(&out, 4));
  CHECK(cudaMalloc(&counter, 4));
  CHECK(cudaMemset(counter, 0, 4));
  fill<<<1024, 256>>>(x, most);
  // µs per call: events around 200 back-to-back calls after 5 warm-up calls.
  auto time = [&](auto call) {
    for (int i = 0; i < 5; i++) call();
    cudaEventRecord(start);
    for (int i = 0; i < 200; i++) call();
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms;
    cudaEventElapsedTime(&ms, start, stop);
    return ms * 1000 / 200;
  };
  for (int lg : {24, 26}) {
    const long long n = 1ll << lg, n4 = n / 4;
    const double bytes = n * 4.0;  // what the sum reads; the copies below move as many
    const auto gbps = [&](float us) { return bytes / us / 1e3; };
    const float memcpyUs = time([&] { cudaMemcpyAsync(y, x, n * 2, cudaMemcpyDeviceToDevice); });
    const float copyUs = time([&] { copy<<<sms * 8, 256>>>((const float4*)x, (float4*)y, n4 / 2); });
    printf("2^%d f32 (%.0f MB): cuMemcpyDtoD of the same bytes %.2f us (%.0f GB/s), copy kernel %.2f us (%.0f GB/s)\n", lg,
           bytes / 1e6, memcpyUs, gbps(memcpyUs), copyUs, gbps(copyUs));
    for (int perSm : {1, 2, 4, 8}) {
      for (int threads : {256, 512, 1024}) {
        if (perSm * threads > 2048) continue;
        const int grid = sms * perSm;
        const float withCombine = time([&] { sum<true><<<grid, threads>>>((const float4*)x, partial, out, counter, n4); });
        const float partialsOnly = time([&] { sum<false><<<grid, threads>>>((const float4*)x, partial, out, counter, n4); });
        printf("  sum, %4d blocks x %4d: %.2f us (%.0f GB/s, %.0f%% of the memcpy); partials only %.2f us\n", grid, threads,
               withCombine, gbps(withCombine), 100 * memcpyUs / withCombine, partialsOnly);
      }
    }
  }
  CHECK(cudaDeviceSynchronize());
  return 0;
}
