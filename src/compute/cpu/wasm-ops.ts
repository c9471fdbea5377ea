/**
 * The CPU backend's ops on the WebAssembly kernels (`simd/`): each maps its views to byte
 * addresses in the linear memory (the buffer's address plus the view's offset in bytes) and
 * calls the matching kernel family, which splits big ops across the worker threads and queues
 * them; then it marks every buffer the op touches with the last job queued, so host access to
 * them waits for it (see CpuBuffer). Only views whose buffers live in that memory come here
 * ({@link WasmOps.holds}); the backend sends the others to the JS loops.
 */
import { dtypeSize } from '../core/dtype.js';
import type { AttentionBackwardParams } from '../core/attention-backward-params.js';
import type { AttentionParams } from '../core/attention-params.js';
import type { BroadcastPlan } from '../core/broadcast.js';
import type { ActivationGradOp, BinaryOp, UnaryOp } from '../core/elementwise-ops.js';
import type { GruRecurrenceParams, GruRolloutParams } from '../core/gru-params.js';
import type { MatmulParams } from '../core/matmul-plan.js';
import type { ReduceOp, ReducePlan } from '../core/reduce-plan.js';
import type { TensorView } from '../core/view.js';
import type { PoolBlock } from '../gpu/memory-pool.js';
import type { CpuBuffer } from './cpu-buffer.js';
import type { ProductEngine } from './product-engine.js';
import { attention } from './simd/attention.js';
import { attentionBackwardByProducts } from './simd/attention-backward-products.js';
import { attentionByProducts } from './simd/attention-products.js';
import * as elementwise from './simd/elementwise.js';
import { gruRecurrence } from './simd/gru.js';
import { gruRollout, rolloutFits } from './simd/gru-rollout.js';
import { dropout, randomUniform } from './simd/random.js';
import { reduce } from './simd/reduce.js';
import { layerNorm, softmax } from './simd/rows.js';
import type { SimdRuntime } from './simd/runtime.js';
import { transpose } from './simd/transpose.js';

/** Byte address of a view's first element in the linear memory its buffer lives in. */
function at(view: TensorView): number {
  return (view.buffer as CpuBuffer).address + view.offset * dtypeSize[view.dtype];
}

/** Marks the buffers of `views` as used by the jobs queued so far. */
function touch(rt: SimdRuntime, views: (TensorView | undefined)[]): void {
  const job = rt.submitted;
  if (job === 0) return;
  for (const view of views) if (view !== undefined) (view.buffer as CpuBuffer).lastUse = job;
}

/** {@link at} for an optional view. */
function maybe(view: TensorView | undefined): number | undefined {
  return view === undefined ? undefined : at(view);
}

export class WasmOps {
  readonly #rt: SimdRuntime;
  readonly #products: ProductEngine;

  constructor(rt: SimdRuntime, products: ProductEngine) {
    this.#rt = rt;
    this.#products = products;
  }

  /** Whether every given view lives in this runtime's memory. */
  holds(...views: (TensorView | undefined)[]): boolean {
    const memory = this.#rt.memory;
    for (const view of views) if (view !== undefined && (view.buffer as CpuBuffer).memory !== memory) return false;
    return true;
  }

  /** Whether a GRU of `hidden` units fits the kernels' per-thread scratch (up to about 140 thousand). */
  holdsGru(hidden: number): boolean {
    return this.#rt.kernels.gru_scratch_bytes(hidden) <= this.#rt.scratchBytes;
  }

  fill(out: TensorView, value: number): void {
    this.#rt.op = 'fill';
    elementwise.fill(this.#rt, out.dtype, at(out), out.size, value);
    touch(this.#rt, [out]);
  }

  copy(dst: TensorView, src: TensorView): void {
    this.#rt.op = 'copy';
    elementwise.copy(this.#rt, at(dst), at(src), src.size * dtypeSize[src.dtype]);
    touch(this.#rt, [dst, src]);
  }

  randomUniform(out: TensorView, seed: number, a: number, b: number): void {
    this.#rt.op = 'random';
    randomUniform(this.#rt, out.dtype, at(out), out.size, seed, a, b);
    touch(this.#rt, [out]);
  }

  cast(x: TensorView, out: TensorView): void {
    this.#rt.op = 'cast';
    elementwise.cast(this.#rt, x.dtype, at(x), out.dtype, at(out), x.size);
    touch(this.#rt, [x, out]);
  }

  unary(op: UnaryOp, x: TensorView, out: TensorView, alpha?: number): void {
    this.#rt.op = 'unary';
    elementwise.unary(this.#rt, op, x.dtype, at(x), at(out), x.size, alpha);
    touch(this.#rt, [x, out]);
  }

  activationGrad(op: ActivationGradOp, x: TensorView, dy: TensorView, out: TensorView, alpha?: number): void {
    this.#rt.op = 'activationGrad';
    elementwise.activationGrad(this.#rt, op, x.dtype, at(x), at(dy), at(out), x.size, alpha);
    touch(this.#rt, [x, dy, out]);
  }

  binary(op: BinaryOp, a: TensorView, b: TensorView, out: TensorView, plan: BroadcastPlan): void {
    this.#rt.op = 'binary';
    elementwise.binary(this.#rt, op, a.dtype, at(a), at(b), at(out), plan);
    touch(this.#rt, [a, b, out]);
  }

  reduce(op: ReduceOp, x: TensorView, out: TensorView, plan: ReducePlan): void {
    this.#rt.op = 'reduce';
    reduce(this.#rt, op, x.dtype, at(x), at(out), plan);
    touch(this.#rt, [x, out]);
  }

  softmax(x: TensorView, out: TensorView, rows: number, cols: number, log: boolean): void {
    this.#rt.op = 'softmax';
    softmax(this.#rt, x.dtype, at(x), at(out), rows, cols, log);
    touch(this.#rt, [x, out]);
  }

  layerNorm(x: TensorView, gamma: TensorView | undefined, beta: TensorView | undefined, out: TensorView, rows: number, cols: number, eps: number): void {
    this.#rt.op = 'layerNorm';
    layerNorm(this.#rt, x.dtype, at(x), maybe(gamma), maybe(beta), at(out), rows, cols, eps);
    touch(this.#rt, [x, gamma, beta, out]);
  }

  transpose(x: TensorView, out: TensorView, batch: number, rows: number, cols: number): void {
    this.#rt.op = 'transpose';
    transpose(this.#rt, x.dtype, at(x), at(out), batch, rows, cols);
    touch(this.#rt, [x, out]);
  }

  dropout(x: TensorView, out: TensorView, p: number, seed: number): void {
    this.#rt.op = 'dropout';
    dropout(this.#rt, x.dtype, at(x), at(out), x.size, p, seed);
    touch(this.#rt, [x, out]);
  }

  matmul(p: MatmulParams): void {
    this.#rt.op = 'matmul';
    const withC = p.c !== undefined && p.beta !== 0;
    this.#products.gemm({
      a: at(p.a),
      aType: p.a.dtype,
      b: at(p.b),
      bType: p.b.dtype,
      out: at(p.out),
      outType: p.out.dtype,
      ...(withC ? { c: at(p.c!), cType: p.c!.dtype } : {}),
      ...(p.bias ? { bias: at(p.bias), biasType: p.bias.dtype } : {}),
      ...(p.activation ? { activation: p.activation } : {}),
      m: p.m,
      n: p.n,
      k: p.k,
      batch: p.batch,
      transA: p.transA,
      transB: p.transB,
      alpha: p.alpha,
      beta: p.beta,
      aBatchStride: p.aBatchStride,
      bBatchStride: p.bBatchStride,
      cBatchStride: p.cBatchStride,
    });
    touch(this.#rt, [p.a, p.b, p.out, p.c, p.bias]);
  }

  /**
   * With a BLAS, as products (see attention-products.ts; 16-bit operands widened to f32 first and
   * the output rounded once); otherwise the tiled kernel, which reads every dtype.
   */
  attention(p: AttentionParams): void {
    this.#rt.op = 'attention';
    const shape = { batch: p.batch, heads: p.heads, kvHeads: p.kvHeads, seqQ: p.seqQ, seqK: p.seqK, headDim: p.headDim, scale: p.scale, causal: p.causal };
    const masks = { ...(p.lse ? { lse: at(p.lse) } : {}), ...(p.keyLengths ? { keyLengths: at(p.keyLengths) } : {}) };
    if (this.#products.blas) {
      this.#inF32([p.q, p.k, p.v], [p.out], ([q, k, v], [out]) =>
        attentionByProducts(this.#rt, { dtype: 'f32', q: q!, k: k!, v: v!, out: out!, ...masks, ...shape }, (g) => this.#products.gemm(g)),
      );
    } else {
      attention(this.#rt, { dtype: p.q.dtype, q: at(p.q), k: at(p.k), v: at(p.v), out: at(p.out), ...masks, ...shape });
    }
    touch(this.#rt, [p.q, p.k, p.v, p.out, p.lse, p.keyLengths]);
  }

  /** The backward by products (see attention-backward-products.ts), in f32 whatever the dtype. */
  attentionBackward(p: AttentionBackwardParams): void {
    this.#rt.op = 'attentionBackward';
    const shape = { batch: p.batch, heads: p.heads, kvHeads: p.kvHeads, seqQ: p.seqQ, seqK: p.seqK, headDim: p.headDim, scale: p.scale, causal: p.causal };
    this.#inF32([p.q, p.k, p.v, p.out, p.dOut], [p.dq, p.dk, p.dv], ([q, k, v, out, dOut], [dq, dk, dv]) =>
      attentionBackwardByProducts(
        this.#rt,
        { q: q!, k: k!, v: v!, out: out!, dOut: dOut!, dq: dq!, dk: dk!, dv: dv!, lse: at(p.lse), ...(p.keyLengths ? { keyLengths: at(p.keyLengths) } : {}), ...shape },
        (g) => this.#products.gemm(g),
      ),
    );
    touch(this.#rt, [p.q, p.k, p.v, p.out, p.lse, p.dOut, p.dq, p.dk, p.dv, p.keyLengths]);
  }

  /**
   * Runs `fn` on f32 addresses of `inputs` and `outputs`: a view's own where it is f32, else a
   * temporary (inputs widened into it first, outputs rounded from it once after).
   */
  #inF32(inputs: TensorView[], outputs: TensorView[], fn: (inputs: number[], outputs: number[]) => void): void {
    const temps: PoolBlock[] = [];
    const f32 = (view: TensorView, widen: boolean): number => {
      if (view.dtype === 'f32') return at(view);
      const n = view.shape.reduce((a, d) => a * d, 1);
      const block = this.#rt.temp(n * 4);
      temps.push(block);
      if (widen) elementwise.cast(this.#rt, view.dtype, at(view), 'f32', Number(block.address), n);
      return Number(block.address);
    };
    try {
      const ins = inputs.map((view) => f32(view, true));
      const outs = outputs.map((view) => f32(view, false));
      fn(ins, outs);
      outputs.forEach((view, i) => {
        if (view.dtype !== 'f32') elementwise.cast(this.#rt, 'f32', outs[i]!, view.dtype, at(view), view.shape.reduce((a, d) => a * d, 1));
      });
    } finally {
      for (const block of temps) this.#rt.freeTemp(block);
    }
  }

  gruRecurrence(p: GruRecurrenceParams): void {
    this.#rt.op = 'gruRecurrence';
    const ln = p.layerNorm;
    gruRecurrence(
      this.#rt,
      {
        dtype: p.hN.dtype,
        gx: at(p.gx),
        gxStrides: p.gxStrides,
        wHh: at(p.wHh),
        ...(p.bIh ? { bIh: at(p.bIh) } : {}),
        ...(p.bHh ? { bHh: at(p.bHh) } : {}),
        h0: at(p.h0),
        hSeq: at(p.hSeq),
        seqStrides: p.seqStrides,
        slots: p.slots,
        hN: at(p.hN),
        ...(ln ? { layerNorm: { ...(ln.gamma ? { gamma: at(ln.gamma) } : {}), ...(ln.beta ? { beta: at(ln.beta) } : {}), eps: ln.eps } } : {}),
        ensemble: p.ensemble,
        batch: p.batch,
        steps: p.steps,
        hidden: p.hidden,
      },
      (g) => this.#products.gemm(g),
    );
    touch(this.#rt, [p.gx, p.wHh, p.bIh, p.bHh, p.h0, p.hSeq, p.hN, p.layerNorm?.gamma, p.layerNorm?.beta]);
  }

  /**
   * The rollout in one go (simd/gru-rollout.ts) where it applies: f32 and a hidden size whose
   * gates fit a thread's scratch. Returns false, having run nothing, elsewhere. With a BLAS its
   * products run single-threaded, several at once: the library is set to one thread meanwhile.
   */
  gruRollout(p: GruRolloutParams): boolean {
    const views = [p.state, p.h0, p.wIh, p.wHh, p.bIh, p.bHh, p.outWeight, p.outBias, p.states, p.hN];
    if (views.some((view) => view !== undefined && view.dtype !== 'f32') || !rolloutFits(this.#rt, p.hidden)) return false;
    this.#rt.op = 'gruRollout';
    const blas = this.#products.blas;
    const threads = blas?.threads ?? null;
    if (blas && threads !== 1) blas.setThreads(1);
    try {
      gruRollout(
        this.#rt,
        {
          state: at(p.state),
          stateShared: p.stateShared,
          h0: maybe(p.h0) ?? 0,
          wIh: at(p.wIh),
          wHh: at(p.wHh),
          bIh: maybe(p.bIh) ?? 0,
          bHh: maybe(p.bHh) ?? 0,
          outWeight: at(p.outWeight),
          outBias: maybe(p.outBias) ?? 0,
          projectionShared: p.projectionShared,
          states: at(p.states),
          hN: at(p.hN),
          ensemble: p.ensemble,
          batch: p.batch,
          steps: p.steps,
          hidden: p.hidden,
          input: p.input,
        },
        blas !== undefined,
      );
    } finally {
      if (blas && threads !== 1) blas.setThreads(threads ?? this.#rt.threads);
    }
    return true;
  }
}
