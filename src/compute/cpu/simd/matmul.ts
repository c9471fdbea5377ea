/**
 * Matrix products on the SIMD sgemm (`kernels/wasm/sgemm.c`): out = act(alpha·op(A)·op(B) +
 * beta·C + bias), batched by element strides, f32/f16/bf16 operands computed in f32. Work is
 * split across threads by batch entries, else by column or row ranges of the output; K is never
 * split, so the result does not depend on the thread count.
 */
import type { DType } from '../../core/dtype.js';
import type { MatmulActivation } from '../../core/matmul-plan.js';
import { activationCode, DTYPE_CODE } from './codes.js';
import type { SimdRuntime } from './runtime.js';
import { splitRange } from './split.js';

/** Register tile of the sgemm (MR × NR in sgemm.c): range boundaries fall on it. */
const MR = 4;
const NR = 8;

/** One (batched) product; addresses are byte offsets, strides are elements. */
export interface SimdGemm {
  a: number;
  aType: DType;
  b: number;
  bType: DType;
  out: number;
  outType: DType;
  /** Added as beta·C; ignored when beta is 0 (as the CPU backend does). Must not overlap `out`: with K beyond one packed slice, partial sums of an f32 output are kept in `out`. */
  c?: number;
  cType?: DType;
  /** [n], added to every row. */
  bias?: number;
  biasType?: DType;
  m: number;
  n: number;
  k: number;
  batch: number;
  transA: boolean;
  transB: boolean;
  alpha: number;
  beta: number;
  activation?: MatmulActivation;
  /** Row strides as stored (default: dense, i.e. the stored row length). */
  lda?: number;
  ldb?: number;
  ldc?: number;
  ldo?: number;
  /** Batch strides; 0 repeats one matrix for every entry. */
  aBatchStride: number;
  bBatchStride: number;
  cBatchStride: number;
  /** Default m·ldo (dense). */
  outBatchStride?: number;
}

/** Runs one product on the SIMD kernels. */
export function gemm(rt: SimdRuntime, g: SimdGemm): void {
  const { m, n, k, batch } = g;
  const lda = g.lda ?? (g.transA ? m : k);
  const ldb = g.ldb ?? (g.transB ? k : n);
  const ldc = g.ldc ?? n;
  const ldo = g.ldo ?? n;
  const outBatch = g.outBatchStride ?? m * ldo;
  const withC = g.c !== undefined && g.beta !== 0;
  // Depth beyond one slice keeps partial sums in f32: in the output itself when it is f32.
  const needAcc = k > rt.gemmBlockDepth;
  const acc = needAcc && g.outType !== 'f32' ? rt.temp(batch * m * n * 4) : undefined;
  try {
    const at = rt.structArea();
    const i32 = rt.i32;
    const f32 = rt.f32;
    const w = at / 4;
    const fields = [
      g.a,
      g.b,
      withC ? g.c! : 0,
      g.bias ?? 0,
      g.out,
      acc ? Number(acc.address) : needAcc ? g.out : 0,
      DTYPE_CODE[g.aType],
      DTYPE_CODE[g.bType],
      DTYPE_CODE[g.cType ?? 'f32'],
      DTYPE_CODE[g.biasType ?? 'f32'],
      DTYPE_CODE[g.outType],
      m,
      n,
      k,
      lda,
      ldb,
      ldc,
      ldo,
      acc ? n : ldo,
      g.transA ? 1 : 0,
      g.transB ? 1 : 0,
      g.aBatchStride,
      g.bBatchStride,
      g.cBatchStride,
      outBatch,
      acc ? m * n : outBatch,
    ];
    for (let i = 0; i < fields.length; i++) i32[w + i] = fields[i]!;
    f32[w + fields.length] = g.alpha;
    f32[w + fields.length + 1] = g.beta;
    i32[w + fields.length + 2] = activationCode(g.activation);
    const parts = gemmParts(rt, m, n, k, batch).map(([e0, e1, i0, i1, j0, j1]) => [at, e0, e1, i0, i1, j0, j1]);
    rt.run('sgemm', parts, true, rt.cost('gemmMacs', batch * m * n * Math.max(k, 1)));
  } finally {
    if (acc) rt.freeTemp(acc);
  }
}

/** Per-thread [e0, e1, i0, i1, j0, j1]: batch entries when there are enough, else columns or rows. */
function gemmParts(rt: SimdRuntime, m: number, n: number, k: number, batch: number): number[][] {
  const macs = m * n * Math.max(k, 1);
  const threads = Math.min(rt.threads, Math.max(1, Math.floor((macs * batch) / rt.threshold('gemmMacs'))));
  if (threads === 1) return [[0, batch, 0, m, 0, n]];
  if (batch >= threads) return splitRange(batch, threads, 1).map(([e0, e1]) => [e0, e1, 0, m, 0, n]);
  if (n >= m) return splitRange(n, threads, NR, NR).map(([j0, j1]) => [0, batch, 0, m, j0, j1]);
  return splitRange(m, threads, MR, MR).map(([i0, i1]) => [0, batch, i0, i1, 0, n]);
}

