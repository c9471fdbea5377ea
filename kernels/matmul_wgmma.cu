// Hopper GEMM (sm_90a): TMA loads into a GC_STAGES-deep ring of 128-byte-swizzled shared-memory
// stages, wgmma.mma_async from shared-memory descriptors, warp specialisation and a persistent
// tile loop: out = act(alpha·op(A)·op(B) + beta·C + bias).
//
// 384 threads: warpgroup 0 is the producer (one thread issues the TMA copies of each stage once
// the consumers released it), warpgroups 1 and 2 are consumers; register budgets move from the
// producer to the consumers with setmaxnreg. Each stage has a "full" mbarrier (TMA transaction
// bytes) and an "empty" one (one arrival per consumer warp of every CTA that reads it);
// consumers keep one wgmma group in flight and release a stage as soon as the group that read
// it has completed. Two schedules of the consumers:
// - cooperative (GC_PINGPONG 0): both multiply every tile, 64 rows of the 128 × GC_BN tile each,
//   and run the epilogue at the same time, while the tensor cores wait.
// - ping-pong (GC_PINGPONG 1, GC_BN 128): each takes whole tiles in turn (128 rows, two m64
//   wgmmas per k-step). The ring hands out stages in tile order, so one consumer's main loop
//   runs while the other writes its previous tile: the epilogue hides under the MMAs.
//
// Persistent: the grid holds as many blocks as fit on the device at once, and each walks tile
// ids (all batch entries of the launch, in the grouped order of matmul_tile.cuh) with a stride
// of the grid. The ring runs on across tiles, so the producer fills the stages of the next
// tile while the consumers run the epilogue of this one.
//
// Clusters (GC_CLUSTER = 2): the two CTAs of a cluster take vertically adjacent tiles (same
// columns), so they need the same B tile: each loads half of it and multicasts that half into
// both CTAs' stages. A stage is then free only once the consumers of both CTAs released it, so
// consumer warps arrive on the empty barriers of both.
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
//   GC_CLUSTER             1 or 2 CTAs per cluster (2: B tiles multicast)
//   GC_PINGPONG            0 (cooperative) or 1 (ping-pong; needs GC_BN 128)
//   GC_TRANS_A GC_TRANS_B  0/1 as op(A) = Aᵀ / op(B) = Bᵀ; for tf32 TRANS_A = 0 and TRANS_B = 1
// Parameters: two CUtensorMap (by value, __grid_constant__), then out, c, bias, m, n, k, the
// batch entries of this launch, the batch flags of A and B (0: one matrix for all), C's batch
// stride, alpha, beta, activation. The B map's box is the B tile divided among the cluster.
// Grid: a multiple of GC_CLUSTER blocks (any number works; the device's capacity is fastest).
// Dynamic shared memory: 1024 (alignment) + GC_STAGES · (BM + GC_BN) · 128 + 2 · 64 · 40 · 4 (epilogue
// buffers) + 16 · GC_STAGES bytes.
#include "matmul_epilogue.cuh"
#include "matmul_tile.cuh"
#include "matmul_wgmma_ops.cuh"
#include "cp_async.cuh"
#include "hopper_pipeline.cuh"
#include "wgmma.cuh"

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

constexpr int BM = 128, BN = GC_BN, STAGES = GC_STAGES, CLUSTER = GC_CLUSTER;
constexpr bool PINGPONG = GC_PINGPONG;
constexpr int ROW_BYTES = 128;                       // one swizzle atom row
constexpr int BK = ROW_BYTES / (int)sizeof(T);        // k per stage: 64 (16-bit) or 32 (tf32)
constexpr int KSTEP = TF32 ? 8 : 16;                  // k per wgmma
constexpr bool A_KMAJOR = !GC_TRANS_A, B_KMAJOR = GC_TRANS_B;
constexpr int A_BYTES = BM * ROW_BYTES, B_BYTES = BN * ROW_BYTES;
constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
constexpr int MN_BLOCK_BYTES = BK * ROW_BYTES;  // one 64-wide M/N block of BK rows
constexpr int THREADS = 384;
constexpr int ACC = BN / 2;  // accumulators per consumer thread of one m64 wgmma (64·BN/128)
constexpr int WG_M = PINGPONG ? 2 : 1;  // m64 row blocks a consumer multiplies per tile
constexpr int CONSUMER_WARPS = PINGPONG ? 4 : 8;  // warps that read (and release) each stage
// Epilogue: each consumer warp passes its 16 rows of accumulators (of an m64 block) through its
// own 16 × EPI_COLS f32 buffer, a pass of EPI_COLS columns at a time, so the epilogue is one
// out-of-line loop (not BN/4 unrolled copies of it, whose instruction fetches stalled the tensor
// cores), its global accesses are whole row pieces, and only __syncwarp orders the buffer.
constexpr int EPI_COLS = 32;
constexpr int EPI_STRIDE = EPI_COLS + 8;  // floats: the float2 writes of a half-warp hit 32 distinct banks
constexpr int EPI_BYTES = 64 * EPI_STRIDE * 4;
constexpr int B_PART = BN / CLUSTER;  // B rows (K-major) or columns (N-major) each CTA of a cluster loads

static_assert(CLUSTER == 1 || CLUSTER == 2, "clusters of 1 or 2 CTAs");
static_assert(B_KMAJOR || B_PART % 64 == 0, "an N-major B part is whole 64-wide blocks");

static_assert(BN == 128 || BN == 256, "BN is 128 or 256");
static_assert(!PINGPONG || BN == 128, "a ping-pong consumer holds a whole 128 x 128 tile of accumulators");
static_assert(!TF32 || (A_KMAJOR && B_KMAJOR), "tf32 wgmma reads K-major operands only");

// Arrival on the barrier at the same shared-memory offset in CTA `rank` of the cluster. Default
// (CTA-scope) release semantics: a cluster-scope release costs a GPU-wide memory barrier per
// arrival, and the only accesses it would order are the wgmma reads of the stage, which have
// completed (wgmma.wait_group) before the arrival.
__device__ __forceinline__ void mbar_arrive_cluster(unsigned bar, unsigned rank) {
  asm volatile(
      "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(bar),
      "r"(rank)
      : "memory");
}

__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}

// Every thread of every CTA of the cluster (a plain CTA barrier without clusters).
__device__ __forceinline__ void cluster_sync() {
  if (CLUSTER > 1) {
    asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
  } else {
    __syncthreads();
  }
}

// The same copy into the same shared-memory offset of every CTA in `mask` (signalling each one's barrier).
__device__ __forceinline__ void tma_load_3d_multicast(unsigned dst, const GcTensorMap* map, unsigned bar, int c0, int c1, int c2,
                                                      unsigned short mask) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3, %4}], [%5], %6;\n" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar), "h"(mask)
      : "memory");
}

// Descriptor of the k-step `kk` of an operand stage starting at `base` (the warpgroup's rows).
// K-major: rows of 128 B, 8-row groups 1024 B apart (stride byte offset); a k-step moves 32 B
// along the row (the leading byte offset is unused with swizzling).
// M/N-major: 64-element blocks of BK rows, BK·128 B apart (leading byte offset: along M/N), 8-row
// k groups 1024 B apart (stride byte offset); a k-step moves KSTEP rows (KSTEP·128 B).
template <bool KMAJOR> __device__ __forceinline__ unsigned long long operand_desc(unsigned base, int kk) {
  if (KMAJOR) return gc_wgmma_desc(base + kk * 32, 16, 1024);
  return gc_wgmma_desc(base + kk * KSTEP * ROW_BYTES, MN_BLOCK_BYTES, 1024);
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

// The epilogue of a warp's 16 × EPI_COLS block of accumulators staged in `epi` (rows row0...,
// columns col0...). Each lane finishes four consecutive columns of a row at a time (eight lanes
// per buffer row: conflict-free 16-byte reads), all its buffer reads issued first. Out of line:
// called once per pass, its code exists once rather than once per unrolled pass.
__device__ __noinline__ void finish_rows(Epilogue<T> ep, const float* epi, int row0, int col0, int m, int n, bool vec_out) {
  constexpr int QUADS = EPI_COLS / 4, ROW_STEP = 32 / QUADS, STEPS = 16 / ROW_STEP;
  const int lane = threadIdx.x % 32;
  const int quad = (lane % QUADS) * 4, col = col0 + quad, r0 = lane / QUADS;
  if (col >= n) return;
  float4 acc[STEPS];
#pragma unroll
  for (int i = 0; i < STEPS; i++) acc[i] = *reinterpret_cast<const float4*>(epi + (r0 + i * ROW_STEP) * EPI_STRIDE + quad);
#pragma unroll
  for (int i = 0; i < STEPS; i++) {
    const int row = row0 + r0 + i * ROW_STEP;
    if (row < m) gc_finish_quad(ep, acc[i], n, row, col, vec_out);
  }
}

// Ping-pong hand-over (named barriers 1 and 2; 0 is __syncthreads): a consumer starts waiting on
// the stages of its next tile only once the other has waited on all of its own. A full barrier's
// parity then names the right phase: no stage can be two ring laps behind the position awaited.
__device__ __forceinline__ void turn_wait(int consumer) {
  gc_named_sync<256>(1 + consumer);
}
__device__ __forceinline__ void turn_pass(int consumer) {
  gc_named_arrive<256>(1 + (1 - consumer));
}

// The block tile of tile id `t` for CTA `rank` of its cluster, and its batch entry.
struct WorkTile {
  TileCoord at;
  int z;
};

__device__ __forceinline__ WorkTile work_tile(int t, int tiles_per_entry, int m, int n, unsigned rank) {
  WorkTile w;
  w.z = t / tiles_per_entry;
  w.at = gc_tile_coord_at(t - w.z * tiles_per_entry, m, n, BM * CLUSTER, BN);
  w.at.m0 += rank * BM;
  return w;
}

}  // namespace

#if GC_CLUSTER > 1
#define GC_CLUSTER_DIMS __cluster_dims__(GC_CLUSTER, 1, 1)
#else
#define GC_CLUSTER_DIMS
#endif

extern "C" __global__ void __launch_bounds__(THREADS, 1) GC_CLUSTER_DIMS
    matmul_wgmma(const __grid_constant__ GcTensorMap tm_a, const __grid_constant__ GcTensorMap tm_b, T* __restrict__ out,
                 const T* __restrict__ c, const T* __restrict__ bias, int m, int n, int k, int batch, int a_batched,
                 int b_batched, long long c_batch_stride, float alpha, float beta, int act) {
  extern __shared__ unsigned char smem_raw[];
  // TMA's 128-byte swizzle repeats every 1024 bytes: stages start on such a boundary. The
  // offset is the same in every CTA, as multicast copies need.
  const unsigned base = (gc_smem_addr(smem_raw) + 1023u) & ~1023u;
  // Ring stages, then each consumer's epilogue buffer, then full[STAGES] and empty[STAGES].
  const unsigned bars = base + STAGES * STAGE_BYTES + 2 * EPI_BYTES;
  const int warpgroup = threadIdx.x / 128;
  const unsigned rank = CLUSTER > 1 ? cluster_rank() : 0;
  const int tiles_per_entry = ((m + BM * CLUSTER - 1) / (BM * CLUSTER)) * ((n + BN - 1) / BN);
  const int tiles = tiles_per_entry * batch;
  const int first = blockIdx.x / CLUSTER, stride = gridDim.x / CLUSTER;
  const int k_tiles = (k + BK - 1) / BK;

  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; s++) {
      gc_mbar_init(bars + 8 * s, 1);
      gc_mbar_init(bars + 8 * (STAGES + s), CONSUMER_WARPS * CLUSTER);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  // The peer's multicast copies and arrivals may only start once its barriers exist.
  cluster_sync();

  if (warpgroup == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (threadIdx.x == 0) {
      int it = 0;  // position in the ring, continued across tiles
      for (int t = first; t < tiles; t += stride) {
        const WorkTile w = work_tile(t, tiles_per_entry, m, n, rank);
        const int za = a_batched ? w.z : 0, zb = b_batched ? w.z : 0;
        for (int kt = 0; kt < k_tiles; kt++, it++) {
          const int s = it % STAGES;
          gc_mbar_wait(bars + 8 * (STAGES + s), ((it / STAGES) & 1) ^ 1);
          const unsigned full = bars + 8 * s;
          gc_mbar_expect_tx(full, STAGE_BYTES);
          const unsigned sa = base + s * STAGE_BYTES, sb = sa + A_BYTES;
          const int k0 = kt * BK;
          if (A_KMAJOR) {
            gc_tma_load_3d(sa, &tm_a, full, k0, w.at.m0, za);
          } else {
#pragma unroll
            for (int j = 0; j < BM / 64; j++) gc_tma_load_3d(sa + j * MN_BLOCK_BYTES, &tm_a, full, w.at.m0 + 64 * j, k0, za);
          }
          // This CTA's part of the B tile (all of it without a cluster).
          const int part0 = rank * B_PART;
          if (B_KMAJOR) {
            const unsigned dst = sb + part0 * ROW_BYTES;
            if (CLUSTER > 1) {
              tma_load_3d_multicast(dst, &tm_b, full, k0, w.at.n0 + part0, zb, (1u << CLUSTER) - 1);
            } else {
              gc_tma_load_3d(dst, &tm_b, full, k0, w.at.n0, zb);
            }
          } else {
#pragma unroll
            for (int j = 0; j < B_PART / 64; j++) {
              const int col = part0 + 64 * j;
              const unsigned dst = sb + (col / 64) * MN_BLOCK_BYTES;
              if (CLUSTER > 1) {
                tma_load_3d_multicast(dst, &tm_b, full, w.at.n0 + col, k0, zb, (1u << CLUSTER) - 1);
              } else {
                gc_tma_load_3d(dst, &tm_b, full, w.at.n0 + col, k0, zb);
              }
            }
          }
        }
      }
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    const int consumer = warpgroup - 1;  // cooperative: which 64 rows of each tile; ping-pong: which tiles
    const int lane = threadIdx.x % 32, warp = (threadIdx.x % 128) / 32;
    float* const epi = reinterpret_cast<float*>(smem_raw + (base - gc_smem_addr(smem_raw)) + STAGES * STAGE_BYTES + consumer * EPI_BYTES);
    // Frees ring stage `s` in every CTA whose producer may write it.
    auto release = [&](int s) {
      if (lane == 0) {
        const unsigned empty = bars + 8 * (STAGES + s);
        if (CLUSTER > 1) {
#pragma unroll
          for (int r = 0; r < CLUSTER; r++) mbar_arrive_cluster(empty, r);
        } else {
          gc_mbar_arrive(empty);
        }
      }
    };
    // Offset of the m64 row block `mi` of this consumer within a stage's A tile.
    constexpr unsigned A_ROWS64 = A_KMAJOR ? 64 * ROW_BYTES : MN_BLOCK_BYTES;
    float acc[WG_M][ACC];
    int it = 0;
    int turn = 0;  // this CTA's tiles so far: ping-pong consumers take alternate ones
    for (int t = first; t < tiles; t += stride, turn++) {
      if (PINGPONG && (turn & 1) != consumer) {
        it += k_tiles;  // the other consumer's stages
        continue;
      }
      if (PINGPONG && turn > 0) turn_wait(consumer);
      const WorkTile w = work_tile(t, tiles_per_entry, m, n, rank);
#pragma unroll
      for (int mi = 0; mi < WG_M; mi++) {
#pragma unroll
        for (int i = 0; i < ACC; i++) acc[mi][i] = 0.f;
      }
      for (int kt = 0; kt < k_tiles; kt++, it++) {
        const int s = it % STAGES;
        gc_mbar_wait(bars + 8 * s, (it / STAGES) & 1);
        const unsigned sa = base + s * STAGE_BYTES + (PINGPONG ? 0 : consumer * A_ROWS64);
        const unsigned sb = base + s * STAGE_BYTES + A_BYTES;
        gc_wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / KSTEP; kk++) {
#pragma unroll
          for (int mi = 0; mi < WG_M; mi++) wgmma(acc[mi], operand_desc<A_KMAJOR>(sa + mi * A_ROWS64, kk), operand_desc<B_KMAJOR>(sb, kk));
        }
        gc_wgmma_commit();
        // The group of the previous stage has completed once at most this one is pending.
        gc_wgmma_wait<1>();
        if (kt > 0) release((it - 1) % STAGES);
      }
      // The next tile is the other consumer's: its stages may now be awaited.
      if (PINGPONG && t + stride < tiles) turn_pass(consumer);
      gc_wgmma_wait<0>();
      release((it - 1) % STAGES);

      Epilogue<T> ep;
      ep.out = out + (long long)w.z * m * n;
      ep.c = c ? c + w.z * c_batch_stride : nullptr;
      ep.bias = bias;
      ep.alpha = alpha;
      ep.beta = beta;
      ep.act = act;
      // Accumulator (row r or r + 8 of this warp's 16, column 8j + 2(lane % 4) + {0, 1}) of an m64 row block.
      const int r = lane / 4;
      float* const warp_epi = epi + warp * 16 * EPI_STRIDE;
      const bool vec_out = n % 4 == 0 && reinterpret_cast<unsigned long long>(ep.out) % (4 * sizeof(T)) == 0;
#pragma unroll
      for (int mi = 0; mi < WG_M; mi++) {
        const int row0 = w.at.m0 + (PINGPONG ? mi : consumer) * 64 + warp * 16;
#pragma unroll
        for (int pass = 0; pass < BN / EPI_COLS; pass++) {
#pragma unroll
          for (int jj = 0; jj < EPI_COLS / 8; jj++) {
            const int j = pass * (EPI_COLS / 8) + jj, col = jj * 8 + (lane % 4) * 2;
            *reinterpret_cast<float2*>(warp_epi + r * EPI_STRIDE + col) = make_float2(acc[mi][4 * j], acc[mi][4 * j + 1]);
            *reinterpret_cast<float2*>(warp_epi + (r + 8) * EPI_STRIDE + col) = make_float2(acc[mi][4 * j + 2], acc[mi][4 * j + 3]);
          }
          __syncwarp();
          finish_rows(ep, warp_epi, row0, w.at.n0 + pass * EPI_COLS, m, n, vec_out);
          __syncwarp();  // the buffer is rewritten by the next pass
        }
      }
    }
  }
  // A CTA leaves only after its peer: the peer may still arrive on this CTA's barriers.
  if (CLUSTER > 1) cluster_sync();
}
