// The recurrence of a GRU (PyTorch's gate order r, z, n) for E independent members at once.
// The input projections gx = x·W_ihᵀ of every timestep come precomputed (one GEMM); these
// kernels add h·W_hhᵀ, both biases, the gates and the update:
//   r = σ(gx_r + b_ir + gh_r + b_hr)   z = σ(gx_z + b_iz + gh_z + b_hz)
//   n = tanh(gx_n + b_in + r·(gh_n + b_hn))   h' = (1 − z)·n + z·h
// Specialised with -DGC_DTYPE=<float dtype code>; math in f32, every stored h rounded to T, and
// the next step reads the rounded h (as the CPU backend does).
//
// Where h_t lives: hseq + e·sE + b·sB + (t mod slots)·sT (slots = T for a returned sequence, 2
// for a ring when only the last state is wanted); hN [E, B, H] gets the last step's state.
//
// gru_persistent: one cooperative launch for all T steps. Each block owns `units` hidden units
// of one member and keeps their 3·units rows of W_hh in shared memory for the whole sequence;
// blocks meet at a grid-wide barrier between steps.
// gru_gates: one step, given gh = h·W_hhᵀ from a GEMM; one block per (member, batch row), with an
// optional layer norm of the new state (which then is the state carried on).
// gru_fused_k<KPL>_r<BT>: one step, product and gates in one kernel, for H ≤ 32·KPL: one warp per
// hidden unit keeps its three W_hh rows in registers and walks a tile of BT batch rows. A module
// built with -DGRU_FUSED_COLUMNS=<KPL> holds only these kernels of that KPL (so a shape compiles
// the few it can use); without it, the persistent and gates kernels.
#include "dtype.cuh"
#include "block-reduce.cuh"
#include "ops.cuh"
#include "gru.cuh"

#ifndef GRU_FUSED_COLUMNS

// Two blocks per SM fit in registers (128 each) where shared memory allows it.
#define GRU_THREADS 256
// Timestep chunk of the K loop (columns of h staged per round).
#define GRU_KC 16
// Most h elements one thread stages per chunk: BT·GRU_KC/GRU_THREADS = 16·TB/units.
#define GRU_STAGE 16

// The state before step t of row (e, b): h0 at t = 0, else the slot written at t − 1.
__device__ __forceinline__ const T* prev_row(const T* h0, const GruSeq& seq, int e, int b, int t, int B, int H) {
  return t == 0 ? h0 + ((idx_t)e * B + b) * H : seq.at(e, b, t - 1);
}

// TB batch rows per thread; block = GRU_THREADS threads = (GRU_THREADS/units) batch groups × units.
// Shared memory: ws [H][3·units] (k-major: the 3·units values a k-step needs sit together),
// biases [6·units], hs [2][GRU_KC][BT + 4] (the staged slice of h, batch-minor, double-buffered).
template <int TB>
__device__ __forceinline__ void gru_persistent_body(const T* __restrict__ gx, idx_t gxE, idx_t gxB, idx_t gxT,
                                                    const T* __restrict__ whh, const T* __restrict__ bih,
                                                    const T* __restrict__ bhh, const T* __restrict__ h0, GruSeq seq,
                                                    T* __restrict__ hN, int B, int steps, int H, int units,
                                                    unsigned int* counter) {
  extern __shared__ float smem[];
  const int blocksPerMember = (H + units - 1) / units;
  const int e = blockIdx.x / blocksPerMember;
  const int j0 = (blockIdx.x % blocksPerMember) * units;
  const int rows3 = 3 * units;
  const int groups = GRU_THREADS / units;  // batch groups
  const int BT = groups * TB;              // batch rows per tile
  const int hsStride = BT + 4;
  float* ws = smem;
  float* bias = ws + (idx_t)H * rows3;
  float* hs = smem + (((idx_t)H * rows3 + 2 * rows3 + 3) & ~(idx_t)3);  // 16-byte aligned for float4 reads

  const idx_t wBase = (idx_t)e * 3 * H * H;
  for (idx_t i = threadIdx.x; i < (idx_t)rows3 * H; i += GRU_THREADS) {
    const int row = (int)(i / H), k = (int)(i % H);
    const int g = row / units, u = row % units;
    const int j = j0 + u;
    ws[(idx_t)k * rows3 + row] = j < H ? widen(whh[wBase + ((idx_t)g * H + j) * H + k]) : 0.0f;
  }
  for (int i = threadIdx.x; i < rows3; i += GRU_THREADS) {
    const int g = i / units, j = j0 + i % units;
    const idx_t at = (idx_t)e * 3 * H + (idx_t)g * H + j;
    bias[i] = j < H && bih ? widen(bih[at]) : 0.0f;
    bias[rows3 + i] = j < H && bhh ? widen(bhh[at]) : 0.0f;
  }
  __syncthreads();

  const int u = threadIdx.x % units;
  const int bg = threadIdx.x / units;
  const int j = j0 + u;
  const int chunks = (H + GRU_KC - 1) / GRU_KC;
  // Staging: thread i moves elements i, i + GRU_THREADS, ... of a [BT][GRU_KC] chunk
  // (the host keeps units ≥ TB, so that is at most GRU_STAGE elements).
  const int perThread = BT * GRU_KC / GRU_THREADS;

  for (int t = 0; t < steps; ++t) {
    // Row b of the previous state sits at prev + b·prevStride (h0 dense, or the sequence slot).
    const T* prev = t == 0 ? h0 + (idx_t)e * B * H : seq.at(e, 0, t - 1);
    const idx_t prevStride = t == 0 ? (idx_t)H : seq.sB;
    for (int b0 = 0; b0 < B; b0 += BT) {
      // Groups past the last row skip the products, leaving the issue slots to the rows that count.
      const bool active = b0 + bg * TB < B;
      float acc[TB][3];
#pragma unroll
      for (int r = 0; r < TB; ++r) acc[r][0] = acc[r][1] = acc[r][2] = 0.0f;

      // Chunk c + 1 is fetched into registers before chunk c is multiplied, and stored to the
      // other buffer after it, so the L2 latency hides behind the FMAs.
      float pre[GRU_STAGE];
      // Element q of this thread: row b0 + threadIdx.x / GRU_KC + q·rowStep, column threadIdx.x % GRU_KC
      // of the chunk; one pointer walks the rows so that no per-element address stays live.
      const int rowStep = GRU_THREADS / GRU_KC;
      const int firstRow = b0 + threadIdx.x / GRU_KC;
      auto fetch = [&](int chunk) {
        const int k = chunk * GRU_KC + threadIdx.x % GRU_KC;
        const T* p = prev + firstRow * prevStride + k;
        const idx_t step = rowStep * prevStride;
#pragma unroll
        for (int q = 0; q < GRU_STAGE; ++q) {
          pre[q] = q < perThread && firstRow + q * rowStep < B && k < H ? load_cg(p) : 0.0f;
          p += step;
        }
      };
      auto store = [&](int buf) {
        float* dst = hs + buf * GRU_KC * hsStride;
#pragma unroll
        for (int q = 0; q < GRU_STAGE; ++q) {
          const int i = threadIdx.x + q * GRU_THREADS;
          if (q < perThread) dst[(i % GRU_KC) * hsStride + i / GRU_KC] = pre[q];
        }
      };
      fetch(0);
      store(0);
      __syncthreads();
      for (int c = 0; c < chunks; ++c) {
        if (c + 1 < chunks) fetch(c + 1);
        const float* src = hs + (c & 1) * GRU_KC * hsStride + bg * TB;
        const float* w = ws + (idx_t)c * GRU_KC * rows3 + u;
        const int kEnd = active ? min(GRU_KC, H - c * GRU_KC) : 0;
        for (int kk = 0; kk < kEnd; ++kk) {
          const float wr = w[kk * rows3], wz = w[kk * rows3 + units], wn = w[kk * rows3 + 2 * units];
          float hv[TB];
          if constexpr (TB % 4 == 0) {
#pragma unroll
            for (int r = 0; r < TB; r += 4) {
              const float4 q = *reinterpret_cast<const float4*>(src + kk * hsStride + r);
              hv[r] = q.x;
              hv[r + 1] = q.y;
              hv[r + 2] = q.z;
              hv[r + 3] = q.w;
            }
          } else {
#pragma unroll
            for (int r = 0; r < TB; ++r) hv[r] = src[kk * hsStride + r];
          }
#pragma unroll
          for (int r = 0; r < TB; ++r) {
            acc[r][0] = fmaf(hv[r], wr, acc[r][0]);
            acc[r][1] = fmaf(hv[r], wz, acc[r][1]);
            acc[r][2] = fmaf(hv[r], wn, acc[r][2]);
          }
        }
        if (c + 1 < chunks) store((c + 1) & 1);
        __syncthreads();
      }
      if (j < H) {
        const float bir = bias[u], biz = bias[units + u], bin = bias[2 * units + u];
        const float bhr = bias[rows3 + u], bhz = bias[rows3 + units + u], bhn = bias[rows3 + 2 * units + u];
#pragma unroll
        for (int r = 0; r < TB; ++r) {
          const int b = b0 + bg * TB + r;
          if (b >= B) break;
          const T* x = gx + (idx_t)e * gxE + (idx_t)b * gxB + (idx_t)t * gxT + j;
          const float hprev = load_cg(prev + b * prevStride + j);
          const float h = gru_update(widen(x[0]) + bir, widen(x[H]) + biz, widen(x[2 * H]) + bin, acc[r][0] + bhr,
                                     acc[r][1] + bhz, acc[r][2] + bhn, hprev);
          const T stored = narrow<T>(h);
          seq.at(e, b, t)[j] = stored;
          if (t == steps - 1) hN[((idx_t)e * B + b) * H + j] = stored;
        }
      }
    }
    if (t + 1 < steps) grid_barrier(counter, (unsigned int)(t + 1));
  }
  if (steps > 1) grid_barrier_reset(counter, (unsigned int)(steps - 1));
}

#define GRU_PERSISTENT(TB)                                                                                            \
  extern "C" __global__ void __launch_bounds__(GRU_THREADS, 2) gru_persistent_tb##TB(                                  \
      const T* __restrict__ gx, idx_t gxE, idx_t gxB, idx_t gxT, const T* __restrict__ whh,                        \
      const T* __restrict__ bih, const T* __restrict__ bhh, const T* __restrict__ h0, T* hseq, idx_t sE, idx_t sB,  \
      idx_t sT, int slots, T* __restrict__ hN, int B, int steps, int H, int units, unsigned int* counter) {          \
    GruSeq seq = {hseq, sE, sB, sT, slots};                                                                         \
    gru_persistent_body<TB>(gx, gxE, gxB, gxT, whh, bih, bhh, h0, seq, hN, B, steps, H, units, counter);          \
  }

GRU_PERSISTENT(2)
GRU_PERSISTENT(8)

// One step t from gh [E, B, 3H] (dense, h·W_hhᵀ without bias). Block (e, b) = blockIdx.x; the
// new row is also written densely to hdense [E, B, H] (when not null) for the next step's GEMM.
// With lnOn, the row is normalised, (h − mean)/√(var + eps)·gamma + beta (gamma/beta [E, H], each
// may be null), computed from the unrounded f32 row staged in shared memory [H].
extern "C" __global__ void __launch_bounds__(256) gru_gates(const T* __restrict__ gx, idx_t gxE, idx_t gxB, idx_t gxT,
                                                            const T* __restrict__ gh, const T* __restrict__ bih,
                                                            const T* __restrict__ bhh, const T* __restrict__ h0, T* hseq,
                                                            idx_t sE, idx_t sB, idx_t sT, int slots, T* hdense,
                                                            T* __restrict__ hN, int B, int t, int steps, int H, int lnOn,
                                                            const T* __restrict__ gamma, const T* __restrict__ beta,
                                                            float eps) {
  extern __shared__ float row[];
  __shared__ float red[32];
  const GruSeq seq = {hseq, sE, sB, sT, slots};
  const int e = blockIdx.x / B, b = blockIdx.x % B;
  const T* x = gx + (idx_t)e * gxE + (idx_t)b * gxB + (idx_t)t * gxT;
  const T* g = gh + ((idx_t)e * B + b) * 3 * H;
  const T* prev = prev_row(h0, seq, e, b, t, B, H);
  const idx_t bRow = (idx_t)e * 3 * H;
  T* out = seq.at(e, b, t);
  T* dense = hdense ? hdense + ((idx_t)e * B + b) * H : nullptr;
  T* last = t == steps - 1 ? hN + ((idx_t)e * B + b) * H : nullptr;
  float sum = 0.0f;
  for (int j = threadIdx.x; j < H; j += blockDim.x) {
    const float bir = bih ? widen(bih[bRow + j]) : 0.0f, biz = bih ? widen(bih[bRow + H + j]) : 0.0f,
                bin = bih ? widen(bih[bRow + 2 * H + j]) : 0.0f;
    const float bhr = bhh ? widen(bhh[bRow + j]) : 0.0f, bhz = bhh ? widen(bhh[bRow + H + j]) : 0.0f,
                bhn = bhh ? widen(bhh[bRow + 2 * H + j]) : 0.0f;
    const float h = gru_update(widen(x[j]) + bir, widen(x[H + j]) + biz, widen(x[2 * H + j]) + bin, widen(g[j]) + bhr,
                               widen(g[H + j]) + bhz, widen(g[2 * H + j]) + bhn, widen(prev[j]));
    if (lnOn) {
      row[j] = h;
      sum += h;
    } else {
      const T stored = narrow<T>(h);
      out[j] = stored;
      if (dense) dense[j] = stored;
      if (last) last[j] = stored;
    }
  }
  if (!lnOn) return;
  const float mean = block_reduce<ReduceSum<float> >(sum, red) / (float)H;
  float squares = 0.0f;
  for (int j = threadIdx.x; j < H; j += blockDim.x) {
    const float d = row[j] - mean;
    squares += d * d;
  }
  const float invStd = rsqrtf(block_reduce<ReduceSum<float> >(squares, red) / (float)H + eps);
  const idx_t pRow = (idx_t)e * H;
  for (int j = threadIdx.x; j < H; j += blockDim.x) {
    const float v = (row[j] - mean) * invStd * (gamma ? widen(gamma[pRow + j]) : 1.0f) + (beta ? widen(beta[pRow + j]) : 0.0f);
    const T stored = narrow<T>(v);
    out[j] = stored;
    if (dense) dense[j] = stored;
    if (last) last[j] = stored;
  }
}

#else  // the fused step kernels of one column count

// ---------------------------------------------------------------------------------------------
// Fused step: h_t = gru(gx_t, h_{t−1}·W_hhᵀ) in one launch, for small shapes where the GEMM's
// launch and the gates' launch cost more than the product itself.
//
// Warp w of a block owns hidden unit j = unitBlock·GRU_FUSED_UNITS + w of member e and a tile of
// BT batch rows. Lane l holds W_hh[g·H + j][l + 32·i] (i < KPL, each gate g) in registers, so the
// 3·BT dot products are lane-partial sums over its KPL columns of each h row; a reduce-scatter
// across the warp then leaves the three sums of row b0 + (l >> (5 − log2 BT)) in lane l, and one
// lane per row applies the gates. The rows are the previous step's slots (or h0): read through
// L1, shared by the block's warps, which all walk the same tile.
#define GRU_FUSED_UNITS 8

template <int KPL, int BT>
__device__ __forceinline__ void gru_fused_body(const T* __restrict__ gx, idx_t gxE, idx_t gxB, idx_t gxT,
                                               const T* __restrict__ whh, const T* __restrict__ bih,
                                               const T* __restrict__ bhh, const T* __restrict__ h0, GruSeq seq,
                                               T* __restrict__ hN, int B, int t, int steps, int H) {
  const int lane = threadIdx.x & 31;
  const int unitBlocks = (H + GRU_FUSED_UNITS - 1) / GRU_FUSED_UNITS;
  const int tiles = (B + BT - 1) / BT;
  const int tile = blockIdx.x % tiles;
  const int e = blockIdx.x / tiles / unitBlocks;
  const int j = (blockIdx.x / tiles % unitBlocks) * GRU_FUSED_UNITS + (threadIdx.x >> 5);
  if (j >= H) return;  // no block-wide barrier follows
  const int b0 = tile * BT;
  const T* prev = t == 0 ? h0 + (idx_t)e * B * H : seq.base + (idx_t)e * seq.sE + (idx_t)((t - 1) % seq.slots) * seq.sT;
  const idx_t prevStride = t == 0 ? (idx_t)H : seq.sB;

  // The gate inputs of this lane's row, fetched first so their latency hides behind the product.
  constexpr int SPREAD = 5 - RowBits<BT>::value;  // lanes per row after the reduce-scatter
  const int b = b0 + (lane >> SPREAD);
  const bool writes = (lane & ((1 << SPREAD) - 1)) == 0 && b < B;
  float xr = 0.0f, xz = 0.0f, xn = 0.0f, hr = 0.0f, hz = 0.0f, hn = 0.0f, hprev = 0.0f;
  if (writes) {
    const T* x = gx + (idx_t)e * gxE + (idx_t)b * gxB + (idx_t)t * gxT + j;
    const idx_t at = (idx_t)e * 3 * H + j;
    xr = widen(x[0]) + (bih ? widen(bih[at]) : 0.0f);
    xz = widen(x[H]) + (bih ? widen(bih[at + H]) : 0.0f);
    xn = widen(x[2 * H]) + (bih ? widen(bih[at + 2 * H]) : 0.0f);
    if (bhh) {
      hr = widen(bhh[at]);
      hz = widen(bhh[at + H]);
      hn = widen(bhh[at + 2 * H]);
    }
    hprev = widen(prev[(idx_t)b * prevStride + j]);
  }

  // No load sits behind a branch, so the scheduler can put every load of the tile in flight at
  // once (a guarded load per column serialised them: one L2 round trip each). Columns past H
  // read column H − 1 and meet a zero weight; rows past B repeat row B − 1 and their sums reach
  // no writing lane.
  int col[KPL];
#pragma unroll
  for (int i = 0; i < KPL; ++i) col[i] = min(lane + 32 * i, H - 1);
  float w[3][KPL];
  const T* wRow = whh + ((idx_t)e * 3 * H + j) * H;
#pragma unroll
  for (int g = 0; g < 3; ++g) {
#pragma unroll
    for (int i = 0; i < KPL; ++i) {
      const float v = widen(wRow[(idx_t)g * H * H + col[i]]);
      w[g][i] = lane + 32 * i < H ? v : 0.0f;
    }
  }

  float acc[BT][3];
#pragma unroll
  for (int r = 0; r < BT; ++r) {
    const T* row = prev + (idx_t)min(b0 + r, B - 1) * prevStride;
    acc[r][0] = acc[r][1] = acc[r][2] = 0.0f;
#pragma unroll
    for (int i = 0; i < KPL; ++i) {
      const float h = widen(row[col[i]]);
      acc[r][0] = fmaf(h, w[0][i], acc[r][0]);
      acc[r][1] = fmaf(h, w[1][i], acc[r][1]);
      acc[r][2] = fmaf(h, w[2][i], acc[r][2]);
    }
  }
  reduce_scatter_rows<BT, 3>(acc, lane);

  if (writes) {
    const T stored = narrow<T>(gru_update(xr, xz, xn, acc[0][0] + hr, acc[0][1] + hz, acc[0][2] + hn, hprev));
    seq.at(e, b, t)[j] = stored;
    if (t == steps - 1) hN[((idx_t)e * B + b) * H + j] = stored;
  }
}

#define GRU_FUSED(KPL, BT)                                                                                        \
  extern "C" __global__ void __launch_bounds__(GRU_FUSED_UNITS * 32) gru_fused_k##KPL##_r##BT(                   \
      const T* __restrict__ gx, idx_t gxE, idx_t gxB, idx_t gxT, const T* __restrict__ whh,                    \
      const T* __restrict__ bih, const T* __restrict__ bhh, const T* __restrict__ h0, T* hseq, idx_t sE,        \
      idx_t sB, idx_t sT, int slots, T* __restrict__ hN, int B, int t, int steps, int H) {                      \
    GruSeq seq = {hseq, sE, sB, sT, slots};                                                                     \
    gru_fused_body<KPL, BT>(gx, gxE, gxB, gxT, whh, bih, bhh, h0, seq, hN, B, t, steps, H);                    \
  }
// Expands KPL before pasting it into the name.
#define GRU_FUSED_OF(KPL, BT) GRU_FUSED(KPL, BT)

// The tiles fusedKernelNames (gru-plan.ts) lists: BT 4, 16 and, where BT·KPL ≤ 256, 32 (k16_r32
// would spill).
GRU_FUSED_OF(GRU_FUSED_COLUMNS, 4)
GRU_FUSED_OF(GRU_FUSED_COLUMNS, 16)
#if GRU_FUSED_COLUMNS * 32 <= 256
GRU_FUSED_OF(GRU_FUSED_COLUMNS, 32)
#endif

#endif  // GRU_FUSED_COLUMNS
