// A GRU layer's whole recurrence (all T steps) in one launch, for hidden sizes up to 128: each
// block runs the complete sequence of a tile of batch rows of one member and needs no other
// block (members and rows do not interact), so there is no grid barrier and no per-step launch.
// Same contract as gru.cu (precomputed gx = x·W_ihᵀ without bias, PyTorch's gate order r, z, n,
// math in f32, every stored state rounded to T and the rounded state read by the next step).
// Specialised with -DGC_DTYPE=<float dtype code> and -DGRU_SEQ_COLUMNS=<KPT>.
//
// Layout: SEQ_SPLIT (8) adjacent lanes share hidden unit j = threadIdx.x / 8; lane s keeps
// W_hh[g·H + j][k] in registers for its KPT columns k = 4·(s + 8·i) + c (i < KPT/4, c < 4), so a
// row's h is read as KPT/4 float4 per lane, the 8 lanes of a unit together reading 128
// contiguous bytes. A pass takes R rows of the tile; a reduce-scatter over the 8 lanes leaves
// row s >> (3 − log2 R) of unit j in lane s, which stores its three sums to shared memory. After
// a barrier, consecutive threads apply the gates to (row, unit) items (so only rows·H threads
// run the transcendentals, not every lane of every warp) and write the state, kept in shared
// memory as f32 of the rounded values, double-buffered; a second barrier ends the step.
#include "dtype.cuh"
#include "ops.cuh"
#include "gru.cuh"

#define SEQ_SPLIT 8
// Gate items (row, unit) per thread: the host keeps rowsPerBlock·H ≤ SEQ_GATE_ITEMS·blockDim.x.
#if GRU_SEQ_COLUMNS == 16
#define SEQ_GATE_ITEMS 1
#else
#define SEQ_GATE_ITEMS 2
#endif
// Column chunks (float4) of W_hh per lane kept in registers; 16 columns at 1024 threads (64
// registers each) leave room for 3 of their 4 chunks, the last comes from shared memory.
#if GRU_SEQ_COLUMNS == 16
#define SEQ_REG_CHUNKS 3
#else
#define SEQ_REG_CHUNKS (GRU_SEQ_COLUMNS / 4)
#endif

// Block b of the grid: member b / tiles, rows [tile·rowsPerBlock, +rowsPerBlock) of the batch.
// Shared memory: ws [C4 − KR][3][blockDim.x] float4 (the weights not in registers), then floats:
// hs [2][RP][HP] (RP = rowsPerBlock rounded up to R, HP = H rounded up to 4; rows past the tile
// and columns past H stay zero), bias [6][H] (b_ih, then b_hh) and the step's sums h·W_hhᵀ,
// sums [RP][3][H].
template <int KPT, int KR, int R, int GQ>
__device__ __forceinline__ void gru_sequence_body(const T* __restrict__ gx, idx_t gxE, idx_t gxB, idx_t gxT,
                                                  const T* __restrict__ whh, const T* __restrict__ bih,
                                                  const T* __restrict__ bhh, const T* __restrict__ h0, GruSeq seq,
                                                  T* __restrict__ hN, int B, int steps, int H, int rowsPerBlock) {
  extern __shared__ __align__(16) float smem[];
  constexpr int S = SEQ_SPLIT;
  constexpr int C4 = KPT / 4;  // float4 chunks of columns per lane
  constexpr int SPREAD = RowBits<S>::value - RowBits<R>::value;  // lanes per row after the reduction
  const int HP = (H + 3) & ~3;
  const int H3 = 3 * H;
  const int RP = (rowsPerBlock + R - 1) / R * R;
  const int tiles = (B + rowsPerBlock - 1) / rowsPerBlock;
  const int e = blockIdx.x / tiles;
  const int b0 = (blockIdx.x % tiles) * rowsPerBlock;
  const int rows = min(rowsPerBlock, B - b0);
  float4* ws = reinterpret_cast<float4*>(smem);
  float* hs = smem + 4 * 3 * (C4 - KR) * blockDim.x;
  float* bias = hs + 2 * RP * HP;
  float* sums = bias + 6 * H;

  const int s = threadIdx.x & (S - 1);
  const int j = threadIdx.x / S;  // threads past the last unit compute on clamped weights and write nothing
  const int jc = min(j, H - 1);

  for (int i = threadIdx.x; i < 2 * RP * HP; i += blockDim.x) {
    const int r = i / HP, k = i % HP;
    hs[i] = r < rows && k < H ? widen(h0[((idx_t)e * B + b0 + r) * H + k]) : 0.0f;
  }
  for (int i = threadIdx.x; i < H3; i += blockDim.x) {
    const idx_t at = (idx_t)e * H3 + i;
    bias[i] = bih ? widen(bih[at]) : 0.0f;
    bias[H3 + i] = bhh ? widen(bhh[at]) : 0.0f;
  }

  // Chunks i < KR of the weights stay in registers, the rest in shared memory (thread-minor
  // float4, so a warp's reads are conflict-free).
  float w[3][4 * KR];
  const T* wRow = whh + ((idx_t)e * H3 + jc) * H;
#pragma unroll
  for (int i = 0; i < C4; ++i) {
    const int k0 = 4 * (s + S * i);
#pragma unroll
    for (int g = 0; g < 3; ++g) {
      float v[4];
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const int k = k0 + c;
        const float x = widen(wRow[(idx_t)g * H * H + min(k, H - 1)]);
        v[c] = k < H ? x : 0.0f;
      }
      if (i < KR) {
#pragma unroll
        for (int c = 0; c < 4; ++c) w[g][4 * i + c] = v[c];
      } else {
        ws[((i - KR) * 3 + g) * blockDim.x + threadIdx.x] = make_float4(v[0], v[1], v[2], v[3]);
      }
    }
  }
  __syncthreads();

  // Gate items of this thread: item i = threadIdx.x + q·blockDim.x is unit i % H of row i / H
  // (consecutive threads take consecutive units, so their loads and stores coalesce). Their gate
  // inputs are loaded a step ahead, right after use, so the latency hides behind the next step's
  // products. Items past the tile load the last item's and write nothing.
  const int items = rows * H;
  int item[GQ];
  float x[GQ][3];
#pragma unroll
  for (int q = 0; q < GQ; ++q) item[q] = min((int)threadIdx.x + q * (int)blockDim.x, items - 1);
  const T* gxTile = gx + (idx_t)e * gxE + (idx_t)b0 * gxB;
  auto fetch = [&](int t) {
#pragma unroll
    for (int q = 0; q < GQ; ++q) {
      const T* p = gxTile + (idx_t)t * gxT + (idx_t)(item[q] / H) * gxB + item[q] % H;
      x[q][0] = widen(p[0]);
      x[q][1] = widen(p[H]);
      x[q][2] = widen(p[2 * H]);
    }
  };
  fetch(0);

  // Lane s of unit j writes the sums of row p0 + (s >> SPREAD) of a pass.
  const bool writes = (s & ((1 << SPREAD) - 1)) == 0 && j < H;
  const int myRow = s >> SPREAD;
  for (int t = 0; t < steps; ++t) {
    const float* hc = hs + (t & 1) * RP * HP;
    float* hn = hs + ((t & 1) ^ 1) * RP * HP;
    for (int p0 = 0; p0 < rows; p0 += R) {
      float acc[R][3];
#pragma unroll
      for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = acc[r][2] = 0.0f;
#pragma unroll
      for (int i = 0; i < C4; ++i) {
        // Columns past H read the row's last float4 and meet zero weights.
        const int col = min(4 * (s + S * i), HP - 4);
#pragma unroll
        for (int r = 0; r < R; ++r) {
          const float4 h = *reinterpret_cast<const float4*>(hc + (p0 + r) * HP + col);
          const float hv[4] = {h.x, h.y, h.z, h.w};
#pragma unroll
          for (int q = 0; q < 3; ++q) {
            float wv[4];
            if (i < KR) {
#pragma unroll
              for (int c = 0; c < 4; ++c) wv[c] = w[q][4 * i + c];
            } else {
              const float4 m = ws[((i - KR) * 3 + q) * blockDim.x + threadIdx.x];
              wv[0] = m.x, wv[1] = m.y, wv[2] = m.z, wv[3] = m.w;
            }
#pragma unroll
            for (int c = 0; c < 4; ++c) acc[r][q] = fmaf(hv[c], wv[c], acc[r][q]);
          }
        }
      }
      reduce_scatter_rows<R, 3, S>(acc, s);
      const int row = p0 + myRow;
      if (writes && row < rows) {
#pragma unroll
        for (int g = 0; g < 3; ++g) sums[(row * 3 + g) * H + j] = acc[0][g];
      }
    }
    __syncthreads();
    // The gates, by consecutive threads rather than one lane in 8: a fraction of the warps run them.
#pragma unroll
    for (int q = 0; q < GQ; ++q) {
      if ((int)threadIdx.x + q * (int)blockDim.x < items) {
        const int row = item[q] / H, u = item[q] % H;
        const float* sm = sums + row * 3 * H + u;
        const float h = gru_update(x[q][0] + bias[u], x[q][1] + bias[H + u], x[q][2] + bias[2 * H + u], sm[0] + bias[H3 + u],
                                   sm[H] + bias[H3 + H + u], sm[2 * H] + bias[H3 + 2 * H + u], hc[row * HP + u]);
        const T stored = narrow<T>(h);
        hn[row * HP + u] = widen(stored);
        seq.at(e, b0 + row, t)[u] = stored;
        if (t == steps - 1) hN[((idx_t)e * B + b0 + row) * H + u] = stored;
      }
    }
    if (t + 1 < steps) fetch(t + 1);
    __syncthreads();
  }
}

#define GRU_SEQUENCE(KPT, R)                                                                                        \
  extern "C" __global__ void __launch_bounds__(64 * KPT) gru_sequence_k##KPT##_r##R(                                \
      const T* __restrict__ gx, idx_t gxE, idx_t gxB, idx_t gxT, const T* __restrict__ whh,                      \
      const T* __restrict__ bih, const T* __restrict__ bhh, const T* __restrict__ h0, T* hseq, idx_t sE,          \
      idx_t sB, idx_t sT, int slots, T* __restrict__ hN, int B, int steps, int H, int rowsPerBlock) {             \
    GruSeq seq = {hseq, sE, sB, sT, slots};                                                                    \
    gru_sequence_body<KPT, SEQ_REG_CHUNKS, R, SEQ_GATE_ITEMS>(gx, gxE, gxB, gxT, whh, bih, bhh, h0, seq, hN, B, steps, H, rowsPerBlock);         \
  }
// Expands KPT before pasting it into the name.
#define GRU_SEQUENCE_OF(KPT, R) GRU_SEQUENCE(KPT, R)

// The kernels sequenceKernelNames (gru-plan.ts) lists: R 1, 2, 4, 8, and only 1, 2 for 16 columns
// (36 weights in registers at 64 a thread leave no room for more accumulators).
GRU_SEQUENCE_OF(GRU_SEQ_COLUMNS, 1)
GRU_SEQUENCE_OF(GRU_SEQ_COLUMNS, 2)
#if GRU_SEQ_COLUMNS < 16
GRU_SEQUENCE_OF(GRU_SEQ_COLUMNS, 4)
GRU_SEQUENCE_OF(GRU_SEQ_COLUMNS, 8)
#endif
