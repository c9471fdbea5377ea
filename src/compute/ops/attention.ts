/**
 * The front-end of `gpu.attention(q, k, v, options)`: scaled dot-product attention forward
 * (softmax(scale·q·kᵀ + mask)·v) on `[batch, heads, seq, headDim]` tensors, validated here so
 * every backend gets dense, consistent views and reports bad input the same way.
 *
 * Semantics shared by every backend:
 * - q is `[B, Hq, Sq, D]`, k and v are `[B, Hkv, Sk, D]` with Hq a multiple of Hkv (grouped-query
 *   and multi-query attention: q head h reads k/v head ⌊h / (Hq / Hkv)⌋). Sq may differ from Sk.
 * - `causal` is PyTorch SDPA's `is_causal`: the mask is the lower triangle of an Sq × Sk matrix of
 *   ones aligned top-left, so query i sees keys 0..i (all of them when i ≥ Sk - 1).
 * - `keyLengths[b]` keeps keys 0..len-1 of batch entry b and masks the rest (padding). A tensor's
 *   values are clamped to [0, Sk] on the device (they cannot be checked without a sync); a number
 *   array is checked here.
 * - A query row that sees no key (keyLengths 0, or Sk = 0) gets an output of 0 and a
 *   log-sum-exp of -Infinity, where a plain softmax would give NaN.
 * - f16/bf16 inputs are multiplied with f32 accumulation; softmax statistics are f32.
 */
import { InvalidArgumentError } from '../../errors.js';
import { MAX_ATTENTION_HEAD_DIM, type AttentionParams } from '../core/attention-params.js';
import type { DType } from '../core/dtype.js';
import type { Session } from '../tensor/session.js';
import { tensor } from './creation.js';
import { Tensor } from '../tensor/tensor.js';
import { formatShape, sameShape } from '../core/shape.js';
import { checkFlag, checkOptions, describeValue, optionKeys, validateFinite } from '../core/validation.js';

/** Options of `gpu.attention`. */
export interface AttentionOptions {
  /** Mask keys after the query's own position (PyTorch `is_causal`, top-left aligned). Default false. */
  causal?: boolean;
  /** Multiplies q·kᵀ before the softmax. Default 1/√headDim. */
  scale?: number;
  /**
   * Valid keys per batch entry, an i32 tensor `[batch]` or a number array of that length; keys
   * at or after the length are masked. Default: every key is valid.
   */
  keyLengths?: Tensor<'i32'> | readonly number[];
  /** Also return the log-sum-exp of each row's scaled scores, `[B, Hq, Sq]` f32 (for a backward pass). */
  returnLogSumExp?: boolean;
}

/** Output and per-row log-sum-exp (natural log) of `gpu.attention` with `returnLogSumExp: true`. */
export interface AttentionResult<D extends DType = DType> {
  out: Tensor<D>;
  lse: Tensor<'f32'>;
}

/** The keys {@link AttentionOptions} takes. */
export const ATTENTION_OPTIONS = optionKeys<AttentionOptions>({ causal: true, scale: true, keyLengths: true, returnLogSumExp: true });

/** The dtypes attention takes. */
export const ATTENTION_DTYPES: readonly DType[] = ['f32', 'f16', 'bf16'];

/**
 * softmax(scale·q·kᵀ + mask)·v; see the module comment for shapes and masking.
 * Returns the output, or `{ out, lse }` with `returnLogSumExp`.
 */
export function attention(s: Session, q: Tensor, k: Tensor, v: Tensor, opts?: unknown): Tensor | AttentionResult {
  const op = 'attention';
  s.checkTensor(op, q, 'q');
  s.checkTensor(op, k, 'k');
  s.checkTensor(op, v, 'v');
  const options = checkOptions<AttentionOptions>(op, opts, ATTENTION_OPTIONS);
  const dtype = q.dtype;
  if (!ATTENTION_DTYPES.includes(dtype)) {
    throw new InvalidArgumentError(`${op}: q must be f32, f16 or bf16, got ${q.toString()}; cast it first, e.g. gpu.cast(q, 'f32')`);
  }
  for (const [name, t] of [['k', k], ['v', v]] as const) {
    if (t.dtype !== dtype) {
      throw new InvalidArgumentError(`${op}: dtype mismatch: ${name} is ${t.dtype} but q is ${dtype}; cast with gpu.cast(${name}, '${dtype}')`);
    }
  }
  const shape = checkShapes(op, q, k, v);
  const causal = checkFlag(op, 'causal', options.causal, false);
  const returnLse = checkFlag(op, 'returnLogSumExp', options.returnLogSumExp, false);
  const scale = validateFinite(op, 'scale', options.scale ?? 1 / Math.sqrt(shape.headDim));
  s.assertSupports(op, 'attention');
  const lengths = keyLengthsTensor(s, op, options.keyLengths, shape.batch, shape.seqK);
  let out: Tensor | undefined;
  let lse: Tensor<'f32'> | undefined;
  try {
    out = s.empty(op, q.shape, dtype);
    lse = returnLse ? s.empty(op, q.shape.slice(0, 3), 'f32') : undefined;
    if (out.size > 0) {
      if (shape.seqK === 0) {
        // No key at all: every row is empty (see the module comment).
        s.backend.fill(out.view, 0);
        if (lse) s.backend.fill(lse.view, -Infinity);
      } else {
        const params: AttentionParams = { q: q.view, k: k.view, v: v.view, out: out.view, ...shape, scale, causal };
        if (lse) params.lse = lse.view;
        if (lengths) params.keyLengths = lengths.tensor.view;
        s.backend.attention!(params);
      }
    }
  } catch (err) {
    out?.dispose();
    lse?.dispose();
    throw err;
  } finally {
    // A temporary lengths tensor may go at once: the pool reuses its memory in stream order.
    if (lengths?.owned) lengths.tensor.dispose();
  }
  return lse ? { out: out!, lse } : out!;
}

/** The extents of an attention problem. */
export type AttentionShape = Pick<AttentionParams, 'batch' | 'heads' | 'kvHeads' | 'seqQ' | 'seqK' | 'headDim'>;

/** Checks q `[B, Hq, Sq, D]` against k and v `[B, Hkv, Sk, D]` (ranks, extents, head grouping, head dim) and returns the extents. */
export function checkShapes(op: string, q: Tensor, k: Tensor, v: Tensor): AttentionShape {
  for (const [name, t] of [['q', q], ['k', k], ['v', v]] as const) {
    if (t.rank !== 4) throw new InvalidArgumentError(`${op}: ${name} must be [batch, heads, seq, headDim], got ${t.toString()}`);
  }
  const [batch, heads, seqQ, headDim] = q.shape as [number, number, number, number];
  const [kb, kvHeads, seqK, kd] = k.shape as [number, number, number, number];
  if (!sameShape(v.shape, k.shape)) {
    throw new InvalidArgumentError(`${op}: v ${formatShape(v.shape)} must have the shape of k ${formatShape(k.shape)}`);
  }
  if (kb !== batch) throw new InvalidArgumentError(`${op}: batch differs: q ${formatShape(q.shape)} vs k ${formatShape(k.shape)}`);
  if (kd !== headDim) throw new InvalidArgumentError(`${op}: head dims differ: q ${formatShape(q.shape)} vs k ${formatShape(k.shape)}`);
  if (headDim === 0 || headDim > MAX_ATTENTION_HEAD_DIM) {
    throw new InvalidArgumentError(`${op}: head dim must be 1..${MAX_ATTENTION_HEAD_DIM}, got ${headDim} (q ${formatShape(q.shape)})`);
  }
  if (kvHeads === 0 ? heads !== 0 : heads % kvHeads !== 0) {
    throw new InvalidArgumentError(
      `${op}: q heads (${heads}) must be a multiple of k/v heads (${kvHeads}) for grouped-query attention (q ${formatShape(q.shape)}, k ${formatShape(k.shape)})`,
    );
  }
  return { batch, heads, kvHeads, seqQ, seqK, headDim };
}

/** The lengths as an i32 tensor `[batch]` (a temporary one, `owned`, for a number array). */
export function keyLengthsTensor(
  s: Session,
  op: string,
  lengths: AttentionOptions['keyLengths'],
  batch: number,
  seqK: number,
): { tensor: Tensor; owned: boolean } | undefined {
  if (lengths === undefined) return undefined;
  if (Array.isArray(lengths)) {
    if (lengths.length !== batch) throw new InvalidArgumentError(`${op}: keyLengths has ${lengths.length} entries, expected one per batch entry (${batch})`);
    // An index loop, not forEach: a hole in a sparse array must be refused too.
    for (let b = 0; b < batch; b++) {
      const len: unknown = lengths[b];
      if (typeof len !== 'number' || !Number.isInteger(len) || len < 0 || len > seqK) {
        throw new InvalidArgumentError(`${op}: keyLengths[${b}] must be an integer in [0, ${seqK}] (the key sequence length), got ${describeValue(len)}`);
      }
    }
    return { tensor: tensor(s, lengths, [batch], 'i32'), owned: true };
  }
  if (!(lengths instanceof Tensor)) {
    throw new InvalidArgumentError(`${op}: keyLengths must be an i32 tensor [${batch}] or an array of ${batch} integers, got ${describeValue(lengths)}`);
  }
  s.checkTensor(op, lengths, 'keyLengths');
  if (lengths.dtype !== 'i32' || lengths.rank !== 1 || lengths.shape[0] !== batch) {
    throw new InvalidArgumentError(`${op}: keyLengths must be an i32 tensor [${batch}] (one length per batch entry), got ${lengths.toString()}`);
  }
  return { tensor: lengths, owned: false };
}
