// A whole autoregressive rollout of a one-layer GRU (E independent members) with its output
// projection, in one cooperative launch: gpu.gruRollout's one-launch path, for shapes whose
// weights fit a warp's registers (H ≤ 32·ROLL_KH, S ≤ 32·ROLL_KS).
//
// Step t has two phases, each ended by a grid-wide barrier:
//   gates:      h_t = gru(x_t·W_ihᵀ + b_ih, h_{t−1}·W_hhᵀ + b_hh, h_{t−1})   (PyTorch's r, z, n)
//   projection: y_t = h_t·W_outᵀ + b_out, stored as states[e, b, t, :]; x_{t+1} = y_t
// with x_0 the given state. A block owns ROLL_WARPS hidden units of one member in the gate phase
// (a warp each, its three rows of W_ih and W_hh in registers) and ROLL_WARPS output columns of
// one member in the projection phase (a warp each, its row of W_out). The block stages its
// member's rows of x_t and h_{t−1} (of h_t) in shared memory, a chunk of batch rows at a time,
// so each row crosses L2 once per block rather than once per warp; each warp walks the chunk in
// tiles of ROLL_ROWS rows, and a reduce-scatter leaves each row's sums in one lane. When the
// grid has a block for every block's worth of items, the weights stay in registers for all steps.
//
// Rounding follows the op-by-op path (a T tensor between ops): x·W_ihᵀ is rounded to T before
// the gates, h_t is stored as T and read back rounded, and y is rounded to T (with a per-member
// projection, the product is rounded before its bias is added, as a product then an add). Math in
// f32 (also where the op asked for 'tf32': more accurate than the tensor-core path).
//
// h_t lives in a two-slot ring [2][E][B][H]; hN gets the last step's. Values written during the
// launch (the ring, the states) are read through L2.
#include "dtype.cuh"
#include "ops.cuh"
#include "gru.cuh"
#include "gru_rollout.cuh"

#define ROLL_THREADS 256
#define ROLL_WARPS (ROLL_THREADS / 32)
#define ROLL_ROWS 4
// Values each thread loads at once while staging rows in shared memory.
#define ROLL_STAGE 8

struct RolloutArgs {
  const T* x0;  // [E?, B, S]
  idx_t x0E;    // member stride of x0 (0: shared by the members)
  const T* h0;  // [E, B, H], or null for zeros
  const T* wih;  // [E, 3H, S]
  const T* whh;  // [E, 3H, H]
  const T* bih;  // [E, 3H] or null
  const T* bhh;  // [E, 3H] or null
  const T* wout;  // [E?, S, H]
  idx_t woutE;    // member stride of wout (0: shared)
  const T* bout;  // [E?, S] or null
  idx_t boutE;    // member stride of bout (0: shared)
  T* ring;        // [2, E, B, H]
  T* states;      // [E, B, steps, S]
  T* hN;          // [E, B, H]
};

// Row b of x_t: the given state at t = 0, else the projection of step t − 1.
__device__ __forceinline__ const T* x_row(const RolloutArgs& a, int e, int b, int t, int B, int steps, int S) {
  return t == 0 ? a.x0 + (idx_t)e * a.x0E + (idx_t)b * S : a.states + (((idx_t)e * B + b) * steps + (t - 1)) * S;
}

// Row b of h_{t−1}: h0 at t = 0, else the ring slot of step t − 1.
__device__ __forceinline__ const T* h_row(const RolloutArgs& a, int e, int b, int t, int E, int B, int H) {
  return t == 0 ? a.h0 + ((idx_t)e * B + b) * H : a.ring + ((idx_t)((t - 1) & 1) * E * B + (idx_t)e * B + b) * H;
}

// h_t's slot in the ring.
__device__ __forceinline__ T* ring_row(const RolloutArgs& a, int e, int b, int t, int E, int B, int H) {
  return a.ring + ((idx_t)(t & 1) * E * B + (idx_t)e * B + b) * H;
}

// Copies `total` values, value i from load(i), into shared `rows`, then waits for the block:
// ROLL_STAGE loads per thread in flight before their stores (each is an L2 round trip).
template <typename Load>
__device__ __forceinline__ void stage(float* rows, int total, Load load) {
  for (int base = threadIdx.x; base < total; base += ROLL_STAGE * ROLL_THREADS) {
    float v[ROLL_STAGE];
#pragma unroll
    for (int u = 0; u < ROLL_STAGE; ++u) {
      const int i = base + u * ROLL_THREADS;
      v[u] = i < total ? load(i) : 0.0f;
    }
#pragma unroll
    for (int u = 0; u < ROLL_STAGE; ++u) {
      const int i = base + u * ROLL_THREADS;
      if (i < total) rows[i] = v[u];
    }
  }
  __syncthreads();
}

// The gate weights of unit j of member e: wi[g][i] = W_ih[g·H + j][lane + 32i] (0 past S), wh likewise.
__device__ __forceinline__ void load_gate_weights(const RolloutArgs& a, int e, int j, int H, int S, int lane, float (&wi)[3][ROLL_KS],
                                                  float (&wh)[3][ROLL_KH]) {
#pragma unroll
  for (int g = 0; g < 3; ++g) {
    const T* ri = a.wih + ((idx_t)e * 3 * H + (idx_t)g * H + j) * S;
    const T* rh = a.whh + ((idx_t)e * 3 * H + (idx_t)g * H + j) * H;
#pragma unroll
    for (int i = 0; i < ROLL_KS; ++i) wi[g][i] = lane + 32 * i < S ? widen(ri[lane + 32 * i]) : 0.0f;
#pragma unroll
    for (int i = 0; i < ROLL_KH; ++i) wh[g][i] = lane + 32 * i < H ? widen(rh[lane + 32 * i]) : 0.0f;
  }
}

__device__ __forceinline__ void load_out_weights(const RolloutArgs& a, int e, int s, int H, int lane, float (&wo)[ROLL_KH]) {
  const T* row = a.wout + (idx_t)e * a.woutE + (idx_t)s * H;
#pragma unroll
  for (int i = 0; i < ROLL_KH; ++i) wo[i] = lane + 32 * i < H ? widen(row[lane + 32 * i]) : 0.0f;
}

// The gate phase of step t for the block's units j0.. of member e: h_t[.., j] of every batch row.
// `rows` is the block's shared staging area: a chunk of `chunk` batch rows, each [x_t (S) | h_{t−1} (H)].
__device__ __forceinline__ void gate_units(const RolloutArgs& a, float* rows, int chunk, int e, int j0, int t, int E, int B, int steps,
                                           int H, int S, const float (&wi)[3][ROLL_KS], const float (&wh)[3][ROLL_KH]) {
  constexpr int SPREAD = 5 - RowBits<ROLL_ROWS>::value;  // lanes per row after the reduce-scatter
  const int lane = threadIdx.x & 31;
  const int j = j0 + (threadIdx.x >> 5);
  const int width = S + H;
  const idx_t at = (idx_t)e * 3 * H + j;
  for (int c0 = 0; c0 < B; c0 += chunk) {
    const int count = min(chunk, B - c0);
    __syncthreads();  // the previous chunk is consumed
    stage(rows, count * width, [&](int i) {
      const int r = i / width, k = i % width;
      if (k < S) return load_cg(x_row(a, e, c0 + r, t, B, steps, S) + k);
      return t == 0 && a.h0 == nullptr ? 0.0f : load_cg(h_row(a, e, c0 + r, t, E, B, H) + k - S);
    });
    if (j >= H) continue;  // a warp past the last unit only helps stage
    for (int b0 = 0; b0 < count; b0 += ROLL_ROWS) {
      float ax[ROLL_ROWS][3], ah[ROLL_ROWS][3];
#pragma unroll
      for (int r = 0; r < ROLL_ROWS; ++r) {
        // Rows past the chunk repeat its last row; their sums reach no writing lane.
        const float* xr = rows + min(b0 + r, count - 1) * width;
        const float* hr = xr + S;
        ax[r][0] = ax[r][1] = ax[r][2] = 0.0f;
        ah[r][0] = ah[r][1] = ah[r][2] = 0.0f;
#pragma unroll
        for (int i = 0; i < ROLL_KS; ++i) {
          const float v = xr[min(lane + 32 * i, S - 1)];
#pragma unroll
          for (int g = 0; g < 3; ++g) ax[r][g] = fmaf(v, wi[g][i], ax[r][g]);
        }
#pragma unroll
        for (int i = 0; i < ROLL_KH; ++i) {
          const float v = hr[min(lane + 32 * i, H - 1)];
#pragma unroll
          for (int g = 0; g < 3; ++g) ah[r][g] = fmaf(v, wh[g][i], ah[r][g]);
        }
      }
      reduce_scatter_rows<ROLL_ROWS, 3>(ax, lane);
      reduce_scatter_rows<ROLL_ROWS, 3>(ah, lane);
      const int local = b0 + (lane >> SPREAD);
      if ((lane & ((1 << SPREAD) - 1)) == 0 && local < count) {
        const float hprev = rows[local * width + S + j];
        const float h = gru_update(round_to_t(ax[0][0]) + load_or_zero(a.bih + at, a.bih != nullptr),
                                   round_to_t(ax[0][1]) + load_or_zero(a.bih + at + H, a.bih != nullptr),
                                   round_to_t(ax[0][2]) + load_or_zero(a.bih + at + 2 * H, a.bih != nullptr),
                                   ah[0][0] + load_or_zero(a.bhh + at, a.bhh != nullptr),
                                   ah[0][1] + load_or_zero(a.bhh + at + H, a.bhh != nullptr),
                                   ah[0][2] + load_or_zero(a.bhh + at + 2 * H, a.bhh != nullptr), hprev);
        const T stored = narrow<T>(h);
        ring_row(a, e, c0 + local, t, E, B, H)[j] = stored;
        if (t == steps - 1) a.hN[((idx_t)e * B + c0 + local) * H + j] = stored;
      }
    }
  }
}

// The projection phase of step t for the block's output columns s0.. of member e:
// states[e, b, t, s] for every row. `rows` stages a chunk of h_t rows [H].
__device__ __forceinline__ void project_columns(const RolloutArgs& a, float* rows, int chunk, int e, int s0, int t, int E, int B,
                                                int steps, int H, int S, int roundProduct, const float (&wo)[ROLL_KH]) {
  constexpr int SPREAD = 5 - RowBits<ROLL_ROWS>::value;
  const int lane = threadIdx.x & 31;
  const int s = s0 + (threadIdx.x >> 5);
  const float bias = s < S ? load_or_zero(a.bout + (idx_t)e * a.boutE + s, a.bout != nullptr) : 0.0f;
  for (int c0 = 0; c0 < B; c0 += chunk) {
    const int count = min(chunk, B - c0);
    __syncthreads();
    stage(rows, count * H, [&](int i) { return load_cg(ring_row(a, e, c0 + i / H, t, E, B, H) + i % H); });
    if (s >= S) continue;
    for (int b0 = 0; b0 < count; b0 += ROLL_ROWS) {
      float acc[ROLL_ROWS][1];
#pragma unroll
      for (int r = 0; r < ROLL_ROWS; ++r) {
        const float* hr = rows + min(b0 + r, count - 1) * H;
        acc[r][0] = 0.0f;
#pragma unroll
        for (int i = 0; i < ROLL_KH; ++i) acc[r][0] = fmaf(hr[min(lane + 32 * i, H - 1)], wo[i], acc[r][0]);
      }
      reduce_scatter_rows<ROLL_ROWS, 1>(acc, lane);
      const int local = b0 + (lane >> SPREAD);
      if ((lane & ((1 << SPREAD) - 1)) == 0 && local < count) {
        const float product = roundProduct ? round_to_t(acc[0][0]) : acc[0][0];
        a.states[(((idx_t)e * B + c0 + local) * steps + t) * S + s] = narrow<T>(product + bias);
      }
    }
  }
}

// `chunk` batch rows of x_t and h_{t−1} fit the dynamic shared memory (chunk·(S + H) floats).
extern "C" __global__ void __launch_bounds__(ROLL_THREADS, 2) gru_rollout(
    const T* x0, idx_t x0E, const T* h0, const T* wih, const T* whh, const T* bih, const T* bhh, const T* wout, idx_t woutE,
    const T* bout, idx_t boutE, T* ring, T* states, T* hN, int E, int B, int steps, int H, int S, int roundProduct, int chunk,
    unsigned int* counter) {
  extern __shared__ float rows[];
  const RolloutArgs a = {x0, x0E, h0, wih, whh, bih, bhh, wout, woutE, bout, boutE, ring, states, hN};
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int unitGroups = (H + ROLL_WARPS - 1) / ROLL_WARPS;
  const int columnGroups = (S + ROLL_WARPS - 1) / ROLL_WARPS;
  const int gateBlocks = E * unitGroups;
  const int outBlocks = E * columnGroups;
  // With a block for every group, each warp's weights stay in registers for the whole rollout.
  const bool gateResident = (int)gridDim.x >= gateBlocks;
  const bool outResident = (int)gridDim.x >= outBlocks;
  float wi[3][ROLL_KS], wh[3][ROLL_KH], wo[ROLL_KH];
  const int bx = blockIdx.x;
  if (gateResident && bx < gateBlocks) {
    const int j = (bx % unitGroups) * ROLL_WARPS + warp;
    if (j < H) load_gate_weights(a, bx / unitGroups, j, H, S, lane, wi, wh);
  }
  if (outResident && bx < outBlocks) {
    const int s = (bx % columnGroups) * ROLL_WARPS + warp;
    if (s < S) load_out_weights(a, bx / columnGroups, s, H, lane, wo);
  }

  unsigned int round = 0;
  for (int t = 0; t < steps; ++t) {
    for (int g = bx; g < gateBlocks; g += gridDim.x) {
      const int e = g / unitGroups, j0 = (g % unitGroups) * ROLL_WARPS;
      if (!gateResident && j0 + warp < H) load_gate_weights(a, e, j0 + warp, H, S, lane, wi, wh);
      gate_units(a, rows, chunk, e, j0, t, E, B, steps, H, S, wi, wh);
    }
    grid_barrier(counter, ++round);
    for (int g = bx; g < outBlocks; g += gridDim.x) {
      const int e = g / columnGroups, s0 = (g % columnGroups) * ROLL_WARPS;
      if (!outResident && s0 + warp < S) load_out_weights(a, e, s0 + warp, H, lane, wo);
      project_columns(a, rows, chunk, e, s0, t, E, B, steps, H, S, roundProduct, wo);
    }
    if (t + 1 < steps) grid_barrier(counter, ++round);
  }
  grid_barrier_reset(counter, round);
}
