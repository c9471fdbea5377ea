import type { Context } from '../driver/context.js';
import { DisposedError, InvalidArgumentError } from '../errors.js';
import {
  cublas,
  CublasComputeType,
  CublasDiagType,
  CublasFillMode,
  CublasMath,
  CublasOperation,
  CublasSideMode,
  CUBLAS_GEMM_DEFAULT,
  CudaDataType,
} from './bindings.js';
import { checkCublas } from './cublas-error.js';

/** Element types cuBLAS multiplies here (always with f32 accumulation). */
export type CublasDType = 'f32' | 'f16' | 'bf16';

/**
 * A row-major (batched) product C = alpha·op(A)·op(B) + beta·C, the layout this library
 * stores. Pointers are device addresses; strides are in elements (0 repeats one matrix).
 */
export interface RowMajorGemm {
  dtype: CublasDType;
  /** f32 inputs through TF32 tensor cores (CUBLAS_COMPUTE_32F_FAST_TF32); otherwise full f32. */
  tf32: boolean;
  transA: boolean;
  transB: boolean;
  m: number;
  n: number;
  k: number;
  alpha: number;
  beta: number;
  a: bigint;
  b: bigint;
  c: bigint;
  batch: number;
  strideA: number;
  strideB: number;
  strideC: number;
  /** Driver stream handle the work is queued on. */
  stream: bigint;
}

/**
 * A column-major f32 triangular solve in place: B ← alpha·op(A)⁻¹·B (`left`) or
 * B ← alpha·B·op(A)⁻¹, with A triangular (its other triangle is not read). B is m×n.
 */
export interface ColumnMajorTriangularSolve {
  left: boolean;
  /** A's lower triangle holds it (else the upper). */
  lower: boolean;
  /** op(A) = Aᵀ. */
  transA: boolean;
  m: number;
  n: number;
  alpha: number;
  a: bigint;
  lda: number;
  b: bigint;
  ldb: number;
  /** Driver stream handle the work is queued on. */
  stream: bigint;
}

const DATA_TYPE: Record<CublasDType, number> = { f32: CudaDataType.R_32F, f16: CudaDataType.R_16F, bf16: CudaDataType.R_16BF };
const INT32_MAX = 2 ** 31 - 1;

/**
 * A cuBLAS handle bound to one CUDA context (created with it current), with the default
 * math mode: no TF32 unless a call asks for it through its compute type.
 * `dispose()` (or `using`) destroys it; it must go before its context does.
 */
export class CublasHandle implements Disposable {
  readonly context: Context;
  /** cuBLAS version, e.g. 130100 for 13.1.0. */
  readonly version: number;
  #handle: bigint;
  #stream: bigint | undefined;
  readonly #scalars = new Float32Array(2);

  constructor(context: Context) {
    this.context = context;
    context.makeCurrent();
    const out = new BigUint64Array(1);
    checkCublas('cublasCreate_v2', cublas.cublasCreate(out));
    this.#handle = out[0]!;
    const version = new Int32Array(1);
    checkCublas('cublasGetVersion_v2', cublas.cublasGetVersion(this.#handle, version));
    this.version = version[0]!;
    checkCublas('cublasSetMathMode', cublas.cublasSetMathMode(this.#handle, CublasMath.DEFAULT));
  }

  /** True after {@link dispose}. */
  get disposed(): boolean {
    return this.#handle === 0n;
  }

  /**
   * Queues a row-major product. cuBLAS is column-major: a row-major X is a column-major Xᵀ,
   * so Cᵀ = op(B)ᵀ·op(A)ᵀ is computed with the operands swapped and no data moved.
   */
  gemm(g: RowMajorGemm): void {
    const handle = this.#live();
    for (const [name, v] of [['m', g.m], ['n', g.n], ['k', g.k], ['batch', g.batch]] as const) {
      if (!Number.isInteger(v) || v < 0 || v > INT32_MAX) throw new InvalidArgumentError(`cuBLAS gemm: ${name} ${v} is not an int32 extent`);
    }
    this.context.makeCurrent();
    if (g.stream !== this.#stream) {
      checkCublas('cublasSetStream_v2', cublas.cublasSetStream(handle, g.stream));
      this.#stream = g.stream;
    }
    const type = DATA_TYPE[g.dtype];
    const compute = g.dtype === 'f32' && g.tf32 ? CublasComputeType.COMPUTE_32F_FAST_TF32 : CublasComputeType.COMPUTE_32F;
    const opA = g.transA ? CublasOperation.T : CublasOperation.N;
    const opB = g.transB ? CublasOperation.T : CublasOperation.N;
    // Leading dims of the row-major operands as stored (their row lengths).
    const lda = Math.max(1, g.transA ? g.m : g.k);
    const ldb = Math.max(1, g.transB ? g.k : g.n);
    const ldc = Math.max(1, g.n);
    this.#scalars[0] = g.alpha;
    this.#scalars[1] = g.beta;
    const alpha = this.#scalars.subarray(0, 1);
    const beta = this.#scalars.subarray(1, 2);
    if (g.batch === 1) {
      checkCublas(
        'cublasGemmEx',
        cublas.cublasGemmEx(handle, opB, opA, g.n, g.m, g.k, alpha, g.b, type, ldb, g.a, type, lda, beta, g.c, type, ldc, compute, CUBLAS_GEMM_DEFAULT),
      );
    } else {
      checkCublas(
        'cublasGemmStridedBatchedEx',
        cublas.cublasGemmStridedBatchedEx(
          handle, opB, opA, g.n, g.m, g.k, alpha,
          g.b, type, ldb, g.strideB,
          g.a, type, lda, g.strideA,
          beta, g.c, type, ldc, g.strideC,
          g.batch, compute, CUBLAS_GEMM_DEFAULT,
        ),
      );
    }
  }

  /** Queues a column-major f32 triangular solve (cublasStrsm) with a non-unit diagonal. */
  triangularSolve(t: ColumnMajorTriangularSolve): void {
    const handle = this.#live();
    for (const [name, v] of [['m', t.m], ['n', t.n], ['lda', t.lda], ['ldb', t.ldb]] as const) {
      if (!Number.isInteger(v) || v < 1 || v > INT32_MAX) throw new InvalidArgumentError(`cuBLAS trsm: ${name} ${v} is not a positive int32 extent`);
    }
    this.context.makeCurrent();
    if (t.stream !== this.#stream) {
      checkCublas('cublasSetStream_v2', cublas.cublasSetStream(handle, t.stream));
      this.#stream = t.stream;
    }
    this.#scalars[0] = t.alpha;
    checkCublas(
      'cublasStrsm_v2',
      cublas.cublasStrsm(
        handle,
        t.left ? CublasSideMode.LEFT : CublasSideMode.RIGHT,
        t.lower ? CublasFillMode.LOWER : CublasFillMode.UPPER,
        t.transA ? CublasOperation.T : CublasOperation.N,
        CublasDiagType.NON_UNIT,
        t.m,
        t.n,
        this.#scalars.subarray(0, 1),
        t.a,
        t.lda,
        t.b,
        t.ldb,
      ),
    );
  }

  /** Destroys the handle (idempotent). Its context must still be alive. */
  dispose(): void {
    if (this.#handle === 0n) return;
    const handle = this.#handle;
    this.#handle = 0n;
    if (this.context.disposed || this.context.unusable) return; // the context took the handle's resources with it
    this.context.makeCurrent();
    checkCublas('cublasDestroy_v2', cublas.cublasDestroy(handle));
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  #live(): bigint {
    if (this.#handle === 0n) throw new DisposedError('CublasHandle');
    return this.#handle;
  }
}
