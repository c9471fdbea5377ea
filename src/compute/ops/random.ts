/** Seeded random tensors and dropout, from the Philox stream every backend shares. */
import { InvalidArgumentError } from '../../errors.js';
import { isFloatDType, type DType } from '../core/dtype.js';
import { checkOptions, describeValue, optionKeys, validateDType, validateFinite, validateSeed } from '../core/validation.js';
import type { Session } from '../tensor/session.js';
import type { Tensor } from '../tensor/tensor.js';
import { copy, full } from './creation.js';

/**
 * Options of `gpu.rand`: uniform in [low, high), as low + (high − low)·u with u in [0, 1) computed
 * in f32 and then rounded to the dtype, bit for bit the same on every backend. A draw within half
 * a step of `high` (a step of the dtype there) rounds to `high`: about 2^-12 of f16 draws and 2^-9
 * of bf16 draws in [0, 1), and in f32 at most a few in 2^24, where the f32 step at `high` is larger
 * than (high − low)·2^-24 (in [1, 3), say). So the results lie in [low, high].
 */
export interface RandOptions<D extends DType = DType> {
  /** Philox key; default: the next seed of this GpuCompute's sequence (0, 1, 2, ...). */
  seed?: number;
  dtype?: D;
  low?: number;
  high?: number;
}

/** Options of `gpu.randn`: normal(mean, std). */
export interface RandnOptions<D extends DType = DType> {
  /** Philox key; default: the next seed of this GpuCompute's sequence. */
  seed?: number;
  dtype?: D;
  mean?: number;
  std?: number;
}

/** The keys {@link RandOptions} takes. */
export const RAND_OPTIONS = optionKeys<RandOptions>({ seed: true, dtype: true, low: true, high: true });
/** The keys {@link RandnOptions} takes. */
export const RANDN_OPTIONS = optionKeys<RandnOptions>({ seed: true, dtype: true, mean: true, std: true });

/** Uniform random numbers in [low, high) (default [0, 1)). */
export function rand<D extends DType = 'f32'>(s: Session, shape: unknown, opts?: unknown): Tensor<D> {
  const op = 'rand';
  const options = checkOptions<RandOptions<D>>(op, opts, RAND_OPTIONS);
  const low = validateFinite(op, 'low', options.low ?? 0);
  const high = validateFinite(op, 'high', options.high ?? 1);
  if (!(high > low)) throw new InvalidArgumentError(`${op}: high (${high}) must be greater than low (${low})`);
  return random<D>(s, op, shape, options.dtype, options.seed, 'uniform', low, high);
}

/** Normal random numbers (default mean 0, std 1). */
export function randn<D extends DType = 'f32'>(s: Session, shape: unknown, opts?: unknown): Tensor<D> {
  const op = 'randn';
  const options = checkOptions<RandnOptions<D>>(op, opts, RANDN_OPTIONS);
  const mean = validateFinite(op, 'mean', options.mean ?? 0);
  const std = validateFinite(op, 'std', options.std ?? 1);
  if (std < 0) throw new InvalidArgumentError(`${op}: std must be ≥ 0, got ${std}`);
  return random<D>(s, op, shape, options.dtype, options.seed, 'normal', mean, std);
}

/** Zeroes each element with probability p and scales the rest by 1/(1−p), from the Philox stream keyed by `seed`. */
export function dropout<D extends DType>(s: Session, x: Tensor<D>, p: unknown, seed: unknown): Tensor<D> {
  const op = 'dropout';
  s.checkFloat(op, x, 'x');
  if (typeof p !== 'number' || !(p >= 0 && p <= 1)) throw new InvalidArgumentError(`${op}: p must be in [0, 1], got ${describeValue(p)}`);
  if (p > 0 && p < 1) s.assertSupports(op, 'dropout');
  const draw = keyOf(s, op, seed);
  if (p === 0 || p === 1) {
    const out = p === 0 ? copy(s, x, op) : full<D>(s, op, x.shape, 0, x.dtype);
    draw();
    return out;
  }
  return seeded<D>(s, op, x.shape, x.dtype, draw, (out, key) => s.backend.dropout!(x.view, out.view, p, key));
}

function random<D extends DType>(s: Session, op: string, shape: unknown, dtype: unknown, seed: unknown, kind: 'uniform' | 'normal', a: number, b: number): Tensor<D> {
  s.assertLive();
  const d = validateDType(op, dtype ?? 'f32');
  if (!isFloatDType(d)) throw new InvalidArgumentError(`${op}: dtype must be f32, f16 or bf16, got ${d}`);
  return seeded<D>(s, op, shape, d, keyOf(s, op, seed), (out, key) => s.backend.random(out.view, kind, key, a, b));
}

/**
 * The call's Philox key: `seed` (checked now) when given, else the session's next one, drawn
 * only when the returned function is called, once the result exists: a refused call (a bad
 * shape, no memory) leaves the sequence where it was.
 */
function keyOf(s: Session, op: string, seed: unknown): () => number {
  const given = seed === undefined ? undefined : validateSeed(op, seed);
  return () => given ?? s.seed(op, undefined);
}

/** A new tensor that `fill` writes with the call's key (see {@link keyOf}); disposed again when `fill` throws. */
function seeded<D extends DType>(s: Session, op: string, shape: unknown, dtype: DType, draw: () => number, fill: (out: Tensor<D>, key: number) => void): Tensor<D> {
  const out = s.empty<D>(op, shape, dtype);
  const key = draw();
  if (out.size === 0) return out;
  try {
    fill(out, key);
  } catch (err) {
    out.dispose();
    throw err;
  }
  return out;
}
