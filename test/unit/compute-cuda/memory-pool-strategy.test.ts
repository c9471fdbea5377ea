/**
 * The measurement behind the pool's default strategy (see PoolStrategy in
 * src/compute/memory-pool.ts): host cost of alloc+free of a cached block, and
 * memory held from the device on a mixed trace of tensor sizes. Prints the
 * numbers; asserts only correctness (no two live blocks overlap, everything
 * returns), never timings.
 */
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { MemoryPool, type PoolBlock, type PoolStrategy } from '../../../src/compute/gpu/memory-pool.js';
import { FakeDevice, type FakeStream } from './fake-pool-device.js';

const stream: FakeStream = { name: 'default' };
const STRATEGIES: PoolStrategy[] = ['best-fit', 'size-class'];

/** Deterministic LCG so the trace is the same on every run. */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** Sizes a small model's tensors take: activations, weights, scalars, odd shapes. */
function traceSize(random: () => number): number {
  const kinds = [4, 512, 3 * 1000, 4 * 768 * 4, 4 * 768 * 768, 4 * 3072 * 768, 4 * 32 * 512 * 768, 2 * 50257 * 768];
  const base = kinds[Math.floor(random() * kinds.length)]!;
  return Math.max(1, Math.round(base * (0.5 + random())));
}

function assertNoOverlap(live: readonly PoolBlock[]): void {
  const sorted = [...live].sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
  for (let i = 1; i < sorted.length; i++) {
    expect(sorted[i - 1]!.address + BigInt(sorted[i - 1]!.size) <= sorted[i]!.address).toBe(true);
  }
}

describe('memory pool strategies (measurement)', () => {
  it('alloc+free of a cached 1 MiB block, ns per pair', () => {
    const rows: string[] = [];
    for (const strategy of STRATEGIES) {
      const pool = new MemoryPool<FakeStream>(new FakeDevice(), { strategy });
      pool.free(pool.alloc(2 ** 20, stream), stream);
      const pairs = 200_000;
      let best = Infinity;
      for (let round = 0; round < 5; round++) {
        const start = performance.now();
        for (let i = 0; i < pairs; i++) pool.free(pool.alloc(2 ** 20, stream), stream);
        best = Math.min(best, ((performance.now() - start) * 1e6) / pairs);
      }
      expect(pool.stats().allocations).toBe(0);
      rows.push(`${strategy}: ${best.toFixed(0)} ns`);
    }
    console.log(`pool alloc+free of a cached 1 MiB block (best of 5 × 2e5): ${rows.join(', ')} (CuPy's pool on an H200: 380-460 ns)`);
  });

  it('mixed trace on a device with 1.5x the peak working set: memory held, device calls', () => {
    // The trace first runs on an unlimited device to learn its peak working set.
    const rows: string[] = [];
    for (const strategy of STRATEGIES) {
      const probe = runTrace(strategy, Number.MAX_SAFE_INTEGER);
      const capacity = Math.ceil(probe.peakLive * 1.5);
      runTrace(strategy, capacity); // warm-up, so ns/op is not the JIT's
      const run = runTrace(strategy, capacity);
      rows.push(
        `${strategy}: peak held ${(run.peakReserved / run.peakLive).toFixed(2)}x peak live, ` +
          `${run.allocations} device allocations, ${run.flushes} cache flushes, ${run.nsPerOp.toFixed(0)} ns/op`,
      );
    }
    console.log(`pool on a mixed 2e4-step trace: ${rows.join('; ')}`);
  });
});

interface TraceResult {
  peakLive: number;
  peakReserved: number;
  allocations: number;
  flushes: number;
  nsPerOp: number;
}

/** Replays the seeded trace; checks no two live blocks overlap and that all memory comes back. */
function runTrace(strategy: PoolStrategy, capacity: number): TraceResult {
  const device = new FakeDevice(capacity);
  const pool = new MemoryPool<FakeStream>(device, { strategy });
  const random = lcg(1234);
  const live: { block: PoolBlock; bytes: number }[] = [];
  let liveBytes = 0;
  let peakLive = 0;
  let peakReserved = 0;
  const steps = 20_000;
  const start = performance.now();
  for (let step = 0; step < steps; step++) {
    // Grow while small, then hover: a training-loop-like working set.
    if (live.length < 40 && (live.length < 8 || random() < 0.55)) {
      const bytes = traceSize(random);
      live.push({ block: pool.alloc(bytes, stream), bytes });
      liveBytes += bytes;
    } else {
      const [entry] = live.splice(Math.floor(random() * live.length), 1);
      liveBytes -= entry!.bytes;
      pool.free(entry!.block, stream);
    }
    peakLive = Math.max(peakLive, liveBytes);
    peakReserved = Math.max(peakReserved, pool.reserved);
    if (step % 1000 === 0) assertNoOverlap(live.map((e) => e.block));
  }
  const nsPerOp = ((performance.now() - start) * 1e6) / steps;
  for (const entry of live) pool.free(entry.block, stream);
  pool.trim();
  expect(device.live.size).toBe(0);
  expect(pool.stats()).toMatchObject({ inUseBytes: 0, cachedBytes: 0, allocations: 0 });
  return { peakLive, peakReserved, allocations: device.allocations, flushes: device.synchronizations - 1, nsPerOp };
}
