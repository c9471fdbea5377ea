/**
 * How the property-based tests run: fast-check with a bounded number of runs per property
 * (`GPUCOMPUTE_FUZZ_RUNS`; default 100 in the unit tests, a few seconds in all, and 200 in the
 * GPU project, whose run on the GPU machine can set more),
 * a fresh seed per run unless `GPUCOMPUTE_FUZZ_SEED` (and `GPUCOMPUTE_FUZZ_PATH`, to go straight
 * to the shrunk case) replays one, and a failure message that says how to replay it.
 *
 * And how results are compared: shapes exactly, NaN and ±Infinity position by position, finite
 * values norm-wise (‖got − want‖ / ‖want‖ over the finite entries), i32 values exactly.
 */
import fc from 'fast-check';
import type { DType } from '../../../src/compute/core/dtype.js';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import type { OpProperty } from './op-properties.js';

export const FUZZ_RUNS_ENV = 'GPUCOMPUTE_FUZZ_RUNS';
export const FUZZ_SEED_ENV = 'GPUCOMPUTE_FUZZ_SEED';
export const FUZZ_PATH_ENV = 'GPUCOMPUTE_FUZZ_PATH';

function envInteger(name: string): number | undefined {
  const raw = process.env[name]?.trim();
  if (!raw) return undefined;
  const value = Number(raw);
  if (!Number.isSafeInteger(value)) throw new Error(`${name}=${raw} is not an integer`);
  return value;
}

/** Runs per property: `GPUCOMPUTE_FUZZ_RUNS`, else `fallback` (100 for the unit tests). */
export function fuzzRuns(fallback = 100): number {
  return envInteger(FUZZ_RUNS_ENV) ?? fallback;
}

/**
 * Checks `property` (async) with the configured runs; on failure throws an error that gives the
 * seed, the shrink path and the counterexample, and the environment that replays exactly it.
 */
export async function checkProperty<T>(name: string, property: fc.IAsyncProperty<T>, runs = fuzzRuns()): Promise<void> {
  const seed = envInteger(FUZZ_SEED_ENV);
  const path = process.env[FUZZ_PATH_ENV]?.trim();
  const parameters: fc.Parameters<T> = { numRuns: runs, ...(seed === undefined ? {} : { seed }), ...(path ? { path } : {}) };
  const details = await fc.check(property, parameters);
  if (!details.failed) return;
  const replay = `${FUZZ_SEED_ENV}=${details.seed}${details.counterexamplePath ? ` ${FUZZ_PATH_ENV}=${details.counterexamplePath}` : ''}`;
  const cause = details.errorInstance instanceof Error ? `${details.errorInstance.name}: ${details.errorInstance.message}` : String(details.errorInstance);
  throw new Error(`${name}: property failed (${cause}); replay with ${replay}\n${fc.defaultReportMessage(details) ?? ''}`);
}

/** What an op produced, read back: values (f16/bf16 widened) and shape. */
export interface Output {
  values: ArrayLike<number>;
  shape: readonly number[];
  dtype: DType;
}

/** A tensor's values and shape. */
export function read(t: Tensor): Output {
  return { values: Array.from(t.toArraySync() as ArrayLike<number>), shape: [...t.shape], dtype: t.dtype };
}

/**
 * Why `got` is not `want` within the norm-wise `tolerance`, or undefined when it is. NaN must
 * meet NaN and an infinity the same infinity; i32 values must be equal. `absolute` is the error
 * allowed whatever the norm (for results that should be zero). With `overflow`, elements where
 * either side is not finite are passed over (partial sums that overflow in one order only).
 */
export function mismatch(got: Output, want: Output, tolerance: number, absolute = 0, overflow = false): string | undefined {
  if (got.shape.join() !== want.shape.join()) return `shape [${got.shape.join(', ')}], expected [${want.shape.join(', ')}]`;
  if (got.dtype !== want.dtype) return `dtype ${got.dtype}, expected ${want.dtype}`;
  if (got.values.length !== want.values.length) return `${got.values.length} values, expected ${want.values.length}`;
  let diff = 0;
  let norm = 0;
  let worst = -1;
  let worstError = -1;
  for (let i = 0; i < want.values.length; i++) {
    const g = got.values[i]!;
    const w = want.values[i]!;
    if (want.dtype === 'i32' || !Number.isFinite(w) || !Number.isFinite(g)) {
      if (overflow && want.dtype !== 'i32') continue;
      if (!Object.is(g, w) && !(g === w) && !(Number.isNaN(g) && Number.isNaN(w))) return `element ${i} is ${g}, expected ${w}`;
      continue;
    }
    const d = Math.abs(g - w);
    diff += d * d;
    norm += w * w;
    if (d > worstError) [worst, worstError] = [i, d];
  }
  const error = Math.sqrt(diff);
  if (error === 0 || error <= absolute) return undefined;
  const relative = norm === 0 ? Infinity : error / Math.sqrt(norm);
  if (relative <= tolerance) return undefined;
  return `norm-wise error ${relative.toExponential(3)} > ${tolerance.toExponential(3)} (largest at element ${worst}: ${got.values[worst]} vs ${want.values[worst]})`;
}

/**
 * One run of a property: the op on `on`, which must leave the pool as it found it, and each
 * output of `expected` (a reference, or another backend's run) within the property's tolerance.
 */
export function compareRun<C>(p: OpProperty<C>, c: C, on: GpuCompute, expected: Record<string, Output>, against: 'reference' | 'cpu'): void {
  const before = on.memoryStats();
  const got = p.run(on, c);
  const after = on.memoryStats();
  if (after.inUseBytes !== before.inUseBytes || after.allocations !== before.allocations) {
    throw new Error(`the op left ${after.inUseBytes - before.inUseBytes} bytes in ${after.allocations - before.allocations} allocations behind`);
  }
  for (const [name, want] of Object.entries(expected)) {
    const output = got[name];
    if (!output) throw new Error(`no output ${name}`);
    const { relative, absolute, overflow } = p.tolerance(c, name, against);
    const why = mismatch(output, want, relative, absolute, overflow);
    if (why) throw new Error(`${name}: ${why}`);
  }
}
