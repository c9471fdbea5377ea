/**
 * The one-block factorizations of `kernels/small_dense.cu` (CholeskyQR2 of a narrow panel, with
 * Householder QR where it breaks down; the Jacobi SVD of a small square core): what the CUDA
 * dense linear algebra runs instead of cuSOLVER for the small sizes of narrow SVD sketches, where
 * a library call's fixed cost dominates; and the whole truncated SVD of a small matrix in one
 * launch (`small_rsvd` in one block, or `small_rsvd_cluster` over a thread-block cluster from
 * sm_90), where the chain of launches itself is the cost.
 */
import { GpuError } from '../../errors.js';
import type { ArgType } from '../../ffi/kernel-args.js';
import type { TruncatedSvdShape, TruncatedSvdViews } from '../backend/dense-linalg.js';
import type { TensorView } from '../core/view.js';
import type { ModuleSpec } from '../gpu/kernel-sources.js';
import { random, seedWords } from '../gpu/random.js';
import type { CudaContext } from './cuda-context.js';

/** The module of the one-block kernels (no specialisation). */
export const SMALL_DENSE_SPEC: ModuleSpec = { file: 'small_dense.cu' };
/** The module of the cluster form of the one-launch SVD (sm_90+). */
export const SMALL_RSVD_CLUSTER_SPEC: ModuleSpec = { file: 'small_rsvd_cluster.cu' };
/** The kernels it defines. */
export const SMALL_DENSE_KERNELS = ['small_qr', 'small_svd', 'small_rsvd'] as const;
const QR_SIGNATURE: readonly ArgType[] = ['ptr', 'ptr', 'i32', 'i32'];
const SVD_SIGNATURE: readonly ArgType[] = ['ptr', 'ptr', 'ptr', 'ptr', 'i32', 'ptr'];
/** a, omega, u, s, v, m, n, q, k, iters, status. */
const RSVD_SIGNATURE: readonly ArgType[] = ['ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'i32', 'i32', 'i32', 'i32', 'i32', 'ptr'];
/** The cluster form draws Ω itself: the seed's two key words in place of its address. */
const RSVD_CLUSTER_SIGNATURE: readonly ArgType[] = ['ptr', 'u32', 'u32', 'ptr', 'ptr', 'ptr', 'i32', 'i32', 'i32', 'i32', 'i32', 'ptr'];

/** The sizes the one-block kernels take on a device (see `DenseLinalg.small`). */
export interface SmallDenseLimits {
  readonly qrElements: number;
  readonly qrColumns: number;
  readonly svdOrder: number;
}

/** Threads of the QR kernel (`SMALL_QR_THREADS`). */
const QR_THREADS = 512;
/** Static shared memory of the QR kernel besides the panel (its f64 Gram matrix, 64×64), with room to spare. */
const QR_STATIC_SHARED = 64 * 64 * 8 + 2048;

/**
 * What the one-block kernels take on a device with `sharedMemoryPerBlockOptin` bytes of shared
 * memory per block: QR panels of at most 64 columns whose f32 copy (rows·(cols | 1) elements,
 * the row stride made odd) fits in shared memory beside the kernel's f64 Gram matrix (up to 2^15
 * elements, 128 KB), cores up to 48×48 (their f64 copies fill 37 KB).
 */
export function smallDenseLimits(sharedMemoryPerBlockOptin: number): SmallDenseLimits {
  const fits = Math.floor((sharedMemoryPerBlockOptin - QR_STATIC_SHARED) / 4);
  return { qrElements: Math.max(0, Math.min(2 ** 15, fits)), qrColumns: 64, svdOrder: 48 };
}

/** out (rows×cols) ← the orthonormal Q of x's Householder QR (x unchanged); the panel must fit {@link smallDenseLimits}. */
export function smallQr(backend: CudaContext, x: TensorView, out: TensorView, rows: number, cols: number): void {
  const stream = backend.enqueue(x, out);
  const k = backend.kernel('small_dense|small_qr', smallDenseSpec, 'small_qr', QR_SIGNATURE);
  const sharedMemBytes = rows * (cols | 1) * 4; // an odd row stride (see small_qr)
  // Raises the kernel's dynamic shared memory limit where the panel needs more than 48 KB.
  if (k.residentGrid(QR_THREADS, sharedMemBytes) === 0) {
    throw new GpuError('UNSUPPORTED', `svd: a ${rows}×${cols} panel does not fit one block's shared memory for its QR`);
  }
  k.launch({ grid: 1, block: QR_THREADS, sharedMemBytes, stream }, backend.address(x), backend.address(out), rows, cols);
}

/** a (n×n) = leftᵀ·diag(s)·right, singular vectors as rows, s descending; info 0, or 1 when Jacobi did not converge. */
export function smallSvd(backend: CudaContext, a: TensorView, left: TensorView, s: TensorView, right: TensorView, n: number, info: TensorView): void {
  const stream = backend.enqueue(a, left, s, right, info);
  const k = backend.kernel('small_dense|small_svd', smallDenseSpec, 'small_svd', SVD_SIGNATURE);
  // A warp per pair of columns of one round of the circle method.
  const block = 32 * Math.max(1, Math.ceil(n / 2));
  k.launch({ grid: 1, block, stream }, backend.address(a), backend.address(left), backend.address(s), backend.address(right), n, backend.address(info));
}

/** Threads of the one-launch SVD (`SMALL_RSVD_THREADS`). */
const RSVD_THREADS = 1024;
/** The widest sketch the one-launch SVD takes (`SMALL_RSVD_MAX_Q`: its f64 Gram and Jacobi columns are sized for it). */
const RSVD_MAX_WIDTH = 32;
/** Its static shared memory (`RsvdScratch`, 38 KB), rounded up. */
const RSVD_STATIC_SHARED = 40 * 1024;
/**
 * The most multiply-adds per product with A (m·n·q) the one-launch SVD takes: one block does
 * about ten such products, so beyond this the grid-wide products of the chained route win back
 * more than its launches cost.
 */
const RSVD_MAX_PRODUCT = 2 ** 21;

/** The one-launch SVD's panels Y (m×q), Z and P (n×q), each of odd row stride q | 1, in bytes of dynamic shared memory. */
function rsvdPanelBytes(m: number, n: number, q: number): number {
  return (m + 2 * n) * (q | 1) * 4;
}

/** Whether an m×n truncated SVD with a sketch of q columns runs as one launch on a device with `sharedMemoryPerBlockOptin` bytes. */
export function smallRandomizedSvdFits(m: number, n: number, q: number, sharedMemoryPerBlockOptin: number): boolean {
  return q <= RSVD_MAX_WIDTH && m * n * q <= RSVD_MAX_PRODUCT && rsvdPanelBytes(m, n, q) + RSVD_STATIC_SHARED <= sharedMemoryPerBlockOptin;
}

/** CTAs of the cluster form (`small_rsvd_cluster`): CUDA's portable cluster size. */
const RSVD_CLUSTER = 8;
/** Threads per CTA of the cluster form (`RSVD_CLUSTER_THREADS`). */
const RSVD_CLUSTER_THREADS = 256;
const RSVD_CLUSTER_DIM = [RSVD_CLUSTER, 1, 1] as const;
/** The modules' specs as the kernel registry asks for them (one function each, not one per launch). */
const smallDenseSpec = (): ModuleSpec => SMALL_DENSE_SPEC;
const rsvdClusterSpec = (): ModuleSpec => SMALL_RSVD_CLUSTER_SPEC;

/** The cluster form's dynamic shared memory: 2q² doubles, A's and Y's and U's local rows, Aᵀ·Y's partial, Z, and the owned rows of Z and P. */
function rsvdClusterBytes(m: number, n: number, q: number): number {
  const ld = q | 1;
  const rows = Math.ceil(m / RSVD_CLUSTER);
  const owned = Math.ceil(n / RSVD_CLUSTER);
  return 16 * q * q + 4 * (rows * ((n | 1) + 2 * ld) + 2 * n * ld + 2 * owned * ld);
}

/**
 * The whole truncated SVD of the m×n `a` in one launch (see `DenseLinalg.truncatedSvd`): u m×k,
 * s k, v k×n, status 3 f32 elements ← [max a, min a, 1 if the core's Jacobi SVD did not converge,
 * 2 if the cluster form stopped at a CholeskyQR2 breakdown, else 0]. The problem must fit
 * {@link smallRandomizedSvdFits}.
 *
 * From sm_90 it runs on a cluster of 8 CTAs (`small_rsvd_cluster`), A's rows split over them,
 * where their panels fit, and draws Ω itself. H200, nvcc-built kernels, events over 50 launches,
 * one block against the cluster: 320×128 at q = 18 509 against 192 µs, 128×320 553 / 215, 64×64
 * at q = 16 230 / 136, 500×300 at q = 30 1866 / 520. That form has no Householder fallback and answers status[2] = 2 where
 * CholeskyQR2 breaks down; the caller then asks again with `householderFallback`, which takes the
 * one block, after Ω drawn by the random kernel into a pool block.
 */
export function smallRandomizedSvd(backend: CudaContext, views: TruncatedSvdViews, problem: TruncatedSvdShape): void {
  const { a, u, s, v, status } = views;
  const { m, n, q, rank, powerIterations, seed } = problem;
  const stream = backend.enqueue(a, u, s, v, status);
  // The arguments one by one, not spread from a list (nor the seed's words destructured): a
  // pipeline calls this once a pass, before V8 optimises it, when iterators cost most.
  if (!problem.householderFallback && backend.clusterLaunch) {
    const cluster = backend.kernel('small_rsvd_cluster', rsvdClusterSpec, 'small_rsvd_cluster', RSVD_CLUSTER_SIGNATURE);
    const sharedMemBytes = rsvdClusterBytes(m, n, q);
    if (q <= RSVD_MAX_WIDTH && cluster.residentGrid(RSVD_CLUSTER_THREADS, sharedMemBytes) > 0) {
      const words = seedWords(seed);
      cluster.launch(
        { grid: RSVD_CLUSTER, block: RSVD_CLUSTER_THREADS, clusterDim: RSVD_CLUSTER_DIM, sharedMemBytes, stream },
        backend.address(a), words[0], words[1],
        backend.address(u), backend.address(s), backend.address(v), m, n, q, rank, powerIterations, backend.address(status),
      );
      return;
    }
  }
  const k = backend.kernel('small_dense|small_rsvd', smallDenseSpec, 'small_rsvd', RSVD_SIGNATURE);
  const sharedMemBytes = rsvdPanelBytes(m, n, q);
  if (k.residentGrid(RSVD_THREADS, sharedMemBytes) === 0) {
    throw new GpuError('UNSUPPORTED', `svd: the panels of a ${m}×${n} matrix at sketch width ${q} do not fit one block's shared memory`);
  }
  // Stream-ordered pool: the block may be reused by work queued after the launch.
  const buffer = backend.alloc(n * q * 4);
  try {
    const omega: TensorView = { buffer, dtype: 'f32', shape: [n, q], offset: 0, size: n * q };
    random(backend, omega, 'normal', seed, 0, 1);
    k.launch(
      { grid: 1, block: RSVD_THREADS, sharedMemBytes, stream },
      backend.address(a), backend.address(omega),
      backend.address(u), backend.address(s), backend.address(v), m, n, q, rank, powerIterations, backend.address(status),
    );
  } finally {
    backend.free(buffer);
  }
}
