// Attention backward for f16/bf16 on tensor cores (mma.sync m16n8k16, f32 accumulation, sm_80+),
// FlashAttention-2's algorithm (the equations are in attention_backward.cu):
//
// A block of GC_WARPS warps owns BC = 16·GC_WARPS keys of one (batch, k/v head), each warp 16 of
// them, with their K and V rows in shared memory for the whole launch. It walks the query rows of
// every query head that reads the k/v head, GC_BR rows at a time, their Q and dOut tiles (and
// the rows' lse and D) double-buffered through cp.async. Per tile, each warp computes the
// transposed products for its keys, so what it accumulates stays in its registers:
//   Sᵀ = K·Qᵀ and dPᵀ = V·dOutᵀ (K and V the A operands, Q and dOut read as stored, keys × queries),
//   Pᵀ = 2^(Sᵀ·scale·log2 e − lse·log2 e) (0 where masked), dSᵀ = Pᵀ ∘ (dPᵀ − D),
//   dV += Pᵀ·dOut and dK += dSᵀ·Q (Pᵀ and dSᵀ repacked from the accumulators straight into A
//   fragments over the queries, rounded to 16 bits; Q and dOut through ldmatrix.trans).
// dSᵀ also goes to shared memory (16 bits), and after a barrier the warps compute this tile's
// share of dq = scale·dS·K (dS through ldmatrix.trans of dSᵀ, K through ldmatrix.trans), each a
// 16-row tile and a slice of the columns, and add it to the f32 dq accumulator with atomics.
// dK (scaled) and dV are stored once at the end. Under the causal mask the walk starts at the
// tile holding the block's first key; a block whose keys are all padding stores zeros.
//
// Module defines: GC_DTYPE (GC_F16 or GC_BF16), GC_HEAD_DIM (the head dim rounded up to a
// multiple of 16, at most 128; padding columns read as zero), GC_WARPS, GC_BR (a multiple of 16),
// GC_ALIGNED (1: rows of q, k, v, dOut are whole 16-byte chunks at 16-byte-aligned bases, so tiles
// load with cp.async; 0: element by element).
// Dynamic shared memory (bytes): 2·(2·BC·LD + 4·BR·LD + BC·LDS) + 16·BR, LD = DP + 8, LDS = BR + 8:
// K and V, two stages of Q and dOut, dSᵀ, then two stages of the rows' lse and D (f32).
#include "attention_backward_dot.cuh"
#include "attention_tc.cuh"
#include "matmul_mma.cuh"

namespace {

constexpr int DP = GC_HEAD_DIM, WARPS = GC_WARPS, BR = GC_BR;
constexpr bool ALIGNED = GC_ALIGNED;
constexpr int THREADS = WARPS * 32;
constexpr int BC = WARPS * 16;  // keys per block, 16 per warp
constexpr int KD = DP / 16;     // k-steps over the head dim, and 16-column groups of dK, dV, dq
constexpr int NQ = BR / 8;      // 8-query tiles of a warp's Sᵀ
constexpr int LD = DP + 8;      // row stride of K, V, Q, dOut: 16 bytes of padding spread ldmatrix rows over the banks
constexpr int LDS = BR + 8;     // row stride of dSᵀ
constexpr int CHUNK = 8;        // elements per 16-byte copy
constexpr int QT = BR / 16;     // 16-row tiles of dq per query tile
constexpr int SPLIT = WARPS / QT;  // warps sharing a dq row tile, each taking NDQ of its 16-column groups
constexpr int NDQ = KD / SPLIT;
static_assert(DP % 16 == 0 && DP <= 128 && BR % 16 == 0, "tiles are multiples of 16, head dims up to 128");
static_assert(WARPS % QT == 0 && KD % SPLIT == 0, "the warps split dq's tiles evenly");

__device__ __forceinline__ void mma(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
#if GC_DTYPE == GC_F16
  gc_mma_f16(d, a, b0, b1);
#else
  gc_mma_bf16(d, a, b0, b1);
#endif
}

// Byte offsets, within a tile of row stride S, of the row this lane addresses for ldmatrix.x4:
// a 16x16 A fragment as stored (rows = its rows); two 8-row B fragments as stored (rows = the
// B operand's columns), which with .trans is also a 16x16 A fragment of the transposed tile; two
// 8-column B fragments of a transposed load (rows = the reduction dim).
template <int S> __device__ __forceinline__ unsigned a_lane_offset() {
  const int lane = threadIdx.x % 32;
  return ((lane % 16) * S + (lane / 16) * 8) * 2;
}
template <int S> __device__ __forceinline__ unsigned b_lane_offset() {
  const int q8 = threadIdx.x % 32 / 8, r8 = threadIdx.x % 8;
  return (((q8 / 2) * 8 + r8) * S + (q8 % 2) * 8) * 2;
}
template <int S> __device__ __forceinline__ unsigned bt_lane_offset() {
  const int q8 = threadIdx.x % 32 / 8, r8 = threadIdx.x % 8;
  return (((q8 % 2) * 8 + r8) * S + (q8 / 2) * 8) * 2;
}

// ROWS rows of DP elements (the first `d` real, global row stride `d`, rows from `first`) into
// shared memory of stride LD, rows past `limit` and columns past `d` zero.
template <int ROWS> __device__ __forceinline__ void load_tile(T* dst, const T* __restrict__ src, int first, int limit, int d) {
  constexpr int CHUNKS = ROWS * DP / CHUNK;
  const unsigned dst_addr = gc_smem_addr(dst);
#pragma unroll
  for (int f = threadIdx.x; f < CHUNKS; f += THREADS) {
    const int r = f / (DP / CHUNK), c = (f % (DP / CHUNK)) * CHUNK;
    const int row = first + r;
    const T* from = src + (idx_t)row * d + c;
    if (ALIGNED) {
      const bool ok = row < limit && c < d;
      gc_cp_async16_at(dst_addr + (r * LD + c) * 2, ok ? from : src, ok);
    } else {
      T e[CHUNK];
#pragma unroll
      for (int j = 0; j < CHUNK; j++) e[j] = row < limit && c + j < d ? from[j] : from_float<T>(0.f);
      *reinterpret_cast<uint4*>(dst + r * LD + c) = *reinterpret_cast<const uint4*>(e);
    }
  }
}

// Where query tile `it` of a block's walk is: the query head (of the k/v head's group) and first row.
struct QueryTile {
  int h, q0;
};

__device__ __forceinline__ QueryTile query_tile(int it, int tiles_per_head, int first, int hk, int group) {
  return {hk * group + it / tiles_per_head, first + (it % tiles_per_head) * BR};
}

// Starts the loads of query tile `tile` into stage `st`: Q and dOut rows by cp.async (or directly),
// lse (base 2, +∞ past the sequence and for rows with no key) and D by plain stores.
__device__ __forceinline__ void load_query_tile(T* sq, T* sdo, float* slse, float* sdelta, int st, QueryTile tile, const T* __restrict__ q,
                                                const T* __restrict__ d_out, const float* __restrict__ lse, const float* __restrict__ delta,
                                                int b, int heads, int seq_q, int d) {
  const idx_t row_base = ((idx_t)b * heads + tile.h) * seq_q;
  load_tile<BR>(sq + st * BR * LD, q + row_base * d, tile.q0, seq_q, d);
  load_tile<BR>(sdo + st * BR * LD, d_out + row_base * d, tile.q0, seq_q, d);
  if (threadIdx.x < BR) {
    const int row = tile.q0 + threadIdx.x;
    const bool ok = row < seq_q;
    slse[st * BR + threadIdx.x] = gc_bwd_lse2(ok ? lse[row_base + row] : GC_ATTN_NEG_INF);
    sdelta[st * BR + threadIdx.x] = ok ? delta[row_base + row] : 0.f;
  }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS)
    attention_bwd_mma(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v, const T* __restrict__ d_out,
                      const float* __restrict__ lse, const float* __restrict__ delta, const int* __restrict__ key_lengths,
                      float* __restrict__ dq, T* __restrict__ dk, T* __restrict__ dv, int pair0, int heads, int group, int seq_q,
                      int seq_k, int d, float scale, int causal) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* sk = reinterpret_cast<T*>(smem_raw);  // [BC][LD]
  T* sv = sk + BC * LD;                    // [BC][LD]
  T* sq = sv + BC * LD;                    // 2 × [BR][LD]
  T* sdo = sq + 2 * BR * LD;               // 2 × [BR][LD]
  T* sds = sdo + 2 * BR * LD;              // [BC][LDS]: dSᵀ
  float* slse = reinterpret_cast<float*>(sds + BC * LDS);  // 2 × [BR]
  float* sdelta = slse + 2 * BR;                           // 2 × [BR]

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int pair = pair0 + blockIdx.y;
  const int kv_heads = heads / group;
  const int b = pair / kv_heads, hk = pair % kv_heads;
  const int k0 = blockIdx.x * BC;
  const idx_t kv_base = (idx_t)pair * seq_k * d;
  const int valid = gc_valid_keys(key_lengths, b, seq_k);
  const float c = scale * GC_LOG2E;

  float acc_k[2 * KD][4], acc_v[2 * KD][4];  // dK and dV of the warp's 16 keys, 8 columns per tile
#pragma unroll
  for (int n = 0; n < 2 * KD; n++)
#pragma unroll
    for (int e = 0; e < 4; e++) acc_k[n][e] = acc_v[n][e] = 0.f;

  if (k0 < valid) {
    load_tile<BC>(sk, k + kv_base, k0, seq_k, d);
    load_tile<BC>(sv, v + kv_base, k0, seq_k, d);
    // Under the causal mask rows above the block's first key see none of its keys.
    const int first = causal ? (k0 / BR) * BR : 0;
    const int tiles_per_head = first < seq_q ? (seq_q - first + BR - 1) / BR : 0;
    const int tiles = group * tiles_per_head;
    if (tiles > 0) load_query_tile(sq, sdo, slse, sdelta, 0, query_tile(0, tiles_per_head, first, hk, group), q, d_out, lse, delta, b, heads, seq_q, d);
    gc_cp_async_commit();

    // This lane's ldmatrix addresses: the warp's K and V rows (A operands), K for dq (B, transposed),
    // stage 0's Q and dOut as stored (B) and transposed (B of dV and dK), and dSᵀ transposed (A of dq).
    const unsigned k_a = gc_smem_addr(sk) + warp * 16 * LD * 2 + a_lane_offset<LD>();
    const unsigned v_a = gc_smem_addr(sv) + warp * 16 * LD * 2 + a_lane_offset<LD>();
    const unsigned k_t = gc_smem_addr(sk) + bt_lane_offset<LD>();
    const unsigned q_b = gc_smem_addr(sq) + b_lane_offset<LD>();
    const unsigned do_b = gc_smem_addr(sdo) + b_lane_offset<LD>();
    const unsigned q_t = gc_smem_addr(sq) + bt_lane_offset<LD>();
    const unsigned do_t = gc_smem_addr(sdo) + bt_lane_offset<LD>();
    const int qt = warp % QT, cs = warp / QT;  // this warp's dq row tile and column slice
    const unsigned ds_a = gc_smem_addr(sds) + b_lane_offset<LDS>() + qt * 16 * 2;

    for (int it = 0; it < tiles; it++) {
      if (it + 1 < tiles) {
        load_query_tile(sq, sdo, slse, sdelta, (it + 1) & 1, query_tile(it + 1, tiles_per_head, first, hk, group), q, d_out, lse, delta, b,
                        heads, seq_q, d);
      }
      gc_cp_async_commit();
      gc_cp_async_wait<1>();
      __syncthreads();  // tile it (and K, V) landed for everyone; every warp is done with tile it − 1's dq and dSᵀ
      const int st = it & 1;
      const QueryTile tile = query_tile(it, tiles_per_head, first, hk, group);
      const unsigned stage = st * BR * LD * 2;

      float s[NQ][4], dp[NQ][4];
#pragma unroll
      for (int n = 0; n < NQ; n++)
#pragma unroll
        for (int e = 0; e < 4; e++) s[n][e] = dp[n][e] = 0.f;
#pragma unroll
      for (int kk = 0; kk < KD; kk++) {
        unsigned ka[4], va[4];
        gc_ldmatrix_x4(ka, k_a + kk * 16 * 2);
        gc_ldmatrix_x4(va, v_a + kk * 16 * 2);
#pragma unroll
        for (int nj = 0; nj < NQ / 2; nj++) {
          unsigned bq[4], bo[4];
          gc_ldmatrix_x4(bq, q_b + stage + (nj * 16 * LD + kk * 16) * 2);
          mma(s[2 * nj], ka, bq[0], bq[1]);
          mma(s[2 * nj + 1], ka, bq[2], bq[3]);
          gc_ldmatrix_x4(bo, do_b + stage + (nj * 16 * LD + kk * 16) * 2);
          mma(dp[2 * nj], va, bo[0], bo[1]);
          mma(dp[2 * nj + 1], va, bo[2], bo[3]);
        }
      }

      // Pᵀ and dSᵀ: accumulator (key g + 8h, query n·8 + 2t + e) is element [n][2h + e]; tiles 2kk and
      // 2kk + 1 of a row half are exactly the A fragment of k-step kk over the queries.
      unsigned pf[NQ / 2][4], df[NQ / 2][4];
      const float* row_lse = slse + st * BR;
      const float* row_d = sdelta + st * BR;
#pragma unroll
      for (int n = 0; n < NQ; n++) {
#pragma unroll
        for (int h = 0; h < 2; h++) {
          const int key = k0 + warp * 16 + g + 8 * h;
          float p[2], ds[2];
#pragma unroll
          for (int e = 0; e < 2; e++) {
            const int col = n * 8 + 2 * t + e;
            const bool visible = key < gc_key_limit(tile.q0 + col, valid, causal);
            p[e] = visible ? gc_exp2(fmaf(s[n][2 * h + e], c, -row_lse[col])) : 0.f;
            ds[e] = p[e] * (dp[n][2 * h + e] - row_d[col]);
          }
          pf[n / 2][(n % 2) * 2 + h] = gc_pack2(p[0], p[1]);
          const unsigned packed = gc_pack2(ds[0], ds[1]);
          df[n / 2][(n % 2) * 2 + h] = packed;
          *reinterpret_cast<unsigned*>(sds + (warp * 16 + g + 8 * h) * LDS + n * 8 + 2 * t) = packed;
        }
      }

      // dV += Pᵀ·dOut, dK += dSᵀ·Q over the tile's queries.
#pragma unroll
      for (int kk = 0; kk < BR / 16; kk++) {
#pragma unroll
        for (int nd = 0; nd < KD; nd++) {
          unsigned bo[4], bq[4];
          gc_ldmatrix_x4_trans(bo, do_t + stage + (kk * 16 * LD + nd * 16) * 2);
          mma(acc_v[2 * nd], pf[kk], bo[0], bo[1]);
          mma(acc_v[2 * nd + 1], pf[kk], bo[2], bo[3]);
          gc_ldmatrix_x4_trans(bq, q_t + stage + (kk * 16 * LD + nd * 16) * 2);
          mma(acc_k[2 * nd], df[kk], bq[0], bq[1]);
          mma(acc_k[2 * nd + 1], df[kk], bq[2], bq[3]);
        }
      }
      __syncthreads();  // dSᵀ is complete

      // This warp's share of dq = scale·dS·K: rows qt·16 .. + 16 of the tile, 16-column groups cs·NDQ .. + NDQ.
      float acc_q[2 * NDQ][4];
#pragma unroll
      for (int n = 0; n < 2 * NDQ; n++)
#pragma unroll
        for (int e = 0; e < 4; e++) acc_q[n][e] = 0.f;
#pragma unroll
      for (int kk = 0; kk < BC / 16; kk++) {
        unsigned a[4];
        gc_ldmatrix_x4_trans(a, ds_a + kk * 16 * LDS * 2);
#pragma unroll
        for (int j = 0; j < NDQ; j++) {
          unsigned bk[4];
          gc_ldmatrix_x4_trans(bk, k_t + (kk * 16 * LD + (cs * NDQ + j) * 16) * 2);
          mma(acc_q[2 * j], a, bk[0], bk[1]);
          mma(acc_q[2 * j + 1], a, bk[2], bk[3]);
        }
      }
      const idx_t row_base = ((idx_t)b * heads + tile.h) * seq_q;
#pragma unroll
      for (int h = 0; h < 2; h++) {
        const int row = tile.q0 + qt * 16 + g + 8 * h;
        if (row >= seq_q) continue;
        float* dst = dq + (row_base + row) * d;
#pragma unroll
        for (int n = 0; n < 2 * NDQ; n++) {
          const int col = (cs * NDQ + n / 2) * 16 + (n % 2) * 8 + 2 * t;
#pragma unroll
          for (int e = 0; e < 2; e++) {
            const float x = acc_q[n][2 * h + e];
            if (col + e < d && x != 0.f) atomicAdd(dst + col + e, x * scale);
          }
        }
      }
    }
    gc_cp_async_wait<0>();
  }

#pragma unroll
  for (int h = 0; h < 2; h++) {
    const int key = k0 + warp * 16 + g + 8 * h;
    if (key >= seq_k) continue;
    T* dk_row = dk + kv_base + (idx_t)key * d;
    T* dv_row = dv + kv_base + (idx_t)key * d;
#pragma unroll
    for (int n = 0; n < 2 * KD; n++) {
      const int col = n * 8 + 2 * t;
      const float k0v = acc_k[n][2 * h] * scale, k1v = acc_k[n][2 * h + 1] * scale;
      const float v0 = acc_v[n][2 * h], v1 = acc_v[n][2 * h + 1];
      if (ALIGNED) {
        // d is a multiple of 8 here, so a pair is either wholly inside the row or wholly past it.
        if (col < d) {
          *reinterpret_cast<unsigned*>(dk_row + col) = gc_pack2(k0v, k1v);
          *reinterpret_cast<unsigned*>(dv_row + col) = gc_pack2(v0, v1);
        }
      } else {
        if (col < d) {
          dk_row[col] = from_float<T>(k0v);
          dv_row[col] = from_float<T>(v0);
        }
        if (col + 1 < d) {
          dk_row[col + 1] = from_float<T>(k1v);
          dv_row[col + 1] = from_float<T>(v1);
        }
      }
    }
  }
}
