/**
 * The conformance suite on every registered backend (`src/compute/backends.ts`; aliases such as
 * Metal, which is WebGPU on one platform, are covered by the backend they open): those this
 * machine can run are tested, the others are listed as skipped with their probe's reason.
 * Also checks that the suite's idea of which public ops need which optional backend ops agrees
 * with the support table the README shows.
 */
import { describe, expect, it } from 'vitest';
import type { BackendRegistration } from '../../src/compute/backend/registration.js';
import { BACKENDS, type BackendKind } from '../../src/compute/backends.js';
import { supportTable } from '../../src/compute/support.js';
import { describeConformance } from './conformance.js';
import { missingOp, OP_NEEDS, type NeedingOp } from './optional-ops.js';

const backends = (BACKENDS as readonly BackendRegistration[]).filter((r) => r.aliasOf === undefined);
for (const registration of backends) await describeConformance(registration);

describe('the suite and the support table', () => {
  it('agree, for every registered backend, on which ops it refuses and why', () => {
    const table = supportTable();
    for (const op of Object.keys(OP_NEEDS) as NeedingOp[]) {
      const row = table.find((r) => r.ops.split(/[,/]/).some((name) => name.trim() === op));
      expect(row, `${op} has a row in the support table`).toBeDefined();
      for (const registration of backends) {
        const cell = row!.backends[registration.kind as BackendKind]!;
        const missing = missingOp(registration, OP_NEEDS[op]);
        const label = `${op} on ${registration.kind}`;
        expect(cell.status === 'unsupported', label).toBe(missing !== undefined);
        if (missing && cell.status === 'unsupported') expect(cell.reason, label).toContain(`${missing.op}: ${missing.reason}`);
      }
    }
  });
});
