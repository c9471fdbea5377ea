/**
 * Argument checks shared by the GpuCompute front-end. They run once, before
 * any backend call, so every backend reports bad input with the same
 * {@link InvalidArgumentError} message, which names the op, the argument and
 * what it got (a string stays recognisable as a string: `the string "1"`).
 */
import { InvalidArgumentError } from '../../errors.js';
import { dtypeSize, isDType, type DType } from './dtype.js';
import { formatShape, shapeSize } from './shape.js';

/**
 * A value as a message shows it: numbers and booleans as written, strings quoted and called
 * strings (so `'1'` never reads as `1`), arrays by their elements, objects by what prints them
 * (a Tensor's `Tensor(f32 [2, 3])`) or their class.
 */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return `the string ${quote(value)}`;
  if (Array.isArray(value)) return describeArray(value);
  return describeScalar(value);
}

function describeScalar(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return quote(value);
    case 'bigint':
      return `the bigint ${value}n`;
    case 'symbol':
      return value.toString();
    case 'function':
      return 'function';
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) return `an array of ${value.length}`;
      // A class that prints itself (Tensor) says more than its name.
      if (typeof value.toString === 'function' && value.toString !== Object.prototype.toString) return String(value);
      return (value as { constructor?: { name?: string } }).constructor?.name ?? 'object';
    }
    default:
      return String(value);
  }
}

function describeArray(values: readonly unknown[]): string {
  const shown = values.slice(0, 8).map(describeScalar);
  return `[${shown.join(', ')}${values.length > 8 ? `, … (${values.length} elements)` : ''}]`;
}

function quote(s: string): string {
  return JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s);
}

/**
 * Edit distance, case-insensitive: the single-letter insertions, deletions, substitutions and
 * swaps of two neighbours (optimal string alignment) that turn `a` into `b`.
 */
export function editDistance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  const d: number[][] = Array.from({ length: x.length + 1 }, (_, i) => [i, ...new Array<number>(y.length).fill(0)]);
  for (let j = 1; j <= y.length; j++) d[0]![j] = j;
  for (let i = 1; i <= x.length; i++) {
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[x.length]![y.length]!;
}

/** The candidate nearest to `name`, when it is near enough to be what was meant (at most a third of its letters differ). */
export function closestName(name: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = editDistance(name, c);
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  return bestDistance <= Math.max(1, Math.floor(Math.max(name.length, best?.length ?? 0) / 3)) ? best : undefined;
}

/** `(did you mean 'axis'? ...)` style hint listing the valid names. */
function suggestion(given: string, valid: readonly string[], what: string): string {
  const near = closestName(given, valid);
  const list = valid.map((v) => `'${v}'`).join(', ');
  return near ? `did you mean '${near}'? (${what}: ${list})` : `${what}: ${list}`;
}

/**
 * The keys of an options interface, written once as a record of every key: the compiler rejects
 * a missing or an extra one, so a new option cannot be left out of {@link checkOptions}.
 */
export function optionKeys<T>(keys: { readonly [K in keyof T]-?: true }): readonly (keyof T & string)[] {
  return Object.freeze(Object.keys(keys)) as readonly (keyof T & string)[];
}

/**
 * An options argument: undefined (no options) or a plain object whose every key is one of
 * `keys`. An unknown key is refused with the closest valid name, since a misspelt option would
 * otherwise be silently ignored. `name` is the argument's name in messages.
 */
export function checkOptions<T extends object>(op: string, value: unknown, keys: readonly string[], name = 'options'): Partial<T> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !isPlainObject(value)) {
    const shape = keys.length > 0 ? `{ ${keys.join(', ')} }` : '{}';
    throw new InvalidArgumentError(`${op}: ${name} must be an object ${shape}, got ${describeValue(value)}`);
  }
  const given = Object.keys(value);
  for (let i = 0; i < given.length; i++) {
    const key = given[i]!;
    if (!keys.includes(key)) {
      throw new InvalidArgumentError(`${op}: unknown option ${name === 'options' ? '' : `${name}.`}${key}; ${suggestion(key, keys, 'valid options')}`);
    }
  }
  return value as Partial<T>;
}

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** A boolean option, `fallback` when undefined. */
export function checkFlag(op: string, name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new InvalidArgumentError(`${op}: ${name} must be a boolean, got ${describeValue(value)}`);
  return value;
}

/**
 * One of `choices`; `fallback` when undefined (required when there is none). A near miss names
 * the choice meant. `phrasing` 'unknown' reads `unknown activation swish (use ...)`, for names
 * of things; 'must' reads `precision must be 'highest' or 'tf32', got ...`, for modes.
 */
export function checkChoice<C extends string>(
  op: string,
  name: string,
  value: unknown,
  choices: readonly C[],
  fallback?: C,
  phrasing: 'must' | 'unknown' = 'must',
): C {
  if (value === undefined && fallback !== undefined) return fallback;
  if (typeof value !== 'string' || !(choices as readonly string[]).includes(value)) {
    const quoted = choices.map((c) => `'${c}'`);
    const list = quoted.length > 1 ? `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}` : quoted.join('');
    const near = typeof value === 'string' ? closestName(value, choices) : undefined;
    const hint = near ? `; did you mean '${near}'?` : '';
    if (phrasing === 'unknown') {
      // A name is a string, so a string is shown as written; anything else by its kind.
      const shown = typeof value === 'string' ? quote(value).slice(1, -1) : describeValue(value);
      throw new InvalidArgumentError(`${op}: unknown ${name} ${shown} (use ${list})${hint}`);
    }
    throw new InvalidArgumentError(`${op}: ${name} must be ${list}, got ${describeValue(value)}${hint}`);
  }
  return value as C;
}

/** An integer in [min, max] (max defaults to 2^53 − 1). */
export function checkInteger(op: string, name: string, value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `in [${min}, ${max}]`;
    throw new InvalidArgumentError(`${op}: ${name} must be an integer ${range}, got ${describeValue(value)}`);
  }
  return value;
}

/** Checks that `shape` is an array of non-negative safe integers and returns a frozen copy. */
export function validateShape(op: string, shape: unknown): readonly number[] {
  // A frozen array checked before cannot have changed: ops pass the same tensor and plan shapes on and on.
  if (validShapes.has(shape as object)) return shape as readonly number[];
  if (!Array.isArray(shape)) throw new InvalidArgumentError(`${op}: shape must be an array of integers, got ${describeValue(shape)}`);
  for (let i = 0; i < shape.length; i++) {
    const d: unknown = shape[i];
    if (typeof d !== 'number' || !Number.isSafeInteger(d) || d < 0) {
      throw new InvalidArgumentError(`${op}: shape ${describeValue(shape)} has an invalid dim ${describeValue(d)} (dims are integers ≥ 0)`);
    }
  }
  // A frozen shape (a tensor's, a plan's) is kept as it is, and remembered: ops pass them on and on.
  // A fresh copy is not: most live for one tensor, and an insertion costs more than the check.
  if (!Object.isFrozen(shape)) return Object.freeze([...(shape as number[])]);
  validShapes.add(shape);
  return shape as readonly number[];
}

/** Frozen shapes {@link validateShape} passed (weakly held: they go with their tensors and plans). */
const validShapes = new WeakSet<object>();

/**
 * Bytes a tensor of `shape` and `dtype` takes in a buffer (at least one element: every tensor
 * owns real storage). Refuses a count no buffer can hold, before the backend sees it.
 */
export function storageBytes(op: string, shape: readonly number[], dtype: DType): number {
  const elements = shapeSize(shape);
  const bytes = Math.max(elements, 1) * dtypeSize[dtype];
  if (!Number.isSafeInteger(bytes)) {
    throw new InvalidArgumentError(
      `${op}: a ${dtype} tensor of shape ${formatShape(shape)} holds ${elements.toExponential(3)} elements (${bytes.toExponential(3)} bytes), ` +
        `more than any buffer can (2^53 bytes)`,
    );
  }
  return bytes;
}

/** Names other libraries give the dtypes, for a hint when one is passed. */
const DTYPE_ALIASES: Readonly<Record<string, DType>> = {
  float32: 'f32',
  float: 'f32',
  float16: 'f16',
  half: 'f16',
  bfloat16: 'bf16',
  int32: 'i32',
  int: 'i32',
};

/** Checks a dtype argument. */
export function validateDType(op: string, dtype: unknown): DType {
  if (isDType(dtype)) return dtype;
  // A dtype is a string, so a string is shown as written; anything else by its kind.
  const shown = typeof dtype === 'string' ? quote(dtype).slice(1, -1) : describeValue(dtype);
  const alias = typeof dtype === 'string' ? DTYPE_ALIASES[dtype.toLowerCase()] : undefined;
  throw new InvalidArgumentError(`${op}: unknown dtype ${shown} (use 'f32', 'f16', 'bf16' or 'i32'${alias ? `; ${shown} is '${alias}'` : ''})`);
}

/** Resolves a possibly negative axis against `rank`. */
export function normalizeAxis(op: string, axis: unknown, rank: number): number {
  if (typeof axis !== 'number' || !Number.isInteger(axis)) {
    throw new InvalidArgumentError(`${op}: axis must be an integer, got ${describeValue(axis)}`);
  }
  if (axis < -rank || axis >= rank) {
    throw new InvalidArgumentError(`${op}: axis ${axis} is out of range for a tensor of rank ${rank} (valid: ${-rank}..${rank - 1})`);
  }
  return axis < 0 ? axis + rank : axis;
}

/** Seeds key the Philox generator: non-negative safe integers. */
export function validateSeed(op: string, seed: unknown): number {
  if (typeof seed !== 'number' || !Number.isSafeInteger(seed) || seed < 0) {
    throw new InvalidArgumentError(`${op}: seed must be an integer in [0, 2^53), got ${describeValue(seed)}`);
  }
  return seed;
}

/** A finite number option. */
export function validateFinite(op: string, name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new InvalidArgumentError(`${op}: ${name} must be a finite number, got ${describeValue(value)}`);
  }
  return value;
}
