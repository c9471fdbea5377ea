/**
 * The backend conformance suite: given a backend's registration, runs every GpuCompute op on it
 * against a float64 reference and against the CPU backend, on fresh random inputs and odd shapes,
 * in every dtype the backend claims, plus the error paths and what the registration says it
 * leaves out. A backend whose probe says it cannot run here gets the same suite, skipped, under a
 * name that says why. Registering a backend (`src/compute/backends.ts`) is all it takes to be tested.
 */
import { afterAll, beforeAll, describe } from 'vitest';
import type { BackendRegistration } from '../../src/compute/backend/registration.js';
import type { BackendKind } from '../../src/compute/backends.js';
import { GpuCompute } from '../../src/compute/gpu-compute.js';
import { ConformanceContext, type OpenCompute } from './context.js';
import { describeActivationGrad } from './families/activation-grad.js';
import { describeAttention } from './families/attention.js';
import { describeAttentionBackward } from './families/attention-backward.js';
import { describeBackward } from './families/backward.js';
import { describeBinary } from './families/binary.js';
import { describeCast } from './families/cast.js';
import { describeCreation } from './families/creation.js';
import { describeDropout } from './families/dropout.js';
import { describeErrors } from './families/errors.js';
import { describeGru } from './families/gru.js';
import { describeGruBackward } from './families/gru-backward.js';
import { describeMatmul } from './families/matmul.js';
import { describeOptimizers } from './families/optimizers.js';
import { describeRandom } from './families/random.js';
import { describeReductions } from './families/reductions.js';
import { describeRows } from './families/rows.js';
import { describeStreams } from './families/streams.js';
import { describeSupport } from './families/support.js';
import { describeSvd } from './families/svd.js';
import { describeTranspose } from './families/transpose.js';
import { describeUnary } from './families/unary.js';

const FAMILIES: readonly ((ctx: ConformanceContext) => void)[] = [
  describeSupport,
  describeCreation,
  describeRandom,
  describeDropout,
  describeUnary,
  describeActivationGrad,
  describeBinary,
  describeCast,
  describeReductions,
  describeRows,
  describeTranspose,
  describeMatmul,
  describeAttention,
  describeAttentionBackward,
  describeGru,
  describeGruBackward,
  describeSvd,
  describeBackward,
  describeOptimizers,
  describeStreams,
  describeErrors,
];

/** How to run the suite on a backend that is not one of the registry's (a test double); defaults suit a registered one. */
export interface ConformanceOptions {
  /** The suite's name (default: the backend's kind). */
  name?: string;
  /** Opens a GpuCompute on the backend (default: `GpuCompute.create({ backend: kind })`). */
  open?: OpenCompute;
}

/** Describes the suite on `registration`'s backend; probes it first, so await it at the top of a test file. */
export async function describeConformance(registration: BackendRegistration, options: ConformanceOptions = {}): Promise<void> {
  const name = options.name ?? registration.kind;
  const open: OpenCompute =
    options.open ?? ((o) => GpuCompute.create({ backend: registration.kind as BackendKind, logLevel: 'silent', ...o }));
  const ctx = new ConformanceContext(registration, open);
  const { backend: probe } = await registration.probe({ freeMemory: false });
  const body = () => {
    beforeAll(() => ctx.open());
    afterAll(() => ctx.close());
    for (const family of FAMILIES) family(ctx);
  };
  if (probe.available) describe(name, body);
  else describe.skip(`${name}: skipped (${probe.reason ?? 'its probe gives no reason'})`, body);
}
