// A whole autoregressive rollout of a one-layer GRU (E independent members) with its output
// projection, one thread-block cluster per member (sm_90+): gpu.gruRollout's path where a member's
// weights and batch fit the shared memory of its cluster. Members never wait for one another (no
// grid barrier); the CTAs of a member exchange h_t and y_t through distributed shared memory.
//
// CTA r of a cluster of C owns hidden units [r·U, r·U + U) and output columns [r·V, r·V + V)
// (U = ⌈H/C⌉, V = ⌈S/C⌉; the last CTAs may own fewer, or none). It keeps its rows of W_ih, W_hh
// and W_out in shared memory for the whole rollout, and its own copy of x_t and of h in two
// buffers, all transposed ([k][row], [k][b]) so that a product's k-th step reads one contiguous
// run of each. Step t:
//   gates:      h_t of its units for every batch row, written into every CTA's h_t buffer;
//   cluster barrier;
//   projection: y_t of its columns, stored as states[e, b, t, :] and written into every CTA's x
//               (x_{t+1} = y_t), which no CTA reads any more after the barrier above;
//   cluster barrier (none after the last step: no CTA touches another's memory past the first).
// Step t reads h buffer (t + 1) & 1 and writes t & 1: another CTA overwrites a buffer only after
// the barrier that follows this CTA's last read of it.
//
// Rounding follows gru_rollout.cu (the op-by-op path): x·W_ihᵀ is rounded to T before the gates,
// h_t is kept as T, y is rounded to T (a per-member projection's product before its bias is added).
#include "dtype.cuh"
#include "ops.cuh"
#include "gru.cuh"
#include "gru_rollout.cuh"
#include "cluster.cuh"

namespace {

constexpr int THREADS = 512;
// Values each thread loads from global memory before storing any while filling shared memory.
constexpr int FILL_BATCH = 16;

__device__ __forceinline__ float4 load4(const float* p) { return *reinterpret_cast<const float4*>(p); }

// Stores `v` at the shared address `local` of this CTA's window, in the cluster's CTA `rank`.
__device__ __forceinline__ void store_remote4(unsigned local, unsigned rank, float4 v) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(local), "r"(rank));
  asm volatile("st.shared::cluster.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"r"(remote), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w)
               : "memory");
}

// dst[k·ld + n] = value(k, n) for k < K, n < ld. A warp covers 4 k by 8 n (global reads along k
// come in runs of 4, shared stores spread over the banks), FILL_BATCH loads in flight per thread.
template <typename F>
__device__ __forceinline__ void fill_transposed(float* dst, int K, int ld, F value) {
  const int blocksN = (ld + 7) / 8;
  const int total = (K + 3) / 4 * blocksN * 32;
  for (int base = threadIdx.x; base < total; base += FILL_BATCH * THREADS) {
    float v[FILL_BATCH];
    int at[FILL_BATCH];
#pragma unroll
    for (int u = 0; u < FILL_BATCH; ++u) {
      const int i = base + u * THREADS;
      const int block = i >> 5;
      const int k = block / blocksN * 4 + ((i & 31) >> 3);
      const int n = block % blocksN * 8 + (i & 7);
      const bool inside = i < total && k < K && n < ld;
      at[u] = inside ? k * ld + n : -1;
      v[u] = inside ? value(k, n) : 0.0f;
    }
#pragma unroll
    for (int u = 0; u < FILL_BATCH; ++u) {
      if (at[u] >= 0) dst[at[u]] = v[u];
    }
  }
}

// One product of a phase: out[n·pad + b] = Σ_{k < K} act[k·ldAct + b] · w[k·ldW + n].
struct Product {
  const float* w;
  const float* act;
  int k;
  float* out;
};

// PARTS products sharing their weight-row and batch layout (the gates' x·W_ihᵀ and h·W_hhᵀ), for
// every n < 4·groups and b < pad, in tiles of 4 batch rows by 4 weight rows. A group of L lanes
// computes a tile, lane i over k ≡ i (mod L); a reduce-scatter completes the sums. A warp's tiles
// are 2 batch quads by 32/(2L) row groups, so that each k reads few distinct runs.
template <int L, int PARTS>
__device__ __forceinline__ void tile_products(const Product (&p)[PARTS], int ldW, int ldAct, int groups, int pad) {
  constexpr int PER_WARP = 32 / L;
  const int lane = gc_lane();
  const int i = lane % L;
  const int tiles = groups * (pad / 4);
  for (int first = gc_warp() * PER_WARP; first < tiles; first += THREADS / L) {
    // A group past the last tile repeats it (every lane takes part in the shuffles) and writes nothing.
    const int t = min(first + lane / L, tiles - 1);
    const int q = 2 * ((t >> 1) / groups) + (t & 1);  // batch quad (pad is a multiple of 8)
    const int g = (t >> 1) % groups;                 // weight-row group
    float acc[4][4 * PARTS];
#pragma unroll
    for (int r = 0; r < 4; ++r) {
#pragma unroll
      for (int n = 0; n < 4 * PARTS; ++n) acc[r][n] = 0.0f;
    }
#pragma unroll
    for (int part = 0; part < PARTS; ++part) {
      const float* w = p[part].w + 4 * g;
      const float* act = p[part].act + 4 * q;
#pragma unroll 4
      for (int k = i; k < p[part].k; k += L) {
        const float4 a = load4(act + k * ldAct);
        const float4 v = load4(w + k * ldW);
        const float as[4] = {a.x, a.y, a.z, a.w};
        const float vs[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int r = 0; r < 4; ++r) {
#pragma unroll
          for (int n = 0; n < 4; ++n) acc[r][4 * part + n] = fmaf(as[r], vs[n], acc[r][4 * part + n]);
        }
      }
    }
    // Lane i now holds batch row i / (L/4) of the tile, complete.
    reduce_scatter_rows<4, 4 * PARTS, L>(acc, lane);
    if (first + lane / L < tiles && i % (L / 4) == 0) {
      const int b = 4 * q + i / (L / 4);
#pragma unroll
      for (int part = 0; part < PARTS; ++part) {
#pragma unroll
        for (int n = 0; n < 4; ++n) p[part].out[(4 * g + n) * pad + b] = acc[0][4 * part + n];
      }
    }
  }
}

// Small phases spread each tile over 16 lanes (more threads at work), large ones over 4.
template <int PARTS>
__device__ __forceinline__ void products(const Product (&p)[PARTS], int ldW, int ldAct, int groups, int pad) {
  if (groups * (pad / 4) * 16 <= THREADS) {
    tile_products<16, PARTS>(p, ldW, ldAct, groups, pad);
  } else {
    tile_products<4, PARTS>(p, ldW, ldAct, groups, pad);
  }
}

// Copies `count` floats at `src` (16-byte aligned, count a multiple of 4) to the same place in
// every other CTA of the cluster, each thread starting at a different CTA.
__device__ __forceinline__ void share(const float* src, int count, unsigned rank, unsigned size) {
  const int vectors = count / 4;
  const unsigned local = gc_smem_addr(src);
  for (int i = threadIdx.x; i < (int)(size - 1) * vectors; i += THREADS) {
    const unsigned to = (rank + 1 + i / vectors) % size;
    const int v = i % vectors;
    store_remote4(local + 16 * v, to, load4(src + 4 * v));
  }
}

}  // namespace

// Launched with cluster dims (C, 1, 1), a grid of E·C CTAs and the dynamic shared memory of the
// layout below (floats; the host's planRolloutCluster computes the same):
//   W_ih rows [S][ldGate], W_hh rows [H][ldGate] (row g·units + u: gate g of unit u), W_out rows
//   [H][ldOut], x [S][ldBatch], h [2][H][ldBatch], sums [max(2·ldGate, ldOut)][pad].
// pad: the batch rounded up to 8; ldGate, ldOut, ldBatch: multiples of 4.
extern "C" __global__ void __launch_bounds__(THREADS, 1) gru_rollout_cluster(
    const T* x0, idx_t x0E, const T* h0, const T* wih, const T* whh, const T* bih, const T* bhh, const T* wout, idx_t woutE,
    const T* bout, idx_t boutE, T* states, T* hN, int B, int steps, int H, int S, int roundProduct, int units, int columns,
    int ldGate, int ldOut, int pad, int ldBatch) {
  extern __shared__ float4 shared4[];
  float* wx = reinterpret_cast<float*>(shared4);
  float* wh = wx + S * ldGate;
  float* wo = wh + H * ldGate;
  float* xs = wo + H * ldOut;
  float* hs = xs + S * ldBatch;
  float* sums = hs + 2 * H * ldBatch;
  const unsigned rank = gc_cluster_rank();
  const unsigned size = gc_cluster_size();
  const int e = blockIdx.x / size;
  const int u0 = rank * units, nu = max(0, min(units, H - u0));
  const int s0 = rank * columns, nv = max(0, min(columns, S - s0));

  fill_transposed(wx, S, ldGate, [&](int k, int n) {
    const int g = n / units, u = n % units;
    return g < 3 && u < nu ? widen(wih[((idx_t)e * 3 * H + g * H + u0 + u) * S + k]) : 0.0f;
  });
  fill_transposed(wh, H, ldGate, [&](int k, int n) {
    const int g = n / units, u = n % units;
    return g < 3 && u < nu ? widen(whh[((idx_t)e * 3 * H + g * H + u0 + u) * H + k]) : 0.0f;
  });
  fill_transposed(wo, H, ldOut, [&](int k, int v) { return v < nv ? widen(wout[(idx_t)e * woutE + (idx_t)(s0 + v) * H + k]) : 0.0f; });
  fill_transposed(xs, S, ldBatch, [&](int k, int b) { return b < B ? widen(x0[(idx_t)e * x0E + (idx_t)b * S + k]) : 0.0f; });
  // h0 in buffer 1 (step 0's h_{t−1}); buffer 0's batch padding must be finite too.
  fill_transposed(hs + H * ldBatch, H, ldBatch, [&](int k, int b) { return b < B ? widen(h0[((idx_t)e * B + b) * H + k]) : 0.0f; });
  for (int i = threadIdx.x; i < H * ldBatch; i += THREADS) hs[i] = 0.0f;
  // Every CTA of the cluster has started and set its buffers before any writes into them.
  gc_cluster_sync();

  float* gx = sums;
  float* gh = sums + ldGate * pad;
  const int gateGroups = ldGate / 4, outGroups = ldOut / 4;
  for (int t = 0; t < steps; ++t) {
    const float* hprev = hs + ((t + 1) & 1) * H * ldBatch;
    float* hnext = hs + (t & 1) * H * ldBatch;
    const Product gates[2] = {{wx, xs, S, gx}, {wh, hprev, H, gh}};
    products(gates, ldGate, ldBatch, gateGroups, pad);
    __syncthreads();
    for (int i = threadIdx.x; i < nu * B; i += THREADS) {
      const int u = i / B, b = i % B, j = u0 + u;
      const idx_t at = (idx_t)e * 3 * H + j;
      const float h = gru_update(round_to_t(gx[u * pad + b]) + load_or_zero(bih + at, bih != nullptr),
                                 round_to_t(gx[(units + u) * pad + b]) + load_or_zero(bih + at + H, bih != nullptr),
                                 round_to_t(gx[(2 * units + u) * pad + b]) + load_or_zero(bih + at + 2 * H, bih != nullptr),
                                 gh[u * pad + b] + load_or_zero(bhh + at, bhh != nullptr),
                                 gh[(units + u) * pad + b] + load_or_zero(bhh + at + H, bhh != nullptr),
                                 gh[(2 * units + u) * pad + b] + load_or_zero(bhh + at + 2 * H, bhh != nullptr), hprev[j * ldBatch + b]);
      const T stored = narrow<T>(h);
      hnext[j * ldBatch + b] = widen(stored);
      if (t == steps - 1) hN[((idx_t)e * B + b) * H + j] = stored;
    }
    __syncthreads();
    share(hnext + u0 * ldBatch, nu * ldBatch, rank, size);
    gc_cluster_sync();

    const Product projection[1] = {{wo, hnext, H, sums}};
    products(projection, ldOut, ldBatch, outGroups, pad);
    __syncthreads();
    for (int i = threadIdx.x; i < nv * B; i += THREADS) {
      const int v = i / B, b = i % B, s = s0 + v;
      const float product = sums[v * pad + b];
      const float bias = load_or_zero(bout + (idx_t)e * boutE + s, bout != nullptr);
      const T y = narrow<T>((roundProduct ? round_to_t(product) : product) + bias);
      states[(((idx_t)e * B + b) * steps + t) * S + s] = y;
      xs[s * ldBatch + b] = widen(y);
    }
    if (t + 1 < steps) {
      __syncthreads();
      share(xs + s0 * ldBatch, nv * ldBatch, rank, size);
      gc_cluster_sync();
    }
  }
}
