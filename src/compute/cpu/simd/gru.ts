/**
 * One GRU layer's recurrence (the semantics of `core/gru-params.ts`) on the SIMD kernels: per
 * step, gh = h·W_hhᵀ for every member by one batched product into an f32 buffer (the SIMD sgemm,
 * or whatever product the caller passes, e.g. a BLAS), then the gates and the update by
 * `gru_step` (`kernels/wasm/gru.c`), which rounds the new state to the dtype and stores it where
 * the next step's product reads it.
 */
import { dtypeSize, type DType } from '../../core/dtype.js';
import { DTYPE_CODE } from './codes.js';
import { gemm, type SimdGemm } from './matmul.js';
import type { SimdRuntime } from './runtime.js';
import { splitRange } from './split.js';

/** One layer's recurrence; addresses are byte offsets, strides are elements of `dtype`. */
export interface SimdGruRecurrence {
  /** Every view's element type: f32, f16 or bf16. */
  dtype: DType;
  /** Input projections without bias; gate g of unit j of (e, b, t) at e·gxStrides[0] + b·[1] + t·[2] + g·H + j. */
  gx: number;
  gxStrides: readonly [number, number, number];
  /** [E, 3H, H]. */
  wHh: number;
  /** [E, 3H] each, or absent (zero). */
  bIh?: number;
  bHh?: number;
  /** Dense [E, B, H]. */
  h0: number;
  /** h_t of (e, b) at e·seqStrides[0] + b·[1] + (t mod slots)·[2]. */
  hSeq: number;
  seqStrides: readonly [number, number, number];
  slots: number;
  /** Final state, dense [E, B, H]. */
  hN: number;
  /** Normalise each new state over H: gamma/beta [E, H] (absent: 1 and 0). */
  layerNorm?: { gamma?: number; beta?: number; eps: number };
  ensemble: number;
  batch: number;
  steps: number;
  hidden: number;
}

/**
 * Runs the recurrence; `product` runs each step's h·W_hhᵀ (default: the SIMD sgemm).
 * @throws RangeError when H is beyond what a thread's scratch holds (over half a million units).
 */
export function gruRecurrence(rt: SimdRuntime, p: SimdGruRecurrence, product: (g: SimdGemm) => void = (g) => gemm(rt, g)): void {
  const { ensemble: E, batch: B, steps: T, hidden: H, dtype } = p;
  if (rt.kernels.gru_scratch_bytes(H) > rt.scratchBytes) throw new RangeError(`gruRecurrence: hidden size ${H} does not fit a thread's scratch`);
  const size = dtypeSize[dtype];
  const gh = rt.temp(E * B * 3 * H * 4);
  try {
    const ghAt = Number(gh.address);
    for (let t = 0; t < T; t++) {
      const first = t === 0;
      const prev = first ? p.h0 : p.hSeq + ((t - 1) % p.slots) * p.seqStrides[2] * size;
      const prevE = first ? B * H : p.seqStrides[0];
      const prevB = first ? H : p.seqStrides[1];
      product({
        a: prev,
        aType: dtype,
        b: p.wHh,
        bType: dtype,
        out: ghAt,
        outType: 'f32',
        m: B,
        n: 3 * H,
        k: H,
        batch: E,
        transA: false,
        transB: true,
        alpha: 1,
        beta: 0,
        lda: prevB,
        aBatchStride: prevE,
        bBatchStride: 3 * H * H,
        cBatchStride: 0,
      });
      const at = writeStep(rt, p, t, prev, prevE, prevB, ghAt);
      const rows = splitRange(E * B, rt.threads, Math.ceil(rt.threshold('gruElements') / H));
      rt.run('gru_step', rows.map(([r0, r1]) => [at, r0, r1]), true, rt.cost('gruElements', E * B * H));
    }
  } finally {
    rt.freeTemp(gh);
  }
}

/** Writes `gru_params` (gru.c) for step t. */
function writeStep(rt: SimdRuntime, p: SimdGruRecurrence, t: number, prev: number, prevE: number, prevB: number, gh: number): number {
  const size = dtypeSize[p.dtype];
  const at = rt.structArea();
  const ln = p.layerNorm;
  const fields = [
    p.gx + t * p.gxStrides[2] * size,
    gh,
    p.bIh ?? 0,
    p.bHh ?? 0,
    prev,
    p.hSeq + (t % p.slots) * p.seqStrides[2] * size,
    t === p.steps - 1 ? p.hN : 0,
    ln?.gamma ?? 0,
    ln?.beta ?? 0,
    p.gxStrides[0],
    p.gxStrides[1],
    prevE,
    prevB,
    p.seqStrides[0],
    p.seqStrides[1],
    DTYPE_CODE[p.dtype],
    p.batch,
    p.hidden,
    ln ? 1 : 0,
  ];
  const i32 = rt.i32;
  for (let i = 0; i < fields.length; i++) i32[at / 4 + i] = fields[i]!;
  rt.f32[at / 4 + fields.length] = ln?.eps ?? 0;
  return at;
}
