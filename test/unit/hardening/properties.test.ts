/**
 * Property-based tests of every op on the CPU backend against float64 references (see
 * `op-properties.ts`), with `fuzz.ts`'s run count and replayable seeds. Each run also checks that
 * the op left the pool as it found it.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { GPU_COMPUTE_METHODS, NON_ALLOCATING } from './api-surface.js';
import { checkProperty, FUZZ_RUNS, mismatch, type Output } from './fuzz.js';
import { OP_PROPERTIES, type OpProperty, type RefTools } from './op-properties.js';

let g: GpuCompute;
let tools: RefTools;

beforeAll(async () => {
  g = await GpuCompute.create({ backend: 'cpu', logLevel: 'silent' });
  tools = {
    uniform: (seed, n) => {
      using u = g.rand([n], { seed });
      return u.toArraySync();
    },
    normal: (seed, n) => {
      using z = g.randn([n], { seed });
      return z.toArraySync();
    },
  };
});
afterAll(() => g.dispose());

/** One run: the op on `on`, its pool balanced, each output within its tolerance of `expected`. */
export function compareRun<C>(p: OpProperty<C>, c: C, on: GpuCompute, expected: (c: C) => Record<string, Output>, against: 'reference' | 'cpu'): void {
  const before = on.memoryStats();
  const got = p.run(on, c);
  const after = on.memoryStats();
  if (after.inUseBytes !== before.inUseBytes || after.allocations !== before.allocations) {
    throw new Error(`the op left ${after.inUseBytes - before.inUseBytes} bytes in ${after.allocations - before.allocations} allocations behind`);
  }
  for (const [name, want] of Object.entries(expected(c))) {
    const output = got[name];
    if (!output) throw new Error(`no output ${name}`);
    const { relative, absolute } = p.tolerance(c, name, against);
    const why = mismatch(output, want, relative, absolute);
    if (why) throw new Error(`${name}: ${why}`);
  }
}

describe(`every op on the CPU backend against float64 (${FUZZ_RUNS} runs per property)`, () => {
  it('has a property for every public op', () => {
    const covered = new Set(OP_PROPERTIES.flatMap((p) => p.ops));
    const ops = GPU_COMPUTE_METHODS.filter((m) => !(m in NON_ALLOCATING));
    expect(ops.filter((m) => !covered.has(m))).toEqual([]);
  });

  for (const p of OP_PROPERTIES as readonly OpProperty<unknown>[]) {
    it(p.name, async () => {
      await checkProperty(
        p.name,
        fc.asyncProperty(p.arbitrary, async (c) => compareRun(p, c, g, (x) => p.reference(x, tools), 'reference')),
      );
    });
  }
});
