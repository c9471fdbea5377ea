/**
 * cuBLAS as a matmul engine: alpha·op(A)·op(B) by cuBLAS (TF32 where allowed), then beta·C, bias
 * and the activation by the epilogue kernel. One handle per backend, created on first need.
 */
import { CublasHandle } from '../../../cublas/handle.js';
import type { ArgType } from '../../../ffi/kernel-args.js';
import type { OpStateKey } from '../../backend/op-states.js';
import { DTYPE_CODE } from '../../gpu/kernel-specs.js';
import { gridFor } from '../../gpu/launch-context.js';
import type { CudaContext } from '../cuda-context.js';
import type { Resolved } from './product.js';

/** out, c, bias, total, m, n, c batch stride, beta, activation. */
const EPILOGUE_SIGNATURE: readonly ArgType[] = ['ptr', 'ptr', 'ptr', 'u64', 'i32', 'i32', 'i64', 'f32', 'i32'];
const EPILOGUE_BLOCK_LIMIT = 256;

/** The backend's cuBLAS handle, or why cuBLAS cannot be loaded. */
interface CublasState {
  handle: CublasHandle | undefined;
  unavailable: Error | undefined;
  dispose(): void;
}

const CUBLAS: OpStateKey<CublasState, CudaContext> = {
  name: 'cuBLAS handle',
  create: (backend) => {
    const state: CublasState = {
      handle: undefined,
      unavailable: undefined,
      dispose: () => state.handle?.dispose(),
    };
    try {
      state.handle = new CublasHandle(backend.context);
      backend.logger?.debug(`matmul: cuBLAS ${state.handle.version} ready`);
    } catch (err) {
      state.unavailable = err instanceof Error ? err : new Error(String(err));
      backend.logger?.debug(`matmul: cuBLAS unavailable: ${state.unavailable.message}`);
    }
    return state;
  },
};

/** The backend's cuBLAS handle; undefined when cuBLAS cannot be loaded (or throws when `required`). */
export function cublasHandle(backend: CudaContext, required: boolean): CublasHandle | undefined {
  const state = backend.states.get(CUBLAS);
  if (state.unavailable && required) throw state.unavailable;
  return state.handle;
}

/** alpha·op(A)·op(B) by cuBLAS into out, then beta·C, bias and the activation by the epilogue kernel. */
export function runCublas(backend: CudaContext, handle: CublasHandle, r: Resolved): void {
  const p = r.params;
  const stream = backend.enqueue(p.a, p.b, p.out, p.c, p.bias);
  handle.gemm({
    dtype: r.dtype,
    tf32: p.precision === 'tf32',
    transA: p.transA,
    transB: p.transB,
    m: p.m,
    n: p.n,
    k: p.k,
    alpha: p.alpha,
    beta: 0,
    a: r.a,
    b: r.b,
    c: r.out,
    batch: p.batch,
    strideA: p.aBatchStride,
    strideB: p.bBatchStride,
    strideC: p.m * p.n,
    stream: stream.handle,
  });
  if (r.c === 0n && r.bias === 0n && r.act === 0) return;
  const source = { file: 'matmul_epilogue.cu', defines: { GC_DTYPE: DTYPE_CODE[r.dtype] } };
  const kernel = backend.kernel(`matmul_epilogue:${r.dtype}`, () => source, 'matmul_epilogue', EPILOGUE_SIGNATURE);
  const launch = kernel.shape(EPILOGUE_BLOCK_LIMIT);
  const total = p.batch * p.m * p.n;
  kernel.launch({ grid: gridFor(total, launch), block: launch.block, stream }, r.out, r.c, r.bias, total, p.m, p.n, p.cBatchStride, p.beta, r.act);
}

