// Fused multi-tensor optimizer steps, SGD and AdamW: one launch updates many parameters in place.
// A table in device memory describes each tensor (its addresses, size, per-tensor scalars and the
// first chunk of the launch it owns); block b updates chunk b of the tensors laid end to end,
// finding its tensor by binary search over the first chunks. Specialised with
// -DGC_DTYPE=<float dtype code> for the parameters and their gradients; the state is f32.
//
// The arithmetic is the order of f32 operations of src/compute/core/optimizer-params.ts, each
// rounded on its own (explicitly rounded intrinsics: no FMA contraction), so the CPU backend's
// composed step gives the same bits.
#include "dtype.cuh"

// Elements of one tensor a block updates.
#define GC_OPTIMIZER_CHUNK 4096

// One tensor of a step (72 bytes; the host writes the same layout, see gpu/optimizer.ts).
struct OptimizerTensor {
  unsigned long long param;
  unsigned long long grad;
  unsigned long long state0;
  unsigned long long state1;
  unsigned long long state2;
  unsigned long long n;
  unsigned long long firstChunk;
  float stepSize;       // AdamW: lr/(1 − β1^t)
  float bc2Sqrt;        // AdamW: √(1 − β2^t)
  int first;            // SGD: the momentum buffer starts from this step
  int pad;
};

// The tensor owning `chunk`: the last whose first chunk is not after it.
__device__ __forceinline__ int owner_of(const OptimizerTensor* table, int count, unsigned long long chunk) {
  int lo = 0;
  int hi = count - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) >> 1;
    if (table[mid].firstChunk <= chunk) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

// The maximum, NaN when either is: the binary max op's functor (ops.cuh OpMax).
__device__ __forceinline__ float nan_max(float a, float b) { return (a > b || a != a) ? a : b; }

extern "C" __global__ void sgd_step(const OptimizerTensor* __restrict__ table, int count, float lr, float weightDecay, float momentum,
                                    float dampeningComplement, int nesterov) {
  const unsigned long long chunk = blockIdx.x;
  const OptimizerTensor d = table[owner_of(table, count, chunk)];
  T* __restrict__ p = (T*)d.param;
  const T* __restrict__ g = (const T*)d.grad;
  float* __restrict__ buffer = (float*)d.state0;
  const unsigned long long begin = (chunk - d.firstChunk) * GC_OPTIMIZER_CHUNK;
  const unsigned long long end = begin + GC_OPTIMIZER_CHUNK < d.n ? begin + GC_OPTIMIZER_CHUNK : d.n;
  for (unsigned long long i = begin + threadIdx.x; i < end; i += blockDim.x) {
    const float w = widen(p[i]);
    float step = widen(g[i]);
    if (weightDecay != 0.0f) step = __fadd_rn(step, __fmul_rn(weightDecay, w));
    if (momentum != 0.0f) {
      const float b = d.first ? step : __fadd_rn(__fmul_rn(momentum, buffer[i]), __fmul_rn(dampeningComplement, step));
      buffer[i] = b;
      step = nesterov ? __fadd_rn(step, __fmul_rn(momentum, b)) : b;
    }
    p[i] = narrow<T>(__fadd_rn(w, -__fmul_rn(lr, step)));
  }
}

extern "C" __global__ void adamw_step(const OptimizerTensor* __restrict__ table, int count, float decay, float beta1Complement, float beta2,
                                      float beta2Complement, float eps, int amsgrad) {
  const unsigned long long chunk = blockIdx.x;
  const OptimizerTensor d = table[owner_of(table, count, chunk)];
  T* __restrict__ p = (T*)d.param;
  const T* __restrict__ g = (const T*)d.grad;
  float* __restrict__ m = (float*)d.state0;
  float* __restrict__ v = (float*)d.state1;
  float* __restrict__ vmax = (float*)d.state2;
  const unsigned long long begin = (chunk - d.firstChunk) * GC_OPTIMIZER_CHUNK;
  const unsigned long long end = begin + GC_OPTIMIZER_CHUNK < d.n ? begin + GC_OPTIMIZER_CHUNK : d.n;
  for (unsigned long long i = begin + threadIdx.x; i < end; i += blockDim.x) {
    const float gi = widen(g[i]);
    const float w = __fmul_rn(widen(p[i]), decay);
    const float mi = m[i];
    const float mNew = __fadd_rn(mi, __fmul_rn(beta1Complement, __fadd_rn(gi, -mi)));
    const float vNew = __fadd_rn(__fmul_rn(beta2, v[i]), __fmul_rn(__fmul_rn(beta2Complement, gi), gi));
    m[i] = mNew;
    v[i] = vNew;
    float vhat = vNew;
    if (amsgrad) {
      vhat = nan_max(vmax[i], vNew);
      vmax[i] = vhat;
    }
    const float denom = __fadd_rn(__fdiv_rn(__fsqrt_rn(vhat), d.bc2Sqrt), eps);
    p[i] = narrow<T>(__fadd_rn(w, -__fmul_rn(d.stepSize, __fdiv_rn(mNew, denom))));
  }
}
