/**
 * The op properties of `test/unit/hardening/op-properties.ts` on every backend of the registry
 * but the CPU, each run compared with the CPU backend's run of the same case (which the unit
 * tests hold to float64). A backend this machine lacks is skipped with its probe's reason.
 * Longer than the unit run: `GPUCOMPUTE_FUZZ_RUNS` (default 200) cases per property, replayable
 * with `GPUCOMPUTE_FUZZ_SEED` and `GPUCOMPUTE_FUZZ_PATH`.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { BackendRegistration } from '../../../src/compute/backend/registration.js';
import { BACKENDS } from '../../../src/compute/backends.js';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { checkProperty, compareRun, fuzzRuns } from '../../unit/hardening/fuzz.js';
import { flushSubnormalInputs, OP_PROPERTIES, refTools, type OpProperty, type RefTools } from '../../unit/hardening/op-properties.js';

const RUNS = fuzzRuns(200);

/** Backends that may read subnormal inputs as zero: WGSL lets an implementation flush them (NVIDIA's Vulkan driver does). */
const FLUSHES_SUBNORMALS: ReadonlySet<string> = new Set(['webgpu']);

/**
 * A property's time limit on WebGPU: on a software adapter (lavapipe, CI's) each new kernel
 * specialisation takes 0.5–5 s to build, and the 200 attention cases draw enough head dims and
 * flags to take about 290 s with Mesa's shader cache empty.
 */
const WEBGPU_PROPERTY_TIMEOUT_MS = 900_000;

for (const registration of BACKENDS) {
  if (registration.kind === 'cpu' || (registration as BackendRegistration).aliasOf !== undefined) continue;
  const { backend: probe } = await registration.probe({ freeMemory: false });
  const title = `${registration.kind} against the CPU backend (${RUNS} runs per property)${probe.available ? '' : `: skipped, ${probe.reason}`}`;

  describe.skipIf(!probe.available)(title, () => {
    let device: GpuCompute;
    let cpu: GpuCompute;
    let tools: RefTools;
    beforeAll(async () => {
      device = await GpuCompute.create({ backend: registration.kind, logLevel: 'silent' });
      cpu = await GpuCompute.create({ backend: 'cpu', logLevel: 'silent' });
      tools = refTools(cpu);
    });
    afterAll(() => {
      device?.dispose();
      cpu?.dispose();
    });

    for (const p of OP_PROPERTIES as readonly OpProperty<unknown>[]) {
      it(p.name, async () => {
        const check = async (c: unknown) => {
          // The float64 reference also measures the case's error gains that some tolerances scale with (a GRU layer norm's).
          p.reference(c, tools);
          try {
            compareRun(p, c, device, p.run(cpu, c), 'cpu');
          } catch (err) {
            // Right if it is what the CPU makes of the same inputs with their subnormals flushed.
            const flushed = FLUSHES_SUBNORMALS.has(registration.kind) ? flushSubnormalInputs(c) : c;
            if (flushed === c) throw err;
            try {
              compareRun(p, c, device, p.run(cpu, flushed), 'cpu');
            } catch {
              // Neither: WGSL leaves a subnormal input's result to the implementation (lavapipe's
              // log reads 9e-41 as a normal and gives -88), so such a case must only run and
              // leave the pool as it found it.
              compareRun(p, c, device, {}, 'cpu');
            }
          }
        };
        await checkProperty(`${registration.kind}: ${p.name}`, fc.asyncProperty(p.arbitrary, check), RUNS);
      }, registration.kind === 'webgpu' ? WEBGPU_PROPERTY_TIMEOUT_MS : undefined);
    }
  });
}
