/**
 * Attention backward composed from matmul and the core ops, for a backend with no kernel of its
 * own (see `core/attention-backward-params.ts` for the equations). It works per (batch, k/v head)
 * pair, whose query rows (those of every query head sharing the k/v head, `group · seqQ` of them)
 * are contiguous in q, and takes them in blocks of at most {@link MAX_BLOCK_ROWS}: per block the
 * scores against all keys are one product, so the largest scratch is a block × seqK, never the
 * seqQ × seqK matrix. Summing over the group's rows in dk = dSᵀ·q and dv = Pᵀ·dOut is what GQA
 * asks for.
 *
 * Per block: S = scale·Q·Kᵀ, P = exp(min(S − lse, 0)) ∘ valid, dP = dOut·Vᵀ, dS = P ∘ (dP − D),
 * dQ = scale·dS·K, and dK, dV accumulate scale·dSᵀ·Q and Pᵀ·dOut. `valid` is the mask as 0/1:
 * clamp(limit − j, 0, 1) for key j, with limit = min(keyLength, i + 1) under the causal mask (i
 * the query's position), built from index vectors written from the host. Clamping the exponent at
 * 0 changes nothing where a key is visible (S ≤ lse there) and keeps a row that saw no key
 * (lse = −∞) at exp(0) · 0 = 0 instead of ∞ · 0. Intermediates are f32; accumulators ping-pong
 * between two buffers, since an op never writes a buffer it reads.
 */
import { planBroadcast } from '../../core/broadcast.js';
import type { AttentionBackwardParams } from '../../core/attention-backward-params.js';
import type { MatmulParams } from '../../core/matmul-plan.js';
import type { TensorView } from '../../core/view.js';
import type { BackendCore, OptionalOps } from '../backend.js';
import { Temporaries } from './temporaries.js';

/** Most query rows per block. */
const MAX_BLOCK_ROWS = 64;
/** Most elements of one block × seqK scratch matrix (the block shrinks for very long key sequences). */
const MAX_BLOCK_ELEMENTS = 1 << 22;

type MatmulBackend = BackendCore & Pick<OptionalOps, 'matmul'>;

/** A dense view of `shape` at element `offset` of `base`'s buffer (in base's dtype). */
function slice(base: TensorView, offset: number, shape: number[]): TensorView {
  return { buffer: base.buffer, dtype: base.dtype, shape, offset: base.offset + offset, size: shape.reduce((a, d) => a * d, 1) };
}

/** out = alpha·op(a)·op(b) (+ c), one product of `m × n` over `k`. */
function product(backend: MatmulBackend, a: TensorView, b: TensorView, out: TensorView, dims: { m: number; n: number; k: number }, o: { transA?: boolean; transB?: boolean; alpha?: number; c?: TensorView }): void {
  const params: MatmulParams = {
    a,
    b,
    out,
    ...dims,
    batch: 1,
    aBatchStride: 0,
    bBatchStride: 0,
    cBatchStride: 0,
    transA: o.transA ?? false,
    transB: o.transB ?? false,
    alpha: o.alpha ?? 1,
    beta: o.c ? 1 : 0,
    precision: 'highest',
    engine: 'auto',
    autotune: false,
  };
  if (o.c) params.c = o.c;
  backend.matmul(params);
}

export function composedAttentionBackward(backend: MatmulBackend, p: AttentionBackwardParams): void {
  const { batch, heads, kvHeads, seqQ, seqK, headDim: d, scale, causal } = p;
  using temps = new Temporaries(backend);
  const group = heads / kvHeads;
  const rows = group * seqQ;
  const q = temps.f32(p.q);
  const k = temps.f32(p.k);
  const v = temps.f32(p.v);
  const dOut = temps.f32(p.dOut);
  // D = rowsum(dOut ∘ out) for every query row at once.
  const allRows = batch * heads * seqQ;
  const products = temps.view('f32', [allRows, d]);
  backend.binary('mul', dOut, temps.f32(p.out), products, planBroadcast('attentionBackward', [allRows, d], [allRows, d]));
  const rowDot = temps.view('f32', [allRows, 1]);
  backend.reduce('sum', products, rowDot, { outer: allRows, axisLen: d, inner: 1 });
  const dq = p.dq.dtype === 'f32' ? p.dq : temps.view('f32', p.dq.shape);
  // dk and dv accumulate in two buffers each, read from one and written to the other per block.
  const kvSize = batch * kvHeads * seqK * d;
  const dkAcc = [temps.view('f32', [kvSize]), temps.view('f32', [kvSize])] as const;
  const dvAcc = [temps.view('f32', [kvSize]), temps.view('f32', [kvSize])] as const;
  const keyIndex = temps.view('f32', [1, seqK]);
  backend.write(keyIndex.buffer, Float32Array.from({ length: seqK }, (_, j) => j));
  const one = temps.view('f32', []);
  backend.fill(one, 1);
  const zero = temps.view('f32', []);
  backend.fill(zero, 0);
  const keyCount = temps.view('f32', []);
  backend.fill(keyCount, seqK);
  const masked = causal || p.keyLengths !== undefined;
  const blockRows = Math.max(1, Math.min(rows, MAX_BLOCK_ROWS, Math.floor(MAX_BLOCK_ELEMENTS / seqK)));
  let blocks = 0;
  for (let pair = 0; pair < batch * kvHeads; pair++) {
    const b = Math.floor(pair / kvHeads);
    const kvAt = pair * seqK * d;
    const kp = slice(k, kvAt, [seqK, d]);
    const vp = slice(v, kvAt, [seqK, d]);
    using pairTemps = new Temporaries(backend);
    // The pair's key length as f32 [1, 1], clamped to [0, seqK] as the forward does.
    let length: TensorView | undefined;
    if (p.keyLengths) {
      const raw = pairTemps.view('f32', [1, 1]);
      backend.cast(slice(p.keyLengths, b, [1, 1]), raw);
      const low = pairTemps.view('f32', [1, 1]);
      backend.binary('max', raw, zero, low, planBroadcast('attentionBackward', [1, 1], []));
      length = pairTemps.view('f32', [1, 1]);
      backend.binary('min', low, keyCount, length, planBroadcast('attentionBackward', [1, 1], []));
    }
    for (let r0 = 0; r0 < rows; r0 += blockRows, blocks++) {
      const br = Math.min(blockRows, rows - r0);
      using t = new Temporaries(backend);
      const rowAt = pair * rows + r0;
      const qb = slice(q, rowAt * d, [br, d]);
      const dOb = slice(dOut, rowAt * d, [br, d]);
      const lseB = slice(p.lse, rowAt, [br, 1]);
      const dotB = slice(rowDot, rowAt, [br, 1]);
      const byRow = planBroadcast('attentionBackward', [br, seqK], [br, 1]);
      const same = planBroadcast('attentionBackward', [br, seqK], [br, seqK]);
      const scores = t.view('f32', [br, seqK]);
      product(backend, qb, kp, scores, { m: br, n: seqK, k: d }, { transB: true, alpha: scale });
      const shifted = t.view('f32', [br, seqK]);
      backend.binary('sub', scores, lseB, shifted, byRow);
      const clamped = t.view('f32', [br, seqK]);
      backend.binary('min', shifted, zero, clamped, planBroadcast('attentionBackward', [br, seqK], []));
      let probs = t.view('f32', [br, seqK]);
      backend.unary('exp', clamped, probs);
      if (masked) {
        const valid = maskBlock(backend, t, { r0, br, seqQ, seqK, causal, length, keyIndex, zero, one });
        const maskedProbs = t.view('f32', [br, seqK]);
        backend.binary('mul', probs, valid, maskedProbs, planBroadcast('attentionBackward', [br, seqK], valid.shape));
        probs = maskedProbs;
      }
      const dProbs = t.view('f32', [br, seqK]);
      product(backend, dOb, vp, dProbs, { m: br, n: seqK, k: d }, { transB: true });
      const centered = t.view('f32', [br, seqK]);
      backend.binary('sub', dProbs, dotB, centered, byRow);
      const dScores = t.view('f32', [br, seqK]);
      backend.binary('mul', probs, centered, dScores, same);
      product(backend, dScores, kp, slice(dq, rowAt * d, [br, d]), { m: br, n: d, k: seqK }, { alpha: scale });
      // This pair's first block starts its accumulators; later ones add to the other buffer's.
      const first = r0 === 0;
      const [from, to] = [blocks % 2, (blocks + 1) % 2];
      const kvShape = [seqK, d];
      product(backend, dScores, qb, slice(dkAcc[to], kvAt, kvShape), { m: seqK, n: d, k: br }, { transA: true, alpha: scale, ...(first ? {} : { c: slice(dkAcc[from], kvAt, kvShape) }) });
      product(backend, probs, dOb, slice(dvAcc[to], kvAt, kvShape), { m: seqK, n: d, k: br }, { transA: true, ...(first ? {} : { c: slice(dvAcc[from], kvAt, kvShape) }) });
      // The next block of this pair reads what this one wrote; the next pair starts afresh.
      if (r0 + blockRows >= rows) copyPair(backend, dkAcc, dvAcc, to, kvAt, kvShape, p);
    }
  }
  if (dq !== p.dq) backend.cast(dq, p.dq);
}

/** The pair's finished dk and dv (in accumulator `at`) to the outputs, rounded to their dtype. */
function copyPair(backend: MatmulBackend, dkAcc: readonly TensorView[], dvAcc: readonly TensorView[], at: number, offset: number, shape: number[], p: AttentionBackwardParams): void {
  for (const [acc, out] of [[dkAcc[at]!, p.dk], [dvAcc[at]!, p.dv]] as const) {
    const src = slice(acc, offset, shape);
    const dst = slice(out, offset, shape);
    if (out.dtype === 'f32') backend.copy(dst, src);
    else backend.cast(src, dst);
  }
}

/** valid[r, j] ∈ {0, 1} for the block's rows ([1, seqK] when every row has the same limit): key j is below the row's limit. */
function maskBlock(
  backend: MatmulBackend,
  t: Temporaries,
  m: { r0: number; br: number; seqQ: number; seqK: number; causal: boolean; length: TensorView | undefined; keyIndex: TensorView; zero: TensorView; one: TensorView },
): TensorView {
  const { br, seqK } = m;
  let limit: TensorView;
  if (m.causal) {
    // Row r of the block is query position (r0 + r) mod seqQ of its head; it sees keys below position + 1.
    const positions = t.view('f32', [br, 1]);
    backend.write(positions.buffer, Float32Array.from({ length: br }, (_, r) => ((m.r0 + r) % m.seqQ) + 1));
    if (m.length) {
      limit = t.view('f32', [br, 1]);
      backend.binary('min', positions, m.length, limit, planBroadcast('attentionBackward', [br, 1], [1, 1]));
    } else {
      limit = positions;
    }
  } else {
    limit = m.length!;
  }
  // Under the causal mask each row has its limit; otherwise one row of 0/1 serves the whole block.
  const shape = [limit.shape[0]!, seqK];
  const scalar = planBroadcast('attentionBackward', shape, []);
  const gap = t.view('f32', shape);
  backend.binary('sub', limit, m.keyIndex, gap, planBroadcast('attentionBackward', limit.shape, [1, seqK]));
  const low = t.view('f32', shape);
  backend.binary('max', gap, m.zero, low, scalar);
  const valid = t.view('f32', shape);
  backend.binary('min', low, m.one, valid, scalar);
  return valid;
}
