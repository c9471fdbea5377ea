/**
 * The conformance suite on the CPU backend reduced to its core ops, which is where a new backend
 * starts: softmax/logSoftmax and layerNorm run composed from the core ops (`composed-ops.ts`),
 * and every op needing anything else must refuse with the reason its registration gives. The
 * registered backends leave too little out for those paths to run anywhere else in CI.
 */
import type { Backend, OptionalOp } from '../../src/compute/backend/backend.js';
import { withComposedOps } from '../../src/compute/backend/composed-ops.js';
import type { BackendRegistration } from '../../src/compute/backend/registration.js';
import { cpuRegistration } from '../../src/compute/cpu/registration.js';
import { GpuCompute } from '../../src/compute/gpu-compute.js';
import { describeConformance } from './conformance.js';
import { OPTIONAL_OPS } from './optional-ops.js';

const UNSUPPORTED: Readonly<Partial<Record<OptionalOp, string>>> = Object.fromEntries(
  OPTIONAL_OPS.map((op) => [op, 'this test backend keeps only the core ops']),
);

const coreOnly: BackendRegistration = { ...cpuRegistration, title: 'CPU, core ops only', unsupported: UNSUPPORTED };

/** Takes every optional op off the opened CPU backend, states why, and lets the composable ones be composed. */
function reduceToCore(backend: Backend): void {
  for (const op of OPTIONAL_OPS) Object.defineProperty(backend, op, { value: undefined, writable: true, configurable: true });
  Object.defineProperty(backend, 'unsupported', { value: UNSUPPORTED });
  withComposedOps(backend);
}

await describeConformance(coreOnly, {
  name: 'cpu, core ops only',
  async open(options) {
    const gpu = await GpuCompute.create({ backend: 'cpu', logLevel: 'silent', ...options });
    reduceToCore(gpu.backend);
    return gpu;
  },
});
