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

// One operand's slice, BK deep and BX wide (BX = BM for A, BN for B), staged k-major in shared
// memory (S[k][x], row stride BX + 4) whatever its layout in global memory: K_CONTIG when k is
// the contiguous index there (A as stored, Bᵀ), else x is (Aᵀ, B as stored). A thread loads its
// share into registers (zeros outside the matrix) while the previous slice is multiplied, then
// stores it; with VEC the global reads are 16 bytes and so are the x-contiguous shared stores.
// Its share is COUNT pieces of E elements, ROW_STEP rows apart in one column of the matrix as
// stored; everything but the slice's k offset is fixed for the whole product, so it is computed
// once and a slice costs a pointer step and a bound per piece.
template <int BX, bool K_CONTIG, bool VEC> struct SliceLoader {
  static constexpr int STRIDE = BX + 4;
  static constexpr int E = VEC ? 4 : 1;  // elements per global load
  static constexpr int COLS = K_CONTIG ? BK : BX;
  static constexpr int CPR = COLS / E;  // loads per row of the slice as stored
  static constexpr int ROW_STEP = THREADS / CPR;
  static constexpr int COUNT = (K_CONTIG ? BX : BK) / ROW_STEP;
  static constexpr int REGS = COUNT * E;
  static_assert(THREADS % CPR == 0 && COUNT * ROW_STEP == (K_CONTIG ? BX : BK), "each thread loads whole pieces of one column of the slice");

  const T* src;   // this thread's first piece of the next slice
  idx_t step;     // elements between its pieces (ROW_STEP matrix rows)
  idx_t advance;  // elements from one slice to the next
  int dst;        // shared index of its first piece's first element
  int rows_left;  // matrix rows from its first piece's row on (k-rows shrink by BK per slice)
  int cols_left;  // matrix columns from its first piece's column on (k-columns shrink by BK per slice)

  // `base` is the x_extent × k (K_CONTIG) or k × x_extent matrix; x0 the block's first x.
  __device__ __forceinline__ SliceLoader(const T* base, int x_extent, int k, int x0) {
    const int r0 = threadIdx.x / CPR, c0 = (threadIdx.x % CPR) * E;
    if (K_CONTIG) {
      src = base + (idx_t)(x0 + r0) * k + c0;
      rows_left = x_extent - x0 - r0;
      cols_left = k - c0;
      advance = BK;
      step = (idx_t)ROW_STEP * k;
      dst = c0 * STRIDE + r0;
    } else {
      src = base + (idx_t)r0 * x_extent + x0 + c0;
      rows_left = k - r0;
      cols_left = x_extent - x0 - c0;
      advance = (idx_t)BK * x_extent;
      step = (idx_t)ROW_STEP * x_extent;
      dst = r0 * STRIDE + c0;
    }
  }

  // The next slice into registers, then on to the slice after it.
  __device__ __forceinline__ void load(float (&r)[REGS]) {
#pragma unroll
    for (int i = 0; i < COUNT; i++) {
      const T* g = src + i * step;
      const bool row_ok = i * ROW_STEP < rows_left;
      if (VEC) {  // cols_left is then a multiple of 4
        float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
        if (row_ok && cols_left > 0) v = *reinterpret_cast<const float4*>(reinterpret_cast<const float*>(g));
        r[i * 4 + 0] = v.x;
        r[i * 4 + 1] = v.y;
        r[i * 4 + 2] = v.z;
        r[i * 4 + 3] = v.w;
      } else {
        r[i] = row_ok && cols_left > 0 ? to_float(*g) : 0.f;
      }
    }
    src += advance;
    if (K_CONTIG) {
      cols_left -= BK;
    } else {
      rows_left -= BK;
    }
  }

  // The registers of `load` into S[k][x].
  __device__ __forceinline__ void store(float* s, const float (&r)[REGS]) const {
#pragma unroll
    for (int i = 0; i < COUNT; i++) {
      if (K_CONTIG) {  // piece i is x = row, k = column ... column + E - 1
#pragma unroll
        for (int j = 0; j < E; j++) s[dst + j * STRIDE + i * ROW_STEP] = r[i * E + j];
      } else if (VEC) {  // piece i is k = row, x = column ... column + 3
        *reinterpret_cast<float4*>(s + dst + i * ROW_STEP * STRIDE) = make_float4(r[i * 4], r[i * 4 + 1], r[i * 4 + 2], r[i * 4 + 3]);
      } else {
        s[dst + i * ROW_STEP * STRIDE] = r[i];
      }
    }
  }
};

typedef SliceLoader<BM, !TRANS_A, VEC_A> LoaderA;  // A is m × k as stored, k × m transposed
typedef SliceLoader<BN, TRANS_B, VEC_B> LoaderB;   // B is k × n as stored, n × k transposed
static_assert(LoaderA::STRIDE == SA && LoaderB::STRIDE == SB, "the inner loop reads the loaders' layout");

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

  float ra[LoaderA::REGS], rb[LoaderB::REGS];
  LoaderA loader_a(a, m, k, tile.m0);
  LoaderB loader_b(b, n, k, tile.n0);
  const int k_tiles = (k + BK - 1) / BK;
  loader_a.load(ra);
  loader_b.load(rb);
  loader_a.store(as[0], ra);
  loader_b.store(bs[0], rb);
  __syncthreads();

  for (int kt = 0; kt < k_tiles; kt++) {
    const int cur = kt & 1;
    // Unconditional: past the last slice every load is predicated off by its k bound. A branch
    // here let the compiler sink the loads below the FFMAs, which exposed their latency.
    loader_a.load(ra);
    loader_b.load(rb);
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
    loader_a.store(as[cur ^ 1], ra);
    loader_b.store(bs[cur ^ 1], rb);
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
          if (col + j < n) ep.out[(idx_t)row * n + col + j] = gc_epilogue_value(ep, acc[i][s * 4 + j], n, row, col + j);
        }
      }
    }
  }
}
