// A whole autoregressive rollout of a one-layer GRU (E independent members) with its output
// projection, one thread-block cluster per member (sm_90+): gpu.gruRollout's path where a member's
// weights and batch fit the shared memory of its cluster. Members never wait for one another (no
// grid barrier); the CTAs of a member exchange h_t and y_t through distributed shared memory.
//
// CTA r of a cluster of C owns hidden units [r·U, r·U + U) and output columns [r·V, r·V + V)
// (U = ⌈H/C⌉, V = ⌈S/C⌉; the last CTAs may own fewer, or none). It keeps its rows of W_ih, W_hh
// and W_out in shared memory for the whole rollout, and its own copy of x_t and of h in two
// buffers, all transposed ([k][row], [k][b]) so that a product's k-th step reads contiguous runs.
// Step t:
//   gates:      x_t·W_ihᵀ, then h_t of its units for every batch row, written into every CTA's
//               h_t buffer;
//   cluster barrier;
//   projection: y_t of its columns, written into every CTA's x (x_{t+1} = y_t; no CTA reads x_t
//               any more after the barrier above);
//   cluster barrier, during which it stores states[e, b, t, its columns] and computes step t + 1's
//               h_t·W_hhᵀ (none after the last step: no CTA touches another's memory past the first).
// Step t reads h buffer (t + 1) & 1 and writes t & 1: another CTA overwrites a buffer only after
// the barrier that follows this CTA's last read of it. Inside the steps global memory is only
// written, after a barrier's arrival, so that no release waits for it.
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

// out[n·pad + b] = Σ_{k < K} act[k·ldAct + b] · w[k·ldW + n] for every n < 8·groups and b < pad,
// in tiles of 8 batch rows by 8 weight rows. A group of L lanes computes a tile, lane i over
// k ≡ i (mod L), each k two 16-byte runs of act and two of w (strides of 4 mod 8 floats: the 8
// lanes of a quarter warp hit distinct banks); a reduce-scatter completes the sums.
template <int L>
__device__ __forceinline__ void tile_product(const float* w, int ldW, const float* act, int ldAct, int K, float* out, int groups, int pad) {
  const int lane = gc_lane();
  const int i = lane % L;
  const int tiles = groups * (pad / 8);
  for (int first = gc_warp() * (32 / L); first < tiles; first += THREADS / L) {
    // A group past the last tile repeats it (every lane takes part in the shuffles) and writes nothing.
    const int t = min(first + lane / L, tiles - 1);
    const float* a = act + 8 * (t / groups);
    const float* v = w + 8 * (t % groups);
    float acc[8][8];
#pragma unroll
    for (int r = 0; r < 8; ++r) {
#pragma unroll
      for (int n = 0; n < 8; ++n) acc[r][n] = 0.0f;
    }
#pragma unroll 2
    for (int k = i; k < K; k += L) {
      const float4 a0 = load4(a + k * ldAct), a1 = load4(a + k * ldAct + 4);
      const float4 v0 = load4(v + k * ldW), v1 = load4(v + k * ldW + 4);
      const float as[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float vs[8] = {v0.x, v0.y, v0.z, v0.w, v1.x, v1.y, v1.z, v1.w};
#pragma unroll
      for (int r = 0; r < 8; ++r) {
#pragma unroll
        for (int n = 0; n < 8; ++n) acc[r][n] = fmaf(as[r], vs[n], acc[r][n]);
      }
    }
    // Lane i now holds batch row i / (L/8) of the tile, complete.
    reduce_scatter_rows<8, 8, L>(acc, lane);
    if (first + lane / L < tiles && i % (L / 8) == 0) {
      const int b = 8 * (t / groups) + i / (L / 8);
#pragma unroll
      for (int n = 0; n < 8; ++n) out[(8 * (t % groups) + n) * pad + b] = acc[0][n];
    }
  }
}

// The widest split that keeps every tile's lanes busy at once (8 lanes a tile when tiles outnumber them).
__device__ __forceinline__ void product(const float* w, int ldW, const float* act, int ldAct, int K, float* out, int groups, int pad) {
  const int tiles = groups * (pad / 8);
  if (tiles * 32 <= THREADS) {
    tile_product<32>(w, ldW, act, ldAct, K, out, groups, pad);
  } else if (tiles * 16 <= THREADS) {
    tile_product<16>(w, ldW, act, ldAct, K, out, groups, pad);
  } else {
    tile_product<8>(w, ldW, act, ldAct, K, out, groups, pad);
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
// layout below (floats; the host's rolloutClusterLayout computes the same):
//   W_ih rows [S][ldGate], W_hh rows [H][ldGate] (row g·units + u: gate g of unit u), W_out rows
//   [H][ldOut], x [S][ldBatch], h [2][H][ldBatch], x-side gate sums (then projection sums)
//   [max(ldGate, ldOut)][pad], h-side gate sums [ldGate][pad], biases [6·units + columns].
// pad: the batch rounded up to 8; ldGate, ldOut, ldBatch: 4 mod 8.
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
  float* gx = hs + 2 * H * ldBatch;
  float* gh = gx + max(ldGate, ldOut) * pad;
  float* bias = gh + ldGate * pad;  // b_ih [3][units], b_hh [3][units], b_out [columns]
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
  fill_transposed(hs + H * ldBatch, H, ldBatch, [&](int k, int b) { return b < B && h0 != nullptr ? widen(h0[((idx_t)e * B + b) * H + k]) : 0.0f; });
  for (int i = threadIdx.x; i < H * ldBatch; i += THREADS) hs[i] = 0.0f;
  for (int i = threadIdx.x; i < 6 * units + columns; i += THREADS) {
    const int g = i / units, u = i % units, v = i - 6 * units;
    const idx_t at = (idx_t)e * 3 * H + (g % 3) * H + u0 + u;
    bias[i] = i >= 6 * units ? (v < nv ? load_or_zero(bout + (idx_t)e * boutE + s0 + v, bout != nullptr) : 0.0f)
              : u >= nu      ? 0.0f
              : g < 3        ? load_or_zero(bih + at, bih != nullptr)
                             : load_or_zero(bhh + at, bhh != nullptr);
  }
  __syncthreads();
  // Every CTA of the cluster has started and set its buffers before any writes into them; meanwhile
  // step 0's h·W_hhᵀ.
  gc_cluster_arrive();
  const int gateGroups = (3 * units + 7) / 8, outGroups = (columns + 7) / 8;
  product(wh, ldGate, hs + H * ldBatch, ldBatch, H, gh, gateGroups, pad);
  gc_cluster_wait();

  const float* bi = bias;
  const float* bh = bias + 3 * units;
  const float* bo = bias + 6 * units;
  for (int t = 0; t < steps; ++t) {
    const float* hprev = hs + ((t + 1) & 1) * H * ldBatch;
    float* hnext = hs + (t & 1) * H * ldBatch;
    product(wx, ldGate, xs, ldBatch, S, gx, gateGroups, pad);
    __syncthreads();
    for (int i = threadIdx.x; i < nu * B; i += THREADS) {
      const int u = i / B, b = i % B, j = u0 + u;
      const int r = u * pad + b, z = (units + u) * pad + b, n = (2 * units + u) * pad + b;
      const float h = gru_update(round_to_t(gx[r]) + bi[u], round_to_t(gx[z]) + bi[units + u], round_to_t(gx[n]) + bi[2 * units + u],
                                 gh[r] + bh[u], gh[z] + bh[units + u], gh[n] + bh[2 * units + u], hprev[j * ldBatch + b]);
      hnext[j * ldBatch + b] = widen(narrow<T>(h));
    }
    __syncthreads();
    share(hnext + u0 * ldBatch, nu * ldBatch, rank, size);
    gc_cluster_arrive();
    if (t == steps - 1) {
      for (int i = threadIdx.x; i < nu * B; i += THREADS) {
        const int u = i / B, b = i % B;
        hN[((idx_t)e * B + b) * H + u0 + u] = narrow<T>(hnext[(u0 + u) * ldBatch + b]);
      }
    }
    gc_cluster_wait();

    product(wo, ldOut, hnext, ldBatch, H, gx, outGroups, pad);
    __syncthreads();
    for (int i = threadIdx.x; i < nv * B; i += THREADS) {
      const int v = i / B, b = i % B;
      const float y = gx[v * pad + b];
      xs[(s0 + v) * ldBatch + b] = widen(narrow<T>((roundProduct ? round_to_t(y) : y) + bo[v]));
    }
    __syncthreads();
    const bool more = t + 1 < steps;
    if (more) {
      share(xs + s0 * ldBatch, nv * ldBatch, rank, size);
      gc_cluster_arrive();
    }
    for (int i = threadIdx.x; i < nv * B; i += THREADS) {
      const int v = i / B, b = i % B;
      states[(((idx_t)e * B + b) * steps + t) * S + s0 + v] = narrow<T>(xs[(s0 + v) * ldBatch + b]);
    }
    if (more) {
      // Step t + 1's h·W_hhᵀ while the other CTAs finish.
      product(wh, ldGate, hnext, ldBatch, H, gh, gateGroups, pad);
      gc_cluster_wait();
    }
  }
}
