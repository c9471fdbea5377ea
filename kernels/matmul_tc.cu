// Tensor-core GEMM for sm_80 and up (mma.sync): f16 and bf16 inputs, or f32 inputs rounded
// to tf32, always accumulated in f32: out = act(alpha·op(A)·op(B) + beta·C + bias).
//
// A block computes a GC_BM × GC_BN output tile with GC_WARPS_M × GC_WARPS_N warps. Slices
// GC_BK deep stream through a GC_STAGES-deep ring of shared-memory buffers filled by
// cp.async (16-byte, zero-filled past the edges), so global loads for later slices are in
// flight while the tensor cores work on the current one; one barrier per slice, and the
// fragments of the next k-step are read while the mmas of the current one run (double-buffered
// in registers, across slice boundaries too). Each operand keeps its global
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
// 16 × WN f32 buffer in the ring's memory, one 16-row slice at a time, and reads it back as four
// consecutive columns per lane (a 16-byte read, one vector store). Row stride WN + 8 floats:
// conflict-free float2 writes.
constexpr int EPI_STRIDE = WN + 8;
constexpr int EPI_FLOATS = 16 * EPI_STRIDE;
constexpr int EPI_QUADS = WN / 4, EPI_ROW_STEP = 32 / EPI_QUADS, EPI_STEPS = 16 / EPI_ROW_STEP;
static_assert(32 % EPI_QUADS == 0, "a warp reads whole buffer rows of four-column pieces");
static_assert(WARPS_M * WARPS_N * EPI_FLOATS * 4 <= STAGES * (A_STAGE + B_STAGE) * (int)sizeof(T), "epilogue buffers fit in the ring");
constexpr int KSTEPS = BK / MMA_K;
// Fragment sets in registers: two (the next k-step's are read while this one's mmas run) for
// 16-bit types copied by cp.async; one for tf32, whose element-wise fragment reads, and for
// element-wise slice copies, which leave no registers for a second set on 64 × 64 warp tiles.
constexpr int FRAG_BUFFERS = TF32 || !ALIGN_A || !ALIGN_B ? 1 : 2;
static_assert(KSTEPS % FRAG_BUFFERS == 0, "every slice starts in fragment set 0");
constexpr int STAGE_BYTES = (A_STAGE + B_STAGE) * (int)sizeof(T);
constexpr int B_OFFSET = A_STAGE * (int)sizeof(T);  // B's bytes within a stage

// One thread's share of copying an operand's slices into the ring. The operand is a row-major
// matrix in global memory whose rows are x (K_CONTIG: A as stored, Bᵀ) or k (else); a slice is
// ROWS rows of COLS elements, cut into 16-byte chunks, and a thread copies COUNT chunks ROW_STEP
// rows apart in one column. Everything but the slice's k offset is fixed for the whole product,
// so it is computed once: per slice a copy is a pointer step and a row bound per chunk.
template <int BX, bool K_CONTIG, bool ALIGNED> struct SliceCopier {
  static constexpr int COLS = K_CONTIG ? BK : BX;
  static constexpr int ROWS = K_CONTIG ? BX : BK;
  static constexpr int CPR = COLS / CHUNK;  // chunks per row
  static constexpr int ROW_STEP = THREADS / CPR;
  static constexpr int COUNT = ROWS / ROW_STEP;
  static constexpr int LD = K_CONTIG ? BK + PAD_K : BX + PAD_X;  // shared row stride, elements
  static_assert(THREADS % CPR == 0 && ROWS % ROW_STEP == 0, "each thread copies whole chunks of one column");

  const T* src;    // this thread's first chunk of the next slice
  idx_t step;      // elements between its chunks (ROW_STEP matrix rows)
  idx_t advance;   // elements from one slice to the next
  unsigned dst;    // byte offset of its first chunk within the operand's stage
  int rows_left;   // matrix rows from its first chunk's row on (k-rows shrink by BK per slice)
  int cols_left;   // matrix columns from its first chunk's column on (k-columns shrink by BK per slice)

  // `base` is the x_extent × k (K_CONTIG) or k × x_extent matrix; x0 the block's first x.
  __device__ __forceinline__ SliceCopier(const T* base, int x_extent, int k, int x0) {
    const int r0 = threadIdx.x / CPR, c0 = (threadIdx.x % CPR) * CHUNK;
    const int ld = K_CONTIG ? k : x_extent;
    if (K_CONTIG) {
      src = base + (idx_t)(x0 + r0) * k + c0;
      rows_left = x_extent - x0 - r0;
      cols_left = k - c0;
      advance = BK;
    } else {
      src = base + (idx_t)r0 * x_extent + x0 + c0;
      rows_left = k - r0;
      cols_left = x_extent - x0 - c0;
      advance = (idx_t)BK * x_extent;
    }
    step = (idx_t)ROW_STEP * ld;
    dst = (r0 * LD + c0) * (int)sizeof(T);
  }

  // Issues the next slice's chunks into the operand's stage (zeros past the matrix), then moves
  // on to the slice after it. The stage is `stage` as a shared-window address (cp.async) and
  // `smem + stage_offset` as a pointer (element-wise copies); `base` is only a safe address for
  // skipped chunks.
  __device__ __forceinline__ void copy(unsigned stage, unsigned char* smem, unsigned stage_offset, const T* base) {
#pragma unroll
    for (int i = 0; i < COUNT; i++) {
      const T* g = src + i * step;
      const bool row_ok = i * ROW_STEP < rows_left;
      const unsigned d = dst + i * ROW_STEP * LD * (int)sizeof(T);
      if (ALIGNED) {
        const bool valid = row_ok && cols_left > 0;
        gc_cp_async16_at(stage + d, valid ? g : base, valid);
      } else {
        T v[CHUNK];
#pragma unroll
        for (int j = 0; j < CHUNK; j++) v[j] = row_ok && j < cols_left ? g[j] : from_float<T>(0.f);
        *reinterpret_cast<uint4*>(smem + stage_offset + d) = *reinterpret_cast<const uint4*>(v);
      }
    }
    src += advance;
    if (K_CONTIG) {
      cols_left -= BK;
    } else {
      rows_left -= BK;
    }
  }
};

typedef SliceCopier<BM, A_KMAJOR, ALIGN_A> CopierA;
typedef SliceCopier<BN, B_KMAJOR, ALIGN_B> CopierB;
static_assert(CopierA::LD == LDA && CopierB::LD == LDB, "the fragment reads use the copiers' layout");

// A warp's fragments for one MMA_K step: MI tiles of A (16 × MMA_K) and NI of B (MMA_K × 8).
struct Fragments {
  unsigned a[MI][4];
  unsigned b[NI][2];
};

// Where this lane's fragment reads start within a stage (bytes), so that each read in
// `load_fragments` is that base plus a compile-time offset.
struct FragmentBase {
  unsigned a;
  unsigned b;
};

__device__ __forceinline__ FragmentBase fragment_base(int wm0, int wn0) {
  const int lane = threadIdx.x % 32, q = lane / 8, r8 = lane % 8;
  FragmentBase f;
  if (TF32) {  // element (row g, k t) of each tile; see load_fragments
    const int g = lane / 4, t = lane % 4;
    f.a = (A_KMAJOR ? (wm0 + g) * LDA + t : t * LDA + wm0 + g) * 4;
    f.b = B_OFFSET + (B_KMAJOR ? (wn0 + g) * LDB + t : t * LDB + wn0 + g) * 4;
  } else {
    f.a = (A_KMAJOR ? (wm0 + lane % 16) * LDA + (lane / 16) * 8 : ((q / 2) * 8 + r8) * LDA + wm0 + (q % 2) * 8) * 2;
    f.b = B_OFFSET + (B_KMAJOR ? (wn0 + (q / 2) * 8 + r8) * LDB + (q % 2) * 8 : ((q % 2) * 8 + r8) * LDB + wn0 + (q / 2) * 8) * 2;
  }
  return f;
}

// Fragments of step `kb` (elements of k within the slice) from the stage at shared address
// `stage` (ldmatrix) / generic pointer `stage_ptr` (tf32, read element-wise and rounded).
__device__ __forceinline__ void load_fragments(Fragments& f, unsigned stage, const unsigned char* stage_ptr, FragmentBase base, int kb) {
  if (TF32) {
    const float* fa = reinterpret_cast<const float*>(stage_ptr + base.a);
    const float* fb = reinterpret_cast<const float*>(stage_ptr + base.b);
    // Offsets of element (row + dr, k + dk) of A and (k + dk, col + dc) of B from the lane's base.
    auto ao = [](int dr, int dk) { return A_KMAJOR ? dr * LDA + dk : dk * LDA + dr; };
    auto bo = [](int dk, int dc) { return B_KMAJOR ? dc * LDB + dk : dk * LDB + dc; };
#pragma unroll
    for (int mi = 0; mi < MI; mi++) {
      f.a[mi][0] = gc_to_tf32(fa[ao(mi * 16, kb)]);
      f.a[mi][1] = gc_to_tf32(fa[ao(mi * 16 + 8, kb)]);
      f.a[mi][2] = gc_to_tf32(fa[ao(mi * 16, kb + 4)]);
      f.a[mi][3] = gc_to_tf32(fa[ao(mi * 16 + 8, kb + 4)]);
    }
#pragma unroll
    for (int ni = 0; ni < NI; ni++) {
      f.b[ni][0] = gc_to_tf32(fb[bo(kb, ni * 8)]);
      f.b[ni][1] = gc_to_tf32(fb[bo(kb + 4, ni * 8)]);
    }
  } else {
#pragma unroll
    for (int mi = 0; mi < MI; mi++) {
      if (A_KMAJOR) {
        gc_ldmatrix_x4(f.a[mi], stage + base.a + (mi * 16 * LDA + kb) * 2);
      } else {
        gc_ldmatrix_x4_trans(f.a[mi], stage + base.a + (kb * LDA + mi * 16) * 2);
      }
    }
#pragma unroll
    for (int nj = 0; nj < NI / 2; nj++) {
      unsigned r[4];
      if (B_KMAJOR) {
        gc_ldmatrix_x4(r, stage + base.b + (nj * 16 * LDB + kb) * 2);
      } else {
        gc_ldmatrix_x4_trans(r, stage + base.b + (kb * LDB + nj * 16) * 2);
      }
      f.b[2 * nj][0] = r[0];
      f.b[2 * nj][1] = r[1];
      f.b[2 * nj + 1][0] = r[2];
      f.b[2 * nj + 1][1] = r[3];
    }
  }
}

__device__ __forceinline__ void mma_tiles(float (&acc)[MI][NI][4], const Fragments& f) {
#pragma unroll
  for (int mi = 0; mi < MI; mi++)
#pragma unroll
    for (int ni = 0; ni < NI; ni++) {
#if GC_TC_TYPE == GC_F16
      gc_mma_f16(acc[mi][ni], f.a[mi], f.b[ni][0], f.b[ni][1]);
#elif GC_TC_TYPE == GC_BF16
      gc_mma_bf16(acc[mi][ni], f.a[mi], f.b[ni][0], f.b[ni][1]);
#else
      gc_mma_tf32(acc[mi][ni], f.a[mi], f.b[ni][0], f.b[ni][1]);
#endif
    }
}

// The epilogue of a 16 × WN slice of a warp's tile staged in `epi` (rows row0..., columns
// col0...): each lane finishes four consecutive columns of a row at a time (EPI_QUADS lanes per
// row, 16-byte buffer reads issued first). Out of line, called once per slice: its code exists
// once rather than once per unrolled slice.
__device__ __noinline__ void finish_slice(Epilogue<T> ep, const float* epi, int row0, int col0, int m, int n, bool vec_out) {
  const int lane = threadIdx.x % 32;
  const int quad = (lane % EPI_QUADS) * 4, r0 = lane / EPI_QUADS, col = col0 + quad;
  float4 v[EPI_STEPS];
#pragma unroll
  for (int i = 0; i < EPI_STEPS; i++) v[i] = *reinterpret_cast<const float4*>(epi + (r0 + i * EPI_ROW_STEP) * EPI_STRIDE + quad);
  if (col >= n) return;
#pragma unroll
  for (int i = 0; i < EPI_STEPS; i++) {
    const int row = row0 + r0 + i * EPI_ROW_STEP;
    if (row < m) gc_finish_quad(ep, v[i], n, row, col, vec_out);
  }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    matmul_tc(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out, const T* __restrict__ c,
              const T* __restrict__ bias, int m, int n, int k, long long a_batch_stride, long long b_batch_stride,
              long long c_batch_stride, float alpha, float beta, int act) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const unsigned smem = gc_smem_addr(smem_raw);

  const TileCoord tile = gc_tile_coord(m, n, BM, BN);
  const long long z = blockIdx.z;
  a += z * a_batch_stride;
  b += z * b_batch_stride;

  const int warp = threadIdx.x / 32;
  const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;
  const FragmentBase fbase = fragment_base(wm0, wn0);

  float acc[MI][NI][4];
#pragma unroll
  for (int mi = 0; mi < MI; mi++)
#pragma unroll
    for (int ni = 0; ni < NI; ni++)
#pragma unroll
      for (int j = 0; j < 4; j++) acc[mi][ni][j] = 0.f;

  // Slice s goes to stage s % STAGES. The whole ring is filled first; afterwards the stage of
  // slice kt is refilled (with slice kt + STAGES) at the barrier in kt's last k-step: by then every
  // warp holds kt's last fragments in registers. With two fragment sets that barrier also
  // publishes slice kt + 1 in time for its first fragments to be read before kt's last mmas, so the
  // tensor cores never wait on a barrier followed by a shared-memory load.
  CopierA copier_a(a, m, k, tile.m0);
  CopierB copier_b(b, n, k, tile.n0);
  const int k_tiles = (k + BK - 1) / BK;
#pragma unroll
  for (int s = 0; s < STAGES; s++) {
    if (s < k_tiles) {
      copier_a.copy(smem + s * STAGE_BYTES, smem_raw, s * STAGE_BYTES, a);
      copier_b.copy(smem + s * STAGE_BYTES + B_OFFSET, smem_raw, s * STAGE_BYTES + B_OFFSET, b);
    }
    gc_cp_async_commit();
  }
  gc_cp_async_wait<STAGES - 1>();
  __syncthreads();

  Fragments frag[FRAG_BUFFERS];
  if (FRAG_BUFFERS == 2) load_fragments(frag[0], smem, smem_raw, fbase, 0);
  int stage = 0;  // kt % STAGES
  for (int kt = 0; kt < k_tiles; kt++) {
    const unsigned st = stage * STAGE_BYTES;
#pragma unroll
    for (int s = 0; s < KSTEPS; s++) {
      if (FRAG_BUFFERS == 1) load_fragments(frag[0], smem + st, smem_raw + st, fbase, s * MMA_K);
      if (s + 1 < KSTEPS) {
        if (FRAG_BUFFERS == 2) load_fragments(frag[(s + 1) % 2], smem + st, smem_raw + st, fbase, (s + 1) * MMA_K);
      } else {
        gc_cp_async_wait<STAGES - 2>();  // slice kt + 1 has landed (for this thread's copies) ...
        __syncthreads();                 // ... for everyone's, and every warp is done reading stage kt
        if (kt + STAGES < k_tiles) {
          copier_a.copy(smem + st, smem_raw, st, a);
          copier_b.copy(smem + st + B_OFFSET, smem_raw, st + B_OFFSET, b);
        }
        gc_cp_async_commit();
        stage = stage + 1 == STAGES ? 0 : stage + 1;
        if (FRAG_BUFFERS == 2 && kt + 1 < k_tiles) {
          load_fragments(frag[(s + 1) % 2], smem + stage * STAGE_BYTES, smem_raw + stage * STAGE_BYTES, fbase, 0);
        }
      }
      mma_tiles(acc, frag[s % FRAG_BUFFERS]);
    }
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
  const bool vec_out = n % 4 == 0 && reinterpret_cast<unsigned long long>(ep.out) % (4 * sizeof(T)) == 0;
#pragma unroll
  for (int mi = 0; mi < MI; mi++) {
#pragma unroll
    for (int ni = 0; ni < NI; ni++) {
      *reinterpret_cast<float2*>(epi + g * EPI_STRIDE + ni * 8 + 2 * t) = make_float2(acc[mi][ni][0], acc[mi][ni][1]);
      *reinterpret_cast<float2*>(epi + (g + 8) * EPI_STRIDE + ni * 8 + 2 * t) = make_float2(acc[mi][ni][2], acc[mi][ni][3]);
    }
    __syncwarp();
    finish_slice(ep, epi, tile.m0 + wm0 + mi * 16, tile.n0 + wn0, m, n, vec_out);
    __syncwarp();  // the buffer is rewritten by the next slice
  }
}
