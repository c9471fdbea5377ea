import { afterEach, describe, expect, it, vi } from 'vitest';
import { sgemm, type SgemmArgs } from '../../../src/blas/sgemm.js';
import { resolveThreadCount } from '../../../src/blas/threads.js';
import { InvalidArgumentError } from '../../../src/errors.js';

// Checks run before the library is touched, so these need no BLAS.

/** A valid 3×4 = (3×5)·(5×4) product with slack in every array, to break one argument at a time. */
function base(): SgemmArgs {
  return { m: 3, n: 4, k: 5, a: new Float32Array(15), b: new Float32Array(20), c: new Float32Array(12) };
}

function refused(change: Partial<SgemmArgs> | ((args: SgemmArgs) => SgemmArgs), pattern: RegExp): void {
  const args = typeof change === 'function' ? change(base()) : { ...base(), ...change };
  const c = args.c instanceof Float32Array ? args.c.slice() : undefined;
  let caught: unknown;
  try {
    sgemm(args);
  } catch (err) {
    caught = err;
  }
  expect(caught, `expected ${pattern}`).toBeInstanceOf(InvalidArgumentError);
  expect((caught as Error).message).toMatch(pattern);
  if (c) expect(args.c).toEqual(c);
}

describe('sgemm argument checks', () => {
  it('refuses sizes that are not int32 extents, naming them', () => {
    refused({ m: -1 }, /sgemm: m -1 is not an integer/);
    refused({ n: 2.5 }, /sgemm: n 2.5 is not an integer/);
    refused({ k: 2 ** 31 }, /sgemm: k 2147483648 is not an integer/);
    refused({ m: Number.NaN }, /sgemm: m NaN/);
    refused((args) => ({ ...args, k: undefined as unknown as number }), /sgemm: k undefined/);
  });

  it('refuses scalars that are not numbers', () => {
    refused({ alpha: '2' as unknown as number }, /sgemm: alpha 2 is not a number/);
    refused({ beta: null as unknown as number }, /sgemm: beta null is not a number/);
  });

  it('refuses leading dimensions below the stored row length, transposed or not', () => {
    refused({ lda: 4 }, /sgemm: lda 4 must be an integer of at least 5, the stored row length k/);
    refused({ transA: true, a: new Float32Array(15), lda: 2 }, /lda 2 must be .* at least 3, the stored row length m \(A is transposed\)/);
    refused({ ldb: 3 }, /sgemm: ldb 3 must be .* at least 4, the stored row length n/);
    refused({ transB: true, ldb: 4 }, /ldb 4 must be .* at least 5, the stored row length k \(B is transposed\)/);
    refused({ ldc: 3 }, /sgemm: ldc 3 must be .* at least 4/);
    refused({ ldc: 4.5 }, /sgemm: ldc 4.5/);
    // BLAS wants at least 1 even for an empty matrix.
    refused({ k: 0, lda: 0 }, /sgemm: lda 0 must be an integer of at least 1/);
  });

  it('refuses arrays too short for the range the product touches, counting offsets and leading dimensions', () => {
    refused({ a: new Float32Array(14) }, /sgemm: a holds 14 elements, but the matrix at aOffset 0 reaches element 15/);
    refused({ lda: 6 }, /sgemm: a holds 15 elements, but .* reaches element 17/);
    refused({ b: new Float32Array(19) }, /sgemm: b holds 19 elements/);
    refused({ c: new Float32Array(11) }, /sgemm: c holds 11 elements/);
    refused({ ldc: 5 }, /sgemm: c holds 12 elements, but .* reaches element 14/);
    refused({ cOffset: 1 }, /sgemm: c holds 12 elements, but the matrix at cOffset 1 reaches element 13/);
    refused({ bOffset: 21 }, /sgemm: b holds 20 elements, but the matrix at bOffset 21/);
    refused({ transA: true, lda: 4 }, /sgemm: a holds 15 elements, but .* reaches element 19/);
  });

  it('refuses offsets that are not non-negative integers', () => {
    refused({ aOffset: -1 }, /sgemm: aOffset -1 is not a non-negative integer/);
    refused({ bOffset: 0.5 }, /sgemm: bOffset 0.5/);
    refused({ cOffset: Number.NaN }, /sgemm: cOffset NaN/);
  });

  it('refuses anything but a Float32Array for a matrix', () => {
    refused({ a: new Float64Array(15) as unknown as Float32Array }, /sgemm: a must be a Float32Array, not Float64Array/);
    refused({ b: Array(20).fill(0) as unknown as Float32Array }, /sgemm: b must be a Float32Array, not Array/);
    refused({ c: undefined as unknown as Float32Array }, /sgemm: c must be a Float32Array, not undefined/);
  });

  it('refuses an output that overlaps an input in the same buffer', () => {
    const shared = new Float32Array(new SharedArrayBuffer(4 * 64));
    refused({ a: shared.subarray(0, 15), c: shared.subarray(14, 26) }, /sgemm: c overlaps a/);
    refused({ b: shared.subarray(11, 31), c: shared }, /sgemm: c overlaps b/);
    refused({ b: shared, bOffset: 30, c: shared, cOffset: 40 }, /sgemm: c overlaps b/);
    refused({ a: shared, aOffset: 20, c: new Float32Array(shared.buffer, 4 * 34, 12) }, /sgemm: c overlaps a/);
  });
});

describe('thread count resolution', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('takes the option, else GPUCOMPUTE_CPU_THREADS, else the parallelism available', async () => {
    const { availableParallelism } = await import('node:os');
    vi.stubEnv('GPUCOMPUTE_CPU_THREADS', '');
    expect(resolveThreadCount()).toBe(availableParallelism());
    vi.stubEnv('GPUCOMPUTE_CPU_THREADS', ' 3 ');
    expect(resolveThreadCount()).toBe(3);
    expect(resolveThreadCount(5)).toBe(5);
  });

  it('refuses a count that is not a positive integer, naming the option or the variable', () => {
    for (const bad of [0, -2, 1.5, Number.NaN]) expect(() => resolveThreadCount(bad)).toThrow(/BLAS threads option .* is not a positive integer/);
    for (const bad of ['0', 'two', '2x', '-1', '1.5']) {
      vi.stubEnv('GPUCOMPUTE_CPU_THREADS', bad);
      expect(() => resolveThreadCount()).toThrow(InvalidArgumentError);
      expect(() => resolveThreadCount()).toThrow(`GPUCOMPUTE_CPU_THREADS=${bad} is not a positive integer`);
    }
  });
});
