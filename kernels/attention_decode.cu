// Split-key attention forward on CUDA cores for few query rows against many keys, every dtype
// (f32 everywhere; f16/bf16 where the tensor-core kernel, attention_decode_mma.cu, does not
// apply). The block mapping, the partial results and their merge: attention_decode.cuh.
//
// A block of four warps owns ROWS packed query rows (held in shared memory as f32) and one chunk
// of keys. The warps take the chunk's 32-key tiles in turn, each keeping its own online softmax
// over all ROWS rows, and merge their states through shared memory at the end. Within a tile a
// lane owns one key for the scores (its K row read from global memory, four elements per load
// where `vec`) and the head-dim columns lane + 32·u for P·V (V rows read coalesced); P passes
// from one layout to the other through shared memory.
//
// Module defines: GC_DTYPE (GC_F32, GC_F16, GC_BF16), GC_HEAD_DIM (the head dim rounded up to a
// multiple of 16; columns past the real one read as zero), GC_ROWS (rows per block).
#include "attention_decode.cuh"

namespace {

constexpr int DP = GC_HEAD_DIM, ROWS = GC_ROWS;
constexpr int WARPS = 4, THREADS = 32 * WARPS;
constexpr int KT = 32;                // keys per warp tile: one per lane
constexpr int COLS = (DP + 31) / 32;  // P·V columns per lane
static_assert(DP % 16 == 0, "the head dim is padded to a multiple of 16");

// Four elements of a K row from column c (zeros from d on): one load where VEC (d % 4 == 0 and
// rows aligned to four elements, so c < d means all four are real), else one at a time.
template <bool VEC> __device__ __forceinline__ void load4(const T* __restrict__ row, int c, int d, float (&x)[4]) {
  if constexpr (VEC) {
    if (c < d) {
      T e[4];
      load_pack<T, 4>(row + c, e);
#pragma unroll
      for (int i = 0; i < 4; i++) x[i] = to_float(e[i]);
    } else {
#pragma unroll
      for (int i = 0; i < 4; i++) x[i] = 0.f;
    }
  } else {
#pragma unroll
    for (int i = 0; i < 4; i++) x[i] = c + i < d ? to_float(row[c + i]) : 0.f;
  }
}

// s[rr] += q[rr]·k for the K row `row` and every row of the block.
template <bool VEC> __device__ __forceinline__ void key_scores(const float (*qs)[DP], const T* __restrict__ row, int d, float (&s)[ROWS]) {
#pragma unroll 8
  for (int c = 0; c < DP; c += 4) {
    float x[4];
    load4<VEC>(row, c, d, x);
#pragma unroll
    for (int rr = 0; rr < ROWS; rr++) {
      const float4 qv = *reinterpret_cast<const float4*>(&qs[rr][c]);
      s[rr] = fmaf(qv.x, x[0], fmaf(qv.y, x[1], fmaf(qv.z, x[2], fmaf(qv.w, x[3], s[rr]))));
    }
  }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS)
    attention_decode(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v, T* __restrict__ out,
                     float* __restrict__ lse, float* __restrict__ part_ml, float* __restrict__ part_o,
                     const int* __restrict__ key_lengths, int pair0, int kv_heads, int group, int seq_q, int seq_k, int d,
                     int row_tiles, int splits, int chunk, float scale_log2, int causal, int vec) {
  __shared__ __align__(16) float qs[ROWS][DP];         // the block's q rows; at the end, the merged o
  __shared__ __align__(16) float ps[WARPS][ROWS][KT];  // each warp's P of its current tile
  __shared__ float merged_m[ROWS], merged_l[ROWS];

  const DecodeBlock blk = gc_decode_block(pair0, kv_heads, group, seq_q, seq_k, d, ROWS, row_tiles, chunk, key_lengths, causal);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int i = threadIdx.x; i < ROWS * DP; i += THREADS) {
    const int r = i / DP, c = i % DP;
    qs[r][c] = r < blk.tile_rows && c < d ? to_float(q[(blk.row0 + r) * d + c]) : 0.f;
  }
  __syncthreads();

  int limit[ROWS];
  float m[ROWS], l[ROWS], o[ROWS][COLS];
#pragma unroll
  for (int rr = 0; rr < ROWS; rr++) {
    limit[rr] = gc_decode_limit(blk, blk.r0 + rr, seq_q, causal);
    m[rr] = GC_ATTN_NEG_INF;
    l[rr] = 0.f;
#pragma unroll
    for (int u = 0; u < COLS; u++) o[rr][u] = 0.f;
  }

  const T* kg = k + blk.kv_base;
  const T* vg = v + blk.kv_base;
  for (int k0 = blk.k_begin + warp * KT; k0 < blk.k_end; k0 += WARPS * KT) {
    const int key = k0 + lane;
    float s[ROWS];
#pragma unroll
    for (int rr = 0; rr < ROWS; rr++) s[rr] = 0.f;
    if (key < blk.k_end) {
      if (vec) {
        key_scores<true>(qs, kg + (idx_t)key * d, d, s);
      } else {
        key_scores<false>(qs, kg + (idx_t)key * d, d, s);
      }
    }

#pragma unroll
    for (int rr = 0; rr < ROWS; rr++) {
      const float x = key < limit[rr] ? s[rr] * scale_log2 : GC_ATTN_NEG_INF;
      float mx = x;
#pragma unroll
      for (int off = 16; off > 0; off /= 2) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
      const float m_new = fmaxf(m[rr], mx);
      // A row with nothing visible yet keeps a zero base, so exp2 gives 0 rather than NaN.
      const float base = m_new == GC_ATTN_NEG_INF ? 0.f : m_new;
      const float corr = gc_exp2(m[rr] - base);
      m[rr] = m_new;
      l[rr] *= corr;
#pragma unroll
      for (int u = 0; u < COLS; u++) o[rr][u] *= corr;
      const float p = gc_exp2(x - base);
      l[rr] += p;
      ps[warp][rr][lane] = p;
    }
    __syncwarp();

    // O += P·V, four keys at a time (keys past k_end have p = 0 and read as 0).
#pragma unroll 2
    for (int j = 0; j < KT; j += 4) {
      float vv[4][COLS];
#pragma unroll
      for (int jj = 0; jj < 4; jj++) {
        const int kj = k0 + j + jj;
#pragma unroll
        for (int u = 0; u < COLS; u++) {
          const int c = lane + 32 * u;
          vv[jj][u] = kj < blk.k_end && c < d ? to_float(vg[(idx_t)kj * d + c]) : 0.f;
        }
      }
#pragma unroll
      for (int rr = 0; rr < ROWS; rr++) {
        const float4 p4 = *reinterpret_cast<const float4*>(&ps[warp][rr][j]);
#pragma unroll
        for (int u = 0; u < COLS; u++) o[rr][u] = fmaf(p4.x, vv[0][u], fmaf(p4.y, vv[1][u], fmaf(p4.z, vv[2][u], fmaf(p4.w, vv[3][u], o[rr][u]))));
      }
    }
    __syncwarp();  // the tile's P is read before the next tile writes it
  }

#pragma unroll
  for (int rr = 0; rr < ROWS; rr++)
#pragma unroll
    for (int off = 16; off > 0; off /= 2) l[rr] += __shfl_xor_sync(0xffffffffu, l[rr], off);

  // The warps' states, merged one warp at a time into qs (o), merged_m and merged_l.
  __syncthreads();  // every warp is done reading q
  for (int w = 0; w < WARPS; w++) {
    if (warp == w) {
      float a[ROWS], b[ROWS];
#pragma unroll
      for (int rr = 0; rr < ROWS; rr++) {
        const float m_old = w == 0 ? GC_ATTN_NEG_INF : merged_m[rr];
        const float m_new = fmaxf(m_old, m[rr]);
        const float base = m_new == GC_ATTN_NEG_INF ? 0.f : m_new;
        a[rr] = gc_exp2(m_old - base);
        b[rr] = gc_exp2(m[rr] - base);
        m[rr] = m_new;
      }
      __syncwarp();  // every lane has read the merged maxima before lane 0 rewrites them
#pragma unroll
      for (int rr = 0; rr < ROWS; rr++) {
#pragma unroll
        for (int u = 0; u < COLS; u++) {
          const int c = lane + 32 * u;
          if (c < DP) qs[rr][c] = (w == 0 ? 0.f : qs[rr][c] * a[rr]) + o[rr][u] * b[rr];
        }
        if (lane == 0) {
          merged_l[rr] = (w == 0 ? 0.f : merged_l[rr] * a[rr]) + l[rr] * b[rr];
          merged_m[rr] = m[rr];
        }
      }
    }
    __syncthreads();
  }

  const DecodeOut dst = {out, lse, part_ml, part_o, splits, d};
  for (int i = threadIdx.x; i < ROWS * DP; i += THREADS) {
    const int r = i / DP, c = i % DP;
    if (r < blk.tile_rows) gc_decode_store_col(dst, blk.row0 + r, blk.split, c, qs[r][c], gc_attn_inverse(merged_l[r]));
  }
  for (int r = threadIdx.x; r < blk.tile_rows; r += THREADS) gc_decode_store_stats(dst, blk.row0 + r, blk.split, merged_m[r], merged_l[r]);
}
