/**
 * Argument checks shared by the GpuCompute front-end. They run once, before
 * any backend call, so every backend reports bad input with the same
 * {@link InvalidArgumentError} message.
 */
import { InvalidArgumentError } from '../../errors.js';
import { isDType, type DType } from './dtype.js';
import { formatShape } from './shape.js';

/** Checks that `shape` is an array of non-negative safe integers and returns a frozen copy. */
export function validateShape(op: string, shape: unknown): readonly number[] {
  if (!Array.isArray(shape)) throw new InvalidArgumentError(`${op}: shape must be an array of integers, got ${String(shape)}`);
  for (const d of shape) {
    if (typeof d !== 'number' || !Number.isSafeInteger(d) || d < 0) {
      throw new InvalidArgumentError(`${op}: shape ${formatShape(shape)} has an invalid dim ${String(d)} (dims are integers ≥ 0)`);
    }
  }
  return Object.freeze([...shape]);
}

/** Checks a dtype argument. */
export function validateDType(op: string, dtype: unknown): DType {
  if (!isDType(dtype)) throw new InvalidArgumentError(`${op}: unknown dtype ${String(dtype)} (use 'f32', 'f16', 'bf16' or 'i32')`);
  return dtype;
}

/** Resolves a possibly negative axis against `rank`. */
export function normalizeAxis(op: string, axis: unknown, rank: number): number {
  if (typeof axis !== 'number' || !Number.isInteger(axis)) {
    throw new InvalidArgumentError(`${op}: axis must be an integer, got ${String(axis)}`);
  }
  if (axis < -rank || axis >= rank) {
    throw new InvalidArgumentError(`${op}: axis ${axis} is out of range for a tensor of rank ${rank} (valid: ${-rank}..${rank - 1})`);
  }
  return axis < 0 ? axis + rank : axis;
}

/** Seeds key the Philox generator: non-negative safe integers. */
export function validateSeed(op: string, seed: unknown): number {
  if (typeof seed !== 'number' || !Number.isSafeInteger(seed) || seed < 0) {
    throw new InvalidArgumentError(`${op}: seed must be an integer in [0, 2^53), got ${String(seed)}`);
  }
  return seed;
}

/** A finite number option. */
export function validateFinite(op: string, name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new InvalidArgumentError(`${op}: ${name} must be a finite number, got ${String(value)}`);
  }
  return value;
}
