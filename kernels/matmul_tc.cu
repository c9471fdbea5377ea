// Tensor-core GEMM for sm_80 and up (mma.sync): f16 and bf16 inputs, or f32 inputs rounded
// to tf32, always accumulated in f32: out = act(alpha·op(A)·op(B) + beta·C + bias).
//
// A block computes a GC_BM × GC_BN output tile with GC_WARPS_M × GC_WARPS_N warps. Slices
// GC_BK deep stream through a GC_STAGES-deep ring of shared-memory buffers filled by
// cp.async (16-byte, zero-filled past the edges), so global loads for later slices are in
// flight while the tensor cores work on the current one. Each operand keeps its global
// layout in shared memory (rows padded by 16 bytes or more so fragment reads hit distinct
// banks); ldmatrix (.trans when the layout is m- or n-contiguous) turns it into mma fragments
// for 16-bit types, and tf32 fragments are read element-wise.
//
// Module defines:
//   GC_TC_TYPE                  GC_F16, GC_BF16 or GC_F32 (tf32 tensor cores)
//   GC_BM GC_BN GC_BK           block tile
//   GC_WARPS_M GC_WARPS_N       warp grid (warp tile = BM/WARPS_M × BN/WARPS_N)
//   GC_STAGES                   shared-memory ring depth (≥ 2)
//   GC_TRANS_A GC_TRANS_B       0/1: op(A) = Aᵀ (A stored k × m), op(B) = Bᵀ (B stored n × k)
//   GC_ALIGN_A GC_ALIGN_B       0/1: the contiguous extent is a multiple of 16 bytes and the base is
//                               16-byte aligned, so tiles load with cp.async; else element by element
// Dynamic shared memory: GC_STAGES · (A stage + B stage) bytes (the host computes the same figure).
#include "matmul_epilogue.cuh"
#include "matmul_mma.cuh"
#include "matmul_tile.cuh"

namespace {

#if GC_TC_TYPE == GC_F16
typedef f16_t T;
constexpr int MMA_K = 16;
#elif GC_TC_TYPE == GC_BF16
typedef bf16_t T;
constexpr int MMA_K = 16;
#elif GC_TC_TYPE == GC_F32
typedef float T;
constexpr int MMA_K = 8;
#else
#error "GC_TC_TYPE must be GC_F16, GC_BF16 or GC_F32"
#endif
constexpr bool TF32 = GC_TC_TYPE == GC_F32;

constexpr int BM = GC_BM, BN = GC_BN, BK = GC_BK, STAGES = GC_STAGES;
constexpr int WARPS_M = GC_WARPS_M, WARPS_N = GC_WARPS_N;
constexpr int THREADS = WARPS_M * WARPS_N * 32;
constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N;
constexpr int MI = WM / 16, NI = WN / 8;  // mma tiles per warp
constexpr bool A_KMAJOR = !GC_TRANS_A;    // A's k index is contiguous in memory
constexpr bool B_KMAJOR = GC_TRANS_B;     // B's k index is contiguous in memory
constexpr bool ALIGN_A = GC_ALIGN_A, ALIGN_B = GC_ALIGN_B;

constexpr int CHUNK = 16 / sizeof(T);  // elements per 16-byte copy
// Row padding: 16 bytes for k-contiguous rows, 32 bytes for m/n-contiguous rows of tf32 (read
// element-wise along k, the stride must be 8 banks mod 32), 16 bytes for 16-bit ones.
constexpr int PAD_K = CHUNK;
constexpr int PAD_X = TF32 ? 8 : CHUNK;
constexpr int LDA = A_KMAJOR ? BK + PAD_K : BM + PAD_X;  // shared row stride of A, in elements
constexpr int LDB = B_KMAJOR ? BK + PAD_K : BN + PAD_X;
constexpr int A_STAGE = A_KMAJOR ? BM * LDA : BK * LDA;
constexpr int B_STAGE = B_KMAJOR ? BN * LDB : BK * LDB;

static_assert(BM % (WARPS_M * 16) == 0 && BN % (WARPS_N * 16) == 0, "warp tiles are multiples of 16");
static_assert(BK % MMA_K == 0 && BK % CHUNK == 0, "BK must hold whole mma steps and 16-byte chunks");
static_assert(STAGES >= 2, "at least double buffering");
// Epilogue: once the ring has drained, each warp passes its accumulators through its own
// 16 × WN f32 buffer in the ring's memory, one 16-row slice at a time, so the epilogue is a short
// loop (not MI·NI unrolled copies, whose instruction fetches stalled the kernel) and its global
// accesses are whole warp-tile rows. Row stride WN + 8 floats: conflict-free float2 writes.
constexpr int EPI_STRIDE = WN + 8;
constexpr int EPI_FLOATS = 16 * EPI_STRIDE;
static_assert(WARPS_M * WARPS_N * EPI_FLOATS * 4 <= STAGES * (A_STAGE + B_STAGE) * (int)sizeof(T), "epilogue buffers fit in the ring");
constexpr int A_CHUNKS = BM * BK / CHUNK, B_CHUNKS = BN * BK / CHUNK;
static_assert(A_CHUNKS % THREADS == 0 && B_CHUNKS % THREADS == 0, "each thread copies whole chunks");

// Copies one CHUNK of an operand: `rows` × `cols` is the matrix in memory (row-major), (r, c) the
// chunk's first element; zero-filled past the matrix.
template <bool ALIGNED>
__device__ __forceinline__ void copy_chunk(T* dst, const T* __restrict__ src, int rows, int cols, int r, int c) {
  if (ALIGNED) {
    const bool valid = r < rows && c < cols;
    gc_cp_async16(dst, valid ? src + (idx_t)r * cols + c : src, valid);
  } else {
    T v[CHUNK];
#pragma unroll
    for (int j = 0; j < CHUNK; j++) {
      if (r < rows && c + j < cols) {
        v[j] = src[(idx_t)r * cols + c + j];
      } else {
        v[j] = from_float<T>(0.f);
      }
    }
    *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(v);
  }
}

// Issues the copies of slice `kt` of A and B into ring stage `sa`/`sb`.
__device__ __forceinline__ void load_slice(T* sa, T* sb, const T* __restrict__ a, const T* __restrict__ b, int m, int n,
                                           int k, int m0, int n0, int k0) {
  const int tid = threadIdx.x;
#pragma unroll
  for (int i = 0; i < A_CHUNKS / THREADS; i++) {
    const int f = tid + i * THREADS;
    if (A_KMAJOR) {  // A is m × k: BM rows of BK
      const int row = f / (BK / CHUNK), col = (f % (BK / CHUNK)) * CHUNK;
      copy_chunk<ALIGN_A>(sa + row * LDA + col, a, m, k, m0 + row, k0 + col);
    } else {  // A is k × m: BK rows of BM
      const int row = f / (BM / CHUNK), col = (f % (BM / CHUNK)) * CHUNK;
      copy_chunk<ALIGN_A>(sa + row * LDA + col, a, k, m, k0 + row, m0 + col);
    }
  }
#pragma unroll
  for (int i = 0; i < B_CHUNKS / THREADS; i++) {
    const int f = tid + i * THREADS;
    if (B_KMAJOR) {  // B is n × k: BN rows of BK
      const int row = f / (BK / CHUNK), col = (f % (BK / CHUNK)) * CHUNK;
      copy_chunk<ALIGN_B>(sb + row * LDB + col, b, n, k, n0 + row, k0 + col);
    } else {  // B is k × n: BK rows of BN
      const int row = f / (BN / CHUNK), col = (f % (BN / CHUNK)) * CHUNK;
      copy_chunk<ALIGN_B>(sb + row * LDB + col, b, k, n, k0 + row, n0 + col);
    }
  }
}

// Element (row, kk) of the A stage and (kk, col) of the B stage, for the element-wise tf32 path.
__device__ __forceinline__ float a_at(const float* sa, int row, int kk) { return A_KMAJOR ? sa[row * LDA + kk] : sa[kk * LDA + row]; }
__device__ __forceinline__ float b_at(const float* sb, int kk, int col) { return B_KMAJOR ? sb[col * LDB + kk] : sb[kk * LDB + col]; }

// One MMA_K step of the warp tile: fragments for MI × NI tiles from the stage, then the mmas.
__device__ __forceinline__ void mma_step(float (&acc)[MI][NI][4], const T* sa, const T* sb, int wm0, int wn0, int kb) {
  const int lane = threadIdx.x % 32;
  unsigned fa[MI][4];
  unsigned fb[NI][2];
  if (TF32) {
    const float* fsa = reinterpret_cast<const float*>(sa);
    const float* fsb = reinterpret_cast<const float*>(sb);
    const int g = lane / 4, t = lane % 4;
#pragma unroll
    for (int mi = 0; mi < MI; mi++) {
      const int r = wm0 + mi * 16 + g;
      fa[mi][0] = gc_to_tf32(a_at(fsa, r, kb + t));
      fa[mi][1] = gc_to_tf32(a_at(fsa, r + 8, kb + t));
      fa[mi][2] = gc_to_tf32(a_at(fsa, r, kb + t + 4));
      fa[mi][3] = gc_to_tf32(a_at(fsa, r + 8, kb + t + 4));
    }
#pragma unroll
    for (int ni = 0; ni < NI; ni++) {
      const int col = wn0 + ni * 8 + g;
      fb[ni][0] = gc_to_tf32(b_at(fsb, kb + t, col));
      fb[ni][1] = gc_to_tf32(b_at(fsb, kb + t + 4, col));
    }
  } else {
    const int q = lane / 8, r8 = lane % 8;
#pragma unroll
    for (int mi = 0; mi < MI; mi++) {
      const int m_base = wm0 + mi * 16;
      if (A_KMAJOR) {
        gc_ldmatrix_x4(fa[mi], sa + (m_base + lane % 16) * LDA + kb + (lane / 16) * 8);
      } else {
        gc_ldmatrix_x4_trans(fa[mi], sa + (kb + (q / 2) * 8 + r8) * LDA + m_base + (q % 2) * 8);
      }
    }
#pragma unroll
    for (int nj = 0; nj < NI / 2; nj++) {
      const int n_base = wn0 + nj * 16;
      unsigned r[4];
      if (B_KMAJOR) {
        gc_ldmatrix_x4(r, sb + (n_base + (q / 2) * 8 + r8) * LDB + kb + (q % 2) * 8);
      } else {
        gc_ldmatrix_x4_trans(r, sb + (kb + (q % 2) * 8 + r8) * LDB + n_base + (q / 2) * 8);
      }
      fb[2 * nj][0] = r[0];
      fb[2 * nj][1] = r[1];
      fb[2 * nj + 1][0] = r[2];
      fb[2 * nj + 1][1] = r[3];
    }
  }
#pragma unroll
  for (int mi = 0; mi < MI; mi++)
#pragma unroll
    for (int ni = 0; ni < NI; ni++) {
#if GC_TC_TYPE == GC_F16
      gc_mma_f16(acc[mi][ni], fa[mi], fb[ni][0], fb[ni][1]);
#elif GC_TC_TYPE == GC_BF16
      gc_mma_bf16(acc[mi][ni], fa[mi], fb[ni][0], fb[ni][1]);
#else
      gc_mma_tf32(acc[mi][ni], fa[mi], fb[ni][0], fb[ni][1]);
#endif
    }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    matmul_tc(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out, const T* __restrict__ c,
              const T* __restrict__ bias, int m, int n, int k, long long a_batch_stride, long long b_batch_stride,
              long long c_batch_stride, float alpha, float beta, int act) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* smem = reinterpret_cast<T*>(smem_raw);

  const TileCoord tile = gc_tile_coord(m, n, BM, BN);
  const long long z = blockIdx.z;
  a += z * a_batch_stride;
  b += z * b_batch_stride;

  const int warp = threadIdx.x / 32;
  const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;

  float acc[MI][NI][4];
#pragma unroll
  for (int mi = 0; mi < MI; mi++)
#pragma unroll
    for (int ni = 0; ni < NI; ni++)
#pragma unroll
      for (int j = 0; j < 4; j++) acc[mi][ni][j] = 0.f;

  const int k_tiles = (k + BK - 1) / BK;
#pragma unroll
  for (int s = 0; s < STAGES - 1; s++) {
    if (s < k_tiles) load_slice(smem + s * (A_STAGE + B_STAGE), smem + s * (A_STAGE + B_STAGE) + A_STAGE, a, b, m, n, k, tile.m0, tile.n0, s * BK);
    gc_cp_async_commit();
  }

  for (int kt = 0; kt < k_tiles; kt++) {
    gc_cp_async_wait<STAGES - 2>();
    __syncthreads();  // slice kt is in shared memory for everyone, and slice kt-1's stage is free
    const int next = kt + STAGES - 1;
    if (next < k_tiles) {
      T* st = smem + (next % STAGES) * (A_STAGE + B_STAGE);
      load_slice(st, st + A_STAGE, a, b, m, n, k, tile.m0, tile.n0, next * BK);
    }
    gc_cp_async_commit();
    const T* st = smem + (kt % STAGES) * (A_STAGE + B_STAGE);
#pragma unroll
    for (int kb = 0; kb < BK; kb += MMA_K) mma_step(acc, st, st + A_STAGE, wm0, wn0, kb);
  }
  gc_cp_async_wait<0>();
  __syncthreads();  // every warp is done with the ring before it holds epilogue buffers

  Epilogue<T> ep;
  ep.out = out + z * (long long)m * n;
  ep.c = c ? c + z * c_batch_stride : nullptr;
  ep.bias = bias;
  ep.alpha = alpha;
  ep.beta = beta;
  ep.act = act;
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  float* const epi = reinterpret_cast<float*>(smem_raw) + warp * EPI_FLOATS;
#pragma unroll
  for (int mi = 0; mi < MI; mi++) {
#pragma unroll
    for (int ni = 0; ni < NI; ni++) {
      *reinterpret_cast<float2*>(epi + g * EPI_STRIDE + ni * 8 + 2 * t) = make_float2(acc[mi][ni][0], acc[mi][ni][1]);
      *reinterpret_cast<float2*>(epi + (g + 8) * EPI_STRIDE + ni * 8 + 2 * t) = make_float2(acc[mi][ni][2], acc[mi][ni][3]);
    }
    __syncwarp();
    const int row0 = tile.m0 + wm0 + mi * 16;
#pragma unroll 1
    for (int e = lane; e < 16 * WN; e += 32) {
      const int r = e / WN, cl = e % WN;
      const int row = row0 + r, col = tile.n0 + wn0 + cl;
      if (row < m && col < n) ep.out[(idx_t)row * n + col] = gc_epilogue_value(ep, epi[r * EPI_STRIDE + cl], ep.c, n, row, col);
    }
    __syncwarp();  // the buffer is rewritten by the next slice
  }
}
