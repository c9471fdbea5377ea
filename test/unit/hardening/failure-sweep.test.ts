/**
 * A failed op leaves nothing allocated: every public op (see `op-cases.ts`) is made to fail at
 * each allocation, at each backend call and under a swept poolLimitBytes (see `leak-check.ts`),
 * and the pool must be back at its baseline after each failure.
 */
import { describe, expect, it } from 'vitest';
import { caseName, sweepFailures, type SweepReport } from './leak-check.js';
import { NON_ALLOCATING, PUBLIC_METHODS } from './api-surface.js';
import { OP_CASES } from './op-cases.js';

describe('a failed op leaves nothing allocated', () => {
  it('has a case for every public method that allocates', () => {
    const covered = new Set(OP_CASES.map((c) => c.method));
    const missing = PUBLIC_METHODS.filter((m) => !covered.has(m) && !(m in NON_ALLOCATING));
    expect(missing, 'public methods with neither a failure-sweep case nor a reason in NON_ALLOCATING').toEqual([]);
    const unknown = [...covered, ...Object.keys(NON_ALLOCATING)].filter((m) => !PUBLIC_METHODS.includes(m));
    expect(unknown, 'cases for methods that do not exist').toEqual([]);
  });

  const totals: SweepReport = { allocations: 0, calls: 0, limits: 0, missed: 0 };
  for (const c of OP_CASES) {
    it(caseName(c), async () => {
      const report = await sweepFailures(c);
      expect(report.allocations, 'the op allocates its result').toBeGreaterThan(0);
      expect(report.missed, 'the CPU backend makes the same calls on every run').toBe(0);
      totals.allocations += report.allocations;
      totals.calls += report.calls;
      totals.limits += report.limits;
    });
  }
  it('reports what it swept', () => {
    console.log(
      `failure sweep: ${OP_CASES.length} op cases, ${totals.allocations} allocations and ${totals.calls} backend calls failed one at a time, ${totals.limits} pool limits`,
    );
  });
});
