// GEMM on CUDA cores in full f32 (no tensor cores, no TF32): out = act(alpha·op(A)·op(B) + beta·C + bias).
// It is the f32 kernel, and for f16/bf16 the fallback on GPUs without mma.sync (before sm_80):
// those are widened to f32 on load and rounded once on store.
//
// Tiling: a block computes a GC_BM × GC_BN tile of the output from GC_BK-deep slices of
// A and B staged in shared memory; each warp owns a GC_WM × GC_WN sub-tile and each
// thread a GC_TM × GC_TN register tile made of 4 × 4 pieces spread across the warp tile,
// so the shared-memory reads are 16-byte, conflict-free or broadcast.
// Pipeline: the next slice is loaded from global memory into registers while the current
// one is multiplied out of one of two shared buffers (one barrier per slice).
// A is kept k-major in shared memory (As[k][m]) and B as Bs[k][n] whatever the transposes,
// so the inner loop is the same for all four; loads transpose on the way in.
//
// Module defines (one compiled module per combination):
//   GC_DTYPE                                   GC_F32 (default), GC_F16 or GC_BF16: storage type
//   GC_BM GC_BN GC_BK GC_WM GC_WN GC_TM GC_TN  tile shape
//   GC_MIN_BLOCKS                              blocks per SM the register allocation must allow
//   GC_TRANS_A GC_TRANS_B                      0/1: op(A) = Aᵀ (A stored k × m), op(B) = Bᵀ (B stored n × k)
//   GC_VEC_A GC_VEC_B GC_VEC_C                 0/1: 16-byte accesses, f32 only (the host sets them only when
//                                              the contiguous extent is a multiple of 4 and the base is aligned)
// Edges are bounds-checked (zero-filled loads, guarded stores): any m, n, k.
#ifndef GC_DTYPE
#define GC_DTYPE GC_F32
#endif
#include "matmul_epilogue.cuh"
#include "matmul_tile.cuh"

namespace {

constexpr int BM = GC_BM, BN = GC_BN, BK = GC_BK;
constexpr int WM = GC_WM, WN = GC_WN, TM = GC_TM, TN = GC_TN;
constexpr bool TRANS_A = GC_TRANS_A, TRANS_B = GC_TRANS_B;
constexpr bool VEC_A = GC_VEC_A, VEC_B = GC_VEC_B, VEC_C = GC_VEC_C;

constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN;
constexpr int THREADS = WARPS_M * WARPS_N * 32;
constexpr int LN = WN / TN;  // lanes across a warp tile's columns
constexpr int LM = WM / TM;  // lanes across its rows
constexpr int SUB_M = TM / 4, SUB_N = TN / 4;
constexpr int SUB_STRIDE_M = WM / SUB_M, SUB_STRIDE_N = WN / SUB_N;
// 4 floats of padding keep rows 16-byte aligned and spread the transposing stores over all banks.
constexpr int SA = BM + 4, SB = BN + 4;

static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles must divide the block tile");
static_assert(TM % 4 == 0 && TN % 4 == 0, "thread tiles are made of 4x4 pieces");
static_assert(LM * LN == 32, "a warp's lanes must cover its tile exactly");
static_assert(BK % 4 == 0, "BK must be a multiple of 4");
static_assert(GC_DTYPE == GC_F32 || !(VEC_A || VEC_B || VEC_C), "16-byte accesses are for f32 storage");

constexpr int A_VEC_LOADS = BM * BK / 4 / THREADS;
constexpr int B_VEC_LOADS = BN * BK / 4 / THREADS;
constexpr int A_LOADS = BM * BK / THREADS;
constexpr int B_LOADS = BN * BK / THREADS;
static_assert(A_VEC_LOADS * 4 * THREADS == BM * BK && B_VEC_LOADS * 4 * THREADS == BN * BK,
              "each thread loads whole 16-byte pieces of both tiles");

constexpr int A_STAGE = VEC_A ? A_VEC_LOADS * 4 : A_LOADS;
constexpr int B_STAGE = VEC_B ? B_VEC_LOADS * 4 : B_LOADS;

// Loads this thread's share of the A slice at (m0, k0) into registers (zeros outside the matrix).
__device__ __forceinline__ void load_a(float (&r)[A_STAGE], const T* __restrict__ a, int m, int k, int m0, int k0) {
  const int tid = threadIdx.x;
  if (VEC_A) {
#pragma unroll
    for (int i = 0; i < A_VEC_LOADS; i++) {
      const int f = tid + i * THREADS;
      int gm, gk;
      if (!TRANS_A) {
        gm = m0 + f / (BK / 4);
        gk = k0 + (f % (BK / 4)) * 4;
      } else {
        gk = k0 + f / (BM / 4);
        gm = m0 + (f % (BM / 4)) * 4;
      }
      float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
      if (gm < m && gk < k) v = *reinterpret_cast<const float4*>(reinterpret_cast<const float*>(a) + (TRANS_A ? (idx_t)gk * m + gm : (idx_t)gm * k + gk));
      r[i * 4 + 0] = v.x;
      r[i * 4 + 1] = v.y;
      r[i * 4 + 2] = v.z;
      r[i * 4 + 3] = v.w;
    }
  } else {
#pragma unroll
    for (int i = 0; i < A_LOADS; i++) {
      const int f = tid + i * THREADS;
      int gm, gk;
      if (!TRANS_A) {
        gm = m0 + f / BK;
        gk = k0 + f % BK;
      } else {
        gk = k0 + f / BM;
        gm = m0 + f % BM;
      }
      r[i] = (gm < m && gk < k) ? to_float(a[TRANS_A ? (idx_t)gk * m + gm : (idx_t)gm * k + gk]) : 0.f;
    }
  }
}

// Stores the registers of load_a into As[k][m].
__device__ __forceinline__ void store_a(float* as, const float (&r)[A_STAGE]) {
  const int tid = threadIdx.x;
  if (VEC_A) {
#pragma unroll
    for (int i = 0; i < A_VEC_LOADS; i++) {
      const int f = tid + i * THREADS;
      if (!TRANS_A) {
        const int row = f / (BK / 4), kq = (f % (BK / 4)) * 4;
#pragma unroll
        for (int j = 0; j < 4; j++) as[(kq + j) * SA + row] = r[i * 4 + j];
      } else {
        const int kk = f / (BM / 4), mq = (f % (BM / 4)) * 4;
        *reinterpret_cast<float4*>(as + kk * SA + mq) = make_float4(r[i * 4], r[i * 4 + 1], r[i * 4 + 2], r[i * 4 + 3]);
      }
    }
  } else {
#pragma unroll
    for (int i = 0; i < A_LOADS; i++) {
      const int f = tid + i * THREADS;
      if (!TRANS_A) {
        as[(f % BK) * SA + f / BK] = r[i];
      } else {
        as[(f / BM) * SA + f % BM] = r[i];
      }
    }
  }
}

// Loads this thread's share of the B slice at (k0, n0) into registers.
__device__ __forceinline__ void load_b(float (&r)[B_STAGE], const T* __restrict__ b, int n, int k, int n0, int k0) {
  const int tid = threadIdx.x;
  if (VEC_B) {
#pragma unroll
    for (int i = 0; i < B_VEC_LOADS; i++) {
      const int f = tid + i * THREADS;
      int gn, gk;
      if (!TRANS_B) {
        gk = k0 + f / (BN / 4);
        gn = n0 + (f % (BN / 4)) * 4;
      } else {
        gn = n0 + f / (BK / 4);
        gk = k0 + (f % (BK / 4)) * 4;
      }
      float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
      if (gn < n && gk < k) v = *reinterpret_cast<const float4*>(reinterpret_cast<const float*>(b) + (TRANS_B ? (idx_t)gn * k + gk : (idx_t)gk * n + gn));
      r[i * 4 + 0] = v.x;
      r[i * 4 + 1] = v.y;
      r[i * 4 + 2] = v.z;
      r[i * 4 + 3] = v.w;
    }
  } else {
#pragma unroll
    for (int i = 0; i < B_LOADS; i++) {
      const int f = tid + i * THREADS;
      int gn, gk;
      if (!TRANS_B) {
        gk = k0 + f / BN;
        gn = n0 + f % BN;
      } else {
        gn = n0 + f / BK;
        gk = k0 + f % BK;
      }
      r[i] = (gn < n && gk < k) ? to_float(b[TRANS_B ? (idx_t)gn * k + gk : (idx_t)gk * n + gn]) : 0.f;
    }
  }
}

// Stores the registers of load_b into Bs[k][n].
__device__ __forceinline__ void store_b(float* bs, const float (&r)[B_STAGE]) {
  const int tid = threadIdx.x;
  if (VEC_B) {
#pragma unroll
    for (int i = 0; i < B_VEC_LOADS; i++) {
      const int f = tid + i * THREADS;
      if (!TRANS_B) {
        const int kk = f / (BN / 4), nq = (f % (BN / 4)) * 4;
        *reinterpret_cast<float4*>(bs + kk * SB + nq) = make_float4(r[i * 4], r[i * 4 + 1], r[i * 4 + 2], r[i * 4 + 3]);
      } else {
        const int col = f / (BK / 4), kq = (f % (BK / 4)) * 4;
#pragma unroll
        for (int j = 0; j < 4; j++) bs[(kq + j) * SB + col] = r[i * 4 + j];
      }
    }
  } else {
#pragma unroll
    for (int i = 0; i < B_LOADS; i++) {
      const int f = tid + i * THREADS;
      if (!TRANS_B) {
        bs[(f / BN) * SB + f % BN] = r[i];
      } else {
        bs[(f % BK) * SB + f / BK] = r[i];
      }
    }
  }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS, GC_MIN_BLOCKS) matmul_f32(const T* __restrict__ a, const T* __restrict__ b,
                                                                  T* __restrict__ out, const T* __restrict__ c,
                                                                  const T* __restrict__ bias, int m, int n, int k,
                                                                  long long a_batch_stride, long long b_batch_stride,
                                                                  long long c_batch_stride, float alpha, float beta,
                                                                  int act) {
  __shared__ __align__(16) float as[2][BK * SA];
  __shared__ __align__(16) float bs[2][BK * SB];

  const TileCoord tile = gc_tile_coord(m, n, BM, BN);
  const long long z = blockIdx.z;
  a += z * a_batch_stride;
  b += z * b_batch_stride;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;
  const int lm = lane / LN, ln = lane % LN;

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; i++)
#pragma unroll
    for (int j = 0; j < TN; j++) acc[i][j] = 0.f;

  float ra[A_STAGE], rb[B_STAGE];
  const int k_tiles = (k + BK - 1) / BK;
  load_a(ra, a, m, k, tile.m0, 0);
  load_b(rb, b, n, k, tile.n0, 0);
  store_a(as[0], ra);
  store_b(bs[0], rb);
  __syncthreads();

  for (int kt = 0; kt < k_tiles; kt++) {
    const int cur = kt & 1;
    const bool more = kt + 1 < k_tiles;
    if (more) {
      load_a(ra, a, m, k, tile.m0, (kt + 1) * BK);
      load_b(rb, b, n, k, tile.n0, (kt + 1) * BK);
    }
    const float* at = as[cur];
    const float* bt = bs[cur];
#pragma unroll
    for (int kk = 0; kk < BK; kk++) {
      float fa[TM], fb[TN];
#pragma unroll
      for (int s = 0; s < SUB_M; s++) {
        const float4 v = *reinterpret_cast<const float4*>(at + kk * SA + wm0 + s * SUB_STRIDE_M + lm * 4);
        fa[s * 4 + 0] = v.x;
        fa[s * 4 + 1] = v.y;
        fa[s * 4 + 2] = v.z;
        fa[s * 4 + 3] = v.w;
      }
#pragma unroll
      for (int s = 0; s < SUB_N; s++) {
        const float4 v = *reinterpret_cast<const float4*>(bt + kk * SB + wn0 + s * SUB_STRIDE_N + ln * 4);
        fb[s * 4 + 0] = v.x;
        fb[s * 4 + 1] = v.y;
        fb[s * 4 + 2] = v.z;
        fb[s * 4 + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = fmaf(fa[i], fb[j], acc[i][j]);
    }
    if (more) {
      store_a(as[cur ^ 1], ra);
      store_b(bs[cur ^ 1], rb);
    }
    __syncthreads();
  }

  // Epilogue straight from registers: each row piece is 4 consecutive columns.
  Epilogue<T> ep;
  ep.out = out + z * (long long)m * n;
  ep.c = c ? c + z * c_batch_stride : nullptr;
  ep.bias = bias;
  ep.alpha = alpha;
  ep.beta = beta;
  ep.act = act;
#pragma unroll
  for (int i = 0; i < TM; i++) {
    const int row = tile.m0 + wm0 + (i / 4) * SUB_STRIDE_M + lm * 4 + i % 4;
    if (row >= m) continue;
#pragma unroll
    for (int s = 0; s < SUB_N; s++) {
      const int col = tile.n0 + wn0 + s * SUB_STRIDE_N + ln * 4;
      if (VEC_C && col + 3 < n) {  // T is float here
        float4 v = make_float4(alpha * acc[i][s * 4], alpha * acc[i][s * 4 + 1], alpha * acc[i][s * 4 + 2], alpha * acc[i][s * 4 + 3]);
        if (ep.c) {
          const float4 cv = *reinterpret_cast<const float4*>(reinterpret_cast<const float*>(ep.c) + (idx_t)row * n + col);
          v.x += beta * cv.x;
          v.y += beta * cv.y;
          v.z += beta * cv.z;
          v.w += beta * cv.w;
        }
        if (bias) {
          const float4 bv = *reinterpret_cast<const float4*>(reinterpret_cast<const float*>(bias) + col);
          v.x += bv.x;
          v.y += bv.y;
          v.z += bv.z;
          v.w += bv.w;
        }
        v.x = gc_activate(v.x, act);
        v.y = gc_activate(v.y, act);
        v.z = gc_activate(v.z, act);
        v.w = gc_activate(v.w, act);
        *reinterpret_cast<float4*>(reinterpret_cast<float*>(ep.out) + (idx_t)row * n + col) = v;
      } else {
#pragma unroll
        for (int j = 0; j < 4; j++) {
          if (col + j < n) ep.out[(idx_t)row * n + col + j] = gc_epilogue_value(ep, acc[i][s * 4 + j], ep.c, n, row, col + j);
        }
      }
    }
  }
}
