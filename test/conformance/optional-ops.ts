/**
 * The optional backend ops (`OptionalOps` in `backend/backend.ts`) at run time, and which public
 * ops need which of them: what decides, from a registration alone, what a backend must run and
 * what it must refuse.
 */
import type { OptionalOp } from '../../src/compute/backend/backend.js';
import { COMPOSED_OPS } from '../../src/compute/backend/composed-ops.js';
import type { BackendRegistration } from '../../src/compute/backend/registration.js';

/** Every optional op; `satisfies` makes a new one in `OptionalOps` a compile error here until it is listed. */
const OPTIONAL = {
  binaryScalar: true,
  activationGrad: true,
  dropout: true,
  oneHot: true,
  softmax: true,
  layerNorm: true,
  matmul: true,
  attention: true,
  attentionBackward: true,
  gruRecurrence: true,
  gruRollout: true,
  gruBackwardRecurrence: true,
  optimizerStep: true,
  denseLinalg: true,
  recordGraph: true,
  copyFromPeer: true,
} as const satisfies Record<OptionalOp, true>;

export const OPTIONAL_OPS = Object.keys(OPTIONAL) as OptionalOp[];

/** Whether every backend has `op` after opening, natively or composed from the core ops. */
export function isComposed(op: OptionalOp): boolean {
  return (COMPOSED_OPS as readonly OptionalOp[]).includes(op);
}

/** The public ops that need optional backend ops, with what each needs, in the order its front-end checks them. */
export const OP_NEEDS = {
  activationGrad: ['activationGrad'],
  dropout: ['dropout'],
  oneHot: ['oneHot'],
  softmax: ['softmax'],
  logSoftmax: ['softmax'],
  layerNorm: ['layerNorm'],
  matmul: ['matmul'],
  linear: ['matmul'],
  attention: ['attention'],
  attentionBackward: ['attentionBackward'],
  gru: ['matmul', 'gruRecurrence'],
  gruTraining: ['matmul', 'gruRecurrence', 'gruBackwardRecurrence'],
  gruCell: ['matmul', 'gruRecurrence'],
  gruRollout: ['matmul', 'gruRecurrence'],
  svd: ['matmul'],
} as const satisfies Readonly<Record<string, readonly OptionalOp[]>>;

/** A public op of `OP_NEEDS`. */
export type NeedingOp = keyof typeof OP_NEEDS;

/** The first of `needs` the registration leaves out and nothing composes, with its reason; undefined when the backend has them all. */
export function missingOp(r: BackendRegistration, needs: readonly OptionalOp[]): { op: OptionalOp; reason: string } | undefined {
  for (const op of needs) {
    const reason = r.unsupported[op];
    if (reason !== undefined && !isComposed(op)) return { op, reason };
  }
  return undefined;
}
