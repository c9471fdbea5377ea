// Device helpers shared by the GRU kernels (gru.cu: the recurrence; gru_sequence.cu: a layer's
// recurrence in one launch; gru_rollout.cu: a whole rollout in one launch). Needs dtype.cuh and
// ops.cuh first.
#pragma once

// PyTorch's gate order r, z, n: the new state from the gate pre-activations of x and of h.
__device__ __forceinline__ float gru_update(float xr, float xz, float xn, float hr, float hz, float hn, float hprev) {
  const float r = gc_sigmoid(xr + hr);
  const float z = gc_sigmoid(xz + hz);
  const float n = tanhf(xn + r * hn);
  return (1.0f - z) * n + z * hprev;
}

// Where h_t of row (e, b) goes: base + e·sE + b·sB + (t mod slots)·sT (slots = T for a returned
// sequence, 2 for a ring when only the last state is wanted).
struct GruSeq {
  T* base;
  idx_t sE, sB, sT;
  int slots;
  __device__ __forceinline__ T* at(int e, int b, int t) const {
    return base + (idx_t)e * sE + (idx_t)b * sB + (idx_t)(t % slots) * sT;
  }
};

// Values written by other blocks during this launch: read through L2 (ld.global.cg), never a
// stale L1 line. Loads that do not depend on one another still overlap in flight, so readers
// issue several before using any (see gru_rollout.cu's staging).
__device__ __forceinline__ float load_cg(const float* p) { return __ldcg(p); }
__device__ __forceinline__ float load_cg(const f16_t* p) {
  f16_t h;
  h.bits = __ldcg(reinterpret_cast<const unsigned short*>(p));
  return to_float(h);
}
__device__ __forceinline__ float load_cg(const bf16_t* p) {
  bf16_t h;
  h.bits = __ldcg(reinterpret_cast<const unsigned short*>(p));
  return to_float(h);
}

__device__ __forceinline__ unsigned int load_acquire(const unsigned int* p) {
  unsigned int v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// Grid-wide barrier over a monotonic counter (the launch is cooperative, so every block is
// resident): arrival `round` completes when the counter reaches round·blocks.
__device__ __forceinline__ void grid_barrier(unsigned int* counter, unsigned int round) {
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    atomicAdd(counter, 1u);
    const unsigned int target = round * gridDim.x;
    while (load_acquire(counter) < target) {
    }
    __threadfence();
  }
  __syncthreads();
}

// Leaves a grid barrier's counter at zero for the next kernel after `rounds` barriers: the last
// block to arrive here resets it (every block has then passed every barrier and reads it no more).
__device__ __forceinline__ void grid_barrier_reset(unsigned int* counter, unsigned int rounds) {
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    const unsigned int total = (rounds + 1) * gridDim.x;
    if (atomicAdd(counter, 1u) == total - 1) atomicExch(counter, 0u);
  }
}

// log2 of a power-of-two row tile.
template <int BT> struct RowBits {
  static constexpr int value = 1 + RowBits<BT / 2>::value;
};
template <> struct RowBits<1> {
  static constexpr int value = 0;
};

// acc[r][g] holds lane-partial sums of row r, value g, over groups of LANES lanes (a power of two
// up to 32; lane is the index within the warp). Each halving step trades half the rows with the
// lane `mask` apart (lanes with `mask` set keep the upper half), so after log2 BT steps lane l of a
// group holds row l >> (log2 LANES − log2 BT) summed over LANES/BT lanes; a butterfly over the
// remaining lane bits completes the sums (G·(BT − 1) + G·(log2 LANES − log2 BT) shuffles instead
// of G·log2 LANES·BT).
template <int BT, int G, int LANES = 32, int LEVEL = 0>
__device__ __forceinline__ void reduce_scatter_rows(float (&acc)[BT][G], int lane) {
  if constexpr (LEVEL < RowBits<BT>::value) {
    constexpr int mask = (LANES / 2) >> LEVEL;
    constexpr int half = BT >> (LEVEL + 1);
    const bool upper = (lane & mask) != 0;
#pragma unroll
    for (int r = 0; r < half; ++r) {
#pragma unroll
      for (int g = 0; g < G; ++g) {
        const float keep = upper ? acc[r + half][g] : acc[r][g];
        const float give = upper ? acc[r][g] : acc[r + half][g];
        acc[r][g] = keep + gc_shfl_xor(give, mask);
      }
    }
    reduce_scatter_rows<BT, G, LANES, LEVEL + 1>(acc, lane);
  } else {
#pragma unroll
    for (int mask = (LANES / 2) >> RowBits<BT>::value; mask > 0; mask >>= 1) {
#pragma unroll
      for (int g = 0; g < G; ++g) acc[0][g] += gc_shfl_xor(acc[0][g], mask);
    }
  }
}
