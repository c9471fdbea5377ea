// Hopper GEMM (sm_90a): TMA loads into a GC_STAGES-deep ring of 128-byte-swizzled shared-memory
// stages, wgmma.mma_async from shared-memory descriptors, and warp specialisation:
// out = act(alpha·op(A)·op(B) + beta·C + bias).
//
// 384 threads: warpgroup 0 is the producer (one thread issues the TMA copies of each stage once
// the consumers released it), warpgroups 1 and 2 are consumers, each multiplying 64 rows of
// the 128 × GC_BN block tile; register budgets move from the producer to the consumers with
// setmaxnreg. Each stage has a "full" mbarrier (TMA transaction bytes) and an "empty" one
// (one arrival per consumer warp); consumers keep one wgmma group in flight and release a
// stage as soon as the group that read it has completed.
//
// Layouts: a stage holds BK = 128 bytes of k for every row. A K-major operand (A as stored,
// Bᵀ as stored for op(B) = Bᵀ) is one TMA box of rows × 128 B; an M/N-major one (Aᵀ, or B
// as stored) is loaded as 64-element-wide boxes of BK rows and multiplied with wgmma's
// transpose flag (16-bit types only; the host transposes tf32 operands to K-major first).
// TMA zero-fills out-of-bounds boxes, and the epilogue guards its stores, so any m, n, k work
// as long as the tensor maps exist (16-byte-aligned bases and row pitches).
//
// Module defines:
//   GC_WG_TYPE             GC_F16, GC_BF16 or GC_F32 (tf32 tensor cores)
//   GC_BN                  128 or 256 (block tile N)
//   GC_STAGES              shared-memory ring depth
//   GC_TRANS_A GC_TRANS_B  0/1 as op(A) = Aᵀ / op(B) = Bᵀ; for tf32 TRANS_A = 0 and TRANS_B = 1
//   GC_VEC_C               0/1: out/C/bias pairs may be accessed as one word
// Parameters: two CUtensorMap (by value, __grid_constant__), then as the other matmul kernels
// minus A/B pointers and strides, plus the batch flags of A and B (0: one matrix for all).
// Dynamic shared memory: 1024 (alignment) + GC_STAGES · (BM + GC_BN) · 128 + 16 · GC_STAGES bytes.
#include "matmul_epilogue.cuh"
#include "matmul_tile.cuh"
#include "matmul_wgmma_ops.cuh"

namespace {

#if GC_WG_TYPE == GC_F16
typedef f16_t T;
#elif GC_WG_TYPE == GC_BF16
typedef bf16_t T;
#elif GC_WG_TYPE == GC_F32
typedef float T;
#else
#error "GC_WG_TYPE must be GC_F16, GC_BF16 or GC_F32"
#endif
constexpr bool TF32 = GC_WG_TYPE == GC_F32;

constexpr int BM = 128, BN = GC_BN, STAGES = GC_STAGES;
constexpr int ROW_BYTES = 128;                       // one swizzle atom row
constexpr int BK = ROW_BYTES / (int)sizeof(T);        // k per stage: 64 (16-bit) or 32 (tf32)
constexpr int KSTEP = TF32 ? 8 : 16;                  // k per wgmma
constexpr bool A_KMAJOR = !GC_TRANS_A, B_KMAJOR = GC_TRANS_B;
constexpr bool VEC_C = GC_VEC_C;
constexpr int A_BYTES = BM * ROW_BYTES, B_BYTES = BN * ROW_BYTES;
constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
constexpr int MN_BLOCK_BYTES = BK * ROW_BYTES;  // one 64-wide M/N block of BK rows
constexpr int THREADS = 384;
constexpr int ACC = BN / 2;  // accumulators per consumer thread (64·BN/128)

static_assert(BN == 128 || BN == 256, "BN is 128 or 256");
static_assert(!TF32 || (A_KMAJOR && B_KMAJOR), "tf32 wgmma reads K-major operands only");

struct __align__(64) TensorMap {
  unsigned long long opaque[16];
};

__device__ __forceinline__ unsigned smem_u32(const void* p) {
  unsigned a;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
  return a;
}

__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count));
}

__device__ __forceinline__ void mbar_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void mbar_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

// Waits until the phase of parity `parity` has completed (a fresh barrier counts its
// phase "before 0", parity 1, as complete).
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
  unsigned done;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}

__device__ __forceinline__ void tma_load_3d(unsigned dst, const TensorMap* map, unsigned bar, int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
      : "memory");
}

// A shared-memory matrix descriptor with 128-byte swizzling (addresses and offsets in bytes).
__device__ __forceinline__ unsigned long long smem_desc(unsigned addr, unsigned lbo, unsigned sbo) {
  return (unsigned long long)((addr & 0x3FFFF) >> 4) | ((unsigned long long)((lbo & 0x3FFFF) >> 4) << 16) |
         ((unsigned long long)((sbo & 0x3FFFF) >> 4) << 32) | (1ull << 62);
}

// Descriptor of the k-step `kk` of an operand stage starting at `base` (the warpgroup's rows).
// K-major: rows of 128 B, 8-row groups 1024 B apart (stride byte offset); a k-step moves 32 B
// along the row (the leading byte offset is unused with swizzling).
// M/N-major: 64-element blocks of BK rows, BK·128 B apart (leading byte offset: along M/N), 8-row
// k groups 1024 B apart (stride byte offset); a k-step moves KSTEP rows (KSTEP·128 B).
template <bool KMAJOR> __device__ __forceinline__ unsigned long long operand_desc(unsigned base, int kk) {
  if (KMAJOR) return smem_desc(base + kk * 32, 16, 1024);
  return smem_desc(base + kk * KSTEP * ROW_BYTES, MN_BLOCK_BYTES, 1024);
}

__device__ __forceinline__ void wgmma(float (&acc)[ACC], unsigned long long da, unsigned long long db) {
#if GC_WG_TYPE == GC_F16
#if GC_BN == 256
  gc_wgmma_m64n256k16_f16<GC_TRANS_A, 1 - GC_TRANS_B>(acc, da, db);
#else
  gc_wgmma_m64n128k16_f16<GC_TRANS_A, 1 - GC_TRANS_B>(acc, da, db);
#endif
#elif GC_WG_TYPE == GC_BF16
#if GC_BN == 256
  gc_wgmma_m64n256k16_bf16<GC_TRANS_A, 1 - GC_TRANS_B>(acc, da, db);
#else
  gc_wgmma_m64n128k16_bf16<GC_TRANS_A, 1 - GC_TRANS_B>(acc, da, db);
#endif
#else
#if GC_BN == 256
  gc_wgmma_m64n256k8_tf32(acc, da, db);
#else
  gc_wgmma_m64n128k8_tf32(acc, da, db);
#endif
#endif
}

// Two adjacent output elements (row, col), (row, col + 1).
__device__ __forceinline__ void store_pair(const Epilogue<T>& ep, int m, int n, int row, int col, float v0, float v1) {
  if (row >= m) return;
  if (VEC_C && col + 1 < n) {
    float x0 = ep.alpha * v0, x1 = ep.alpha * v1;
    const idx_t at = (idx_t)row * n + col;
    if (ep.c) {
      x0 += ep.beta * to_float(ep.c[at]);
      x1 += ep.beta * to_float(ep.c[at + 1]);
    }
    if (ep.bias) {
      x0 += to_float(ep.bias[col]);
      x1 += to_float(ep.bias[col + 1]);
    }
    struct __align__(2 * sizeof(T)) Pair {
      T x, y;
    } p;
    p.x = from_float<T>(gc_activate(x0, ep.act));
    p.y = from_float<T>(gc_activate(x1, ep.act));
    *reinterpret_cast<Pair*>(ep.out + at) = p;
  } else {
    if (col < n) ep.out[(idx_t)row * n + col] = gc_epilogue_value(ep, v0, ep.c, n, row, col);
    if (col + 1 < n) ep.out[(idx_t)row * n + col + 1] = gc_epilogue_value(ep, v1, ep.c, n, row, col + 1);
  }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    matmul_wgmma(const __grid_constant__ TensorMap tm_a, const __grid_constant__ TensorMap tm_b, T* __restrict__ out,
                 const T* __restrict__ c, const T* __restrict__ bias, int m, int n, int k, int a_batched, int b_batched,
                 long long c_batch_stride, float alpha, float beta, int act) {
  extern __shared__ unsigned char smem_raw[];
  // TMA's 128-byte swizzle repeats every 1024 bytes: stages start on such a boundary.
  const unsigned base = (smem_u32(smem_raw) + 1023u) & ~1023u;
  const unsigned bars = base + STAGES * STAGE_BYTES;  // full[STAGES], then empty[STAGES]
  const int warpgroup = threadIdx.x / 128;
  const TileCoord tile = gc_tile_coord(m, n, BM, BN);
  const int z = blockIdx.z;
  const int k_tiles = (k + BK - 1) / BK;

  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; s++) {
      mbar_init(bars + 8 * s, 1);
      mbar_init(bars + 8 * (STAGES + s), 8);  // one arrival per consumer warp
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  if (warpgroup == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (threadIdx.x == 0) {
      const int za = a_batched ? z : 0, zb = b_batched ? z : 0;
      for (int kt = 0; kt < k_tiles; kt++) {
        const int s = kt % STAGES;
        mbar_wait(bars + 8 * (STAGES + s), ((kt / STAGES) & 1) ^ 1);
        const unsigned full = bars + 8 * s;
        mbar_expect_tx(full, STAGE_BYTES);
        const unsigned sa = base + s * STAGE_BYTES, sb = sa + A_BYTES;
        const int k0 = kt * BK;
        if (A_KMAJOR) {
          tma_load_3d(sa, &tm_a, full, k0, tile.m0, za);
        } else {
#pragma unroll
          for (int j = 0; j < BM / 64; j++) tma_load_3d(sa + j * MN_BLOCK_BYTES, &tm_a, full, tile.m0 + 64 * j, k0, za);
        }
        if (B_KMAJOR) {
          tma_load_3d(sb, &tm_b, full, k0, tile.n0, zb);
        } else {
#pragma unroll
          for (int j = 0; j < BN / 64; j++) tma_load_3d(sb + j * MN_BLOCK_BYTES, &tm_b, full, tile.n0 + 64 * j, k0, zb);
        }
      }
    }
    return;
  }

  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
  const int consumer = warpgroup - 1;  // which 64 rows of the block tile
  const int lane = threadIdx.x % 32, warp = (threadIdx.x % 128) / 32;
  float acc[ACC];
#pragma unroll
  for (int i = 0; i < ACC; i++) acc[i] = 0.f;

  for (int kt = 0; kt < k_tiles; kt++) {
    const int s = kt % STAGES;
    mbar_wait(bars + 8 * s, (kt / STAGES) & 1);
    const unsigned sa = base + s * STAGE_BYTES + consumer * (A_KMAJOR ? 64 * ROW_BYTES : MN_BLOCK_BYTES);
    const unsigned sb = base + s * STAGE_BYTES + A_BYTES;
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int kk = 0; kk < BK / KSTEP; kk++) wgmma(acc, operand_desc<A_KMAJOR>(sa, kk), operand_desc<B_KMAJOR>(sb, kk));
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    // The group of the previous stage has completed once at most this one is pending.
    asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
    if (kt > 0 && lane == 0) mbar_arrive(bars + 8 * (STAGES + (kt - 1) % STAGES));
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");

  Epilogue<T> ep;
  ep.out = out + (long long)z * m * n;
  ep.c = c ? c + z * c_batch_stride : nullptr;
  ep.bias = bias;
  ep.alpha = alpha;
  ep.beta = beta;
  ep.act = act;
  const int row = tile.m0 + consumer * 64 + warp * 16 + lane / 4;
#pragma unroll
  for (int j = 0; j < BN / 8; j++) {
    const int col = tile.n0 + j * 8 + (lane % 4) * 2;
    store_pair(ep, m, n, row, col, acc[4 * j], acc[4 * j + 1]);
    store_pair(ep, m, n, row + 8, col, acc[4 * j + 2], acc[4 * j + 3]);
  }
}
