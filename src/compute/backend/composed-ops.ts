/**
 * Gives a backend the optional ops that can be composed correctly from its core ops when it has
 * none of its own (in the manner of Burn's default ops): binary ops with a number operand,
 * softmax/logSoftmax, layerNorm and the optimizer step. Every
 * backend is opened through this, so a new backend can start with the core alone.
 */
import type { Backend, OptionalOps } from './backend.js';
import { composedBinaryScalar } from './composed/binary-scalar.js';
import { composedLayerNorm } from './composed/layer-norm.js';
import { composedOptimizerStep } from './composed/optimizer-step.js';
import { composedSoftmax } from './composed/softmax.js';

/** A backend as every GpuCompute holds it: the composable ops are always there, natively or composed. */
export type ComposedBackend = Backend & Pick<OptionalOps, 'binaryScalar' | 'softmax' | 'layerNorm' | 'optimizerStep'>;

/** The optional ops every opened backend has, natively or composed. */
export const COMPOSED_OPS = ['binaryScalar', 'softmax', 'layerNorm', 'optimizerStep'] as const satisfies readonly (keyof OptionalOps)[];

/** Fills in the backend's missing composable ops (on the instance itself, so calls cost nothing extra). */
export function withComposedOps<B extends Backend>(backend: B): B & ComposedBackend {
  const b = backend as B & Partial<OptionalOps>;
  b.binaryScalar ??= (op, x, scalar, scalarFirst, out) => composedBinaryScalar(backend, op, x, scalar, scalarFirst, out);
  b.softmax ??= (x, out, rows, cols, log) => composedSoftmax(backend, x, out, rows, cols, log);
  b.layerNorm ??= (x, gamma, beta, out, rows, cols, eps) => composedLayerNorm(backend, x, gamma, beta, out, rows, cols, eps);
  b.optimizerStep ??= (params) => composedOptimizerStep(b as B & ComposedBackend, params);
  return b as B & ComposedBackend;
}
