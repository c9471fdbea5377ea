/**
 * The failure sweep of `test/unit/hardening` (each allocation refused, each backend call failed
 * in turn, the pool back at its baseline after each) on every backend of the registry but the
 * CPU, where backend code of its own (pools, library handles, device routes) runs between the
 * front-end's calls. A backend this machine lacks is skipped with its probe's reason.
 */
import { describe, expect, it } from 'vitest';
import type { BackendRegistration } from '../../../src/compute/backend/registration.js';
import { BACKENDS } from '../../../src/compute/backends.js';
import { caseName, sweepFailures } from '../../unit/hardening/leak-check.js';
import { OP_CASES } from '../../unit/hardening/op-cases.js';

for (const registration of BACKENDS) {
  if (registration.kind === 'cpu' || (registration as BackendRegistration).aliasOf !== undefined) continue;
  const { backend: probe } = await registration.probe({ freeMemory: false });
  describe.skipIf(!probe.available)(`a failed op leaves nothing allocated on ${registration.kind}${probe.available ? '' : `: skipped, ${probe.reason}`}`, () => {
    for (const c of OP_CASES) {
      it(caseName(c), async () => {
        // Pools round sizes up, so the byte-exact poolLimitBytes steps are the CPU test's alone.
        const report = await sweepFailures(c, registration.kind, false);
        expect(report.allocations).toBeGreaterThan(0);
        // Most injections must land: a run may take a shorter path than the trace now and then.
        expect(report.missed, 'injections that never fired').toBeLessThanOrEqual((report.allocations + report.calls) / 2);
      });
    }
  });
}
