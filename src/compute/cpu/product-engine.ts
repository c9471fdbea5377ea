/**
 * What runs the CPU backend's products on the linear memory: the machine's BLAS where one was
 * found (f32 operands, read and written in place), else the WebAssembly sgemm, which also takes
 * f16/bf16 operands. With a BLAS the epilogue (bias, activation) runs after the product, on the
 * sgemm's own epilogue with no depth (act(0 + 1·out + bias) in place); beta·C goes in through
 * the BLAS call, C copied into the output first. The BLAS runs on the calling thread, so it
 * waits for the queued jobs first (they may write its operands).
 */
import type { Blas } from '../../blas/blas.js';
import { gemm, type SimdGemm } from './simd/matmul.js';
import type { SimdRuntime } from './simd/runtime.js';

export class ProductEngine {
  readonly #rt: SimdRuntime;
  readonly #blas: Blas | undefined;

  constructor(rt: SimdRuntime, blas: Blas | undefined) {
    this.#rt = rt;
    this.#blas = blas;
  }

  /** The BLAS that runs f32 products, if any. */
  get blas(): Blas | undefined {
    return this.#blas;
  }

  /** Runs one (batched) product; addresses are byte offsets into the runtime's memory. */
  gemm(g: SimdGemm): void {
    const f32 = g.aType === 'f32' && g.bType === 'f32' && g.outType === 'f32';
    if (this.#blas && f32) this.blasGemm(this.#blas, g);
    else gemm(this.#rt, g);
  }

  private blasGemm(blas: Blas, g: SimdGemm): void {
    const { m, n, k, batch, transA, transB } = g;
    // BLAS wants leading dimensions of at least 1, even of empty matrices.
    const lda = g.lda ?? Math.max(1, transA ? m : k);
    const ldb = g.ldb ?? Math.max(1, transB ? k : n);
    const ldc = g.ldc ?? n;
    const ldo = g.ldo ?? n;
    const outBatch = g.outBatchStride ?? m * ldo;
    const withC = g.c !== undefined && g.beta !== 0;
    this.#rt.settle();
    const memory = this.#rt.f32;
    for (let e = 0; e < batch; e++) {
      const out = g.out / 4 + e * outBatch;
      if (withC) {
        const c = g.c! / 4 + e * g.cBatchStride;
        for (let i = 0; i < m; i++) memory.copyWithin(out + i * ldo, c + i * ldc, c + i * ldc + n);
      }
      blas.sgemm({
        transA,
        transB,
        m,
        n,
        k,
        alpha: g.alpha,
        a: memory,
        aOffset: g.a / 4 + e * g.aBatchStride,
        lda,
        b: memory,
        bOffset: g.b / 4 + e * g.bBatchStride,
        ldb,
        beta: withC ? g.beta : 0,
        c: memory,
        cOffset: out,
        ldc: ldo,
      });
    }
    if (g.bias === undefined && g.activation === undefined) return;
    gemm(this.#rt, {
      a: 0,
      aType: 'f32',
      b: 0,
      bType: 'f32',
      c: g.out,
      cType: 'f32',
      ldc: ldo,
      cBatchStride: outBatch,
      ...(g.bias !== undefined ? { bias: g.bias, biasType: g.biasType ?? 'f32' } : {}),
      ...(g.activation !== undefined ? { activation: g.activation } : {}),
      out: g.out,
      outType: 'f32',
      ldo,
      outBatchStride: outBatch,
      m,
      n,
      k: 0,
      batch,
      transA: false,
      transB: false,
      alpha: 1,
      beta: 1,
      aBatchStride: 0,
      bBatchStride: 0,
    });
  }
}
