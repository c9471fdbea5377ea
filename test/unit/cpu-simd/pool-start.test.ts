/**
 * The SIMD pool's workers start without blocking the calling thread: jobs run there until they
 * are up, and a worker that cannot start fails the next wait with its reason.
 */
import { describe, expect, it } from 'vitest';
import { SimdKernelError } from '../../../src/compute/cpu/simd/errors.js';
import { ThreadPool } from '../../../src/compute/cpu/simd/thread-pool.js';
import { wasm } from '../../../src/compute/cpu/simd/wasm-api.js';

/** A module importing a shared memory of at least 100 pages: instantiating it on one page fails. */
const NEEDS_100_PAGES = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
  0x02, 0x11, 0x01, 0x03, 0x65, 0x6e, 0x76, 0x06, 0x6d, 0x65, 0x6d, 0x6f, 0x72, 0x79, 0x02, 0x03, 0x64, 0xc8, 0x01, // import env.memory (shared, 100..200 pages)
]);

function failingPool(): ThreadPool {
  return new ThreadPool({
    module: new wasm.Module(NEEDS_100_PAGES),
    memory: new wasm.Memory({ initial: 1, maximum: 1, shared: true }),
    kernels: [],
    stackTops: [0, 0],
    scratch: [0, 0],
    maxParts: 2,
    spinMicroseconds: 0,
  });
}

describe('thread pool start', () => {
  it('runs a job on the calling thread while the workers are not up', () => {
    const pool = failingPool();
    const ran: number[] = [];
    const s = pool.submit(0, [[7]], false, 'test', (_kernel, values) => ran.push(values[0]!), 0, true);
    expect(pool.awake).toBe(false);
    pool.settle(s, (_kernel, values) => ran.push(values[0]!), 0, true);
    expect(ran).toEqual([7]);
    return pool.terminate();
  });

  it('fails the next wait with the reason a worker could not start', async () => {
    const pool = failingPool();
    const s = pool.submit(0, [[1], [2]], false, 'test', () => undefined, 0);
    const failure = await pool.settleAsync(s).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(SimdKernelError);
    expect((failure as SimdKernelError).kernel).toBe('(startup)');
    expect((failure as Error).message).toMatch(/could not instantiate the kernels/);
  });
});
