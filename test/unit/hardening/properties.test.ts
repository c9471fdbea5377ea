/**
 * Property-based tests of every op on the CPU backend against float64 references (see
 * `op-properties.ts`), with `fuzz.ts`'s run count and replayable seeds. Each run also checks that
 * the op left the pool as it found it.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { GPU_COMPUTE_METHODS, NON_ALLOCATING } from './api-surface.js';
import { checkProperty, compareRun, fuzzRuns } from './fuzz.js';
import { OP_PROPERTIES, refTools, type OpProperty, type RefTools } from './op-properties.js';

let g: GpuCompute;
let tools: RefTools;

beforeAll(async () => {
  g = await GpuCompute.create({ backend: 'cpu', logLevel: 'silent' });
  tools = refTools(g);
});
afterAll(() => g.dispose());

describe(`every op on the CPU backend against float64 (${fuzzRuns()} runs per property)`, () => {
  it('has a property for every public op', () => {
    const covered = new Set(OP_PROPERTIES.flatMap((p) => p.ops));
    const ops = GPU_COMPUTE_METHODS.filter((m) => !(m in NON_ALLOCATING));
    expect(ops.filter((m) => !covered.has(m))).toEqual([]);
  });

  for (const p of OP_PROPERTIES as readonly OpProperty<unknown>[]) {
    it(p.name, async () => {
      await checkProperty(
        p.name,
        fc.asyncProperty(p.arbitrary, async (c) => compareRun(p, c, g, p.reference(c, tools), 'reference')),
      );
    });
  }
});
