/**
 * What the registration says against what the backend does: the opened instance has each optional
 * op exactly when the registration does not leave it out (the composed ones always), with the
 * same reasons; and every public op needing an op the backend leaves out refuses with
 * UnsupportedOperationError and the registration's reason, before allocating anything.
 */
import { describe, expect, it, vi } from 'vitest';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { attentionBackward } from '../../../src/compute/ops/attention-backward.js';
import { gruTraining } from '../../../src/compute/ops/gru-backward.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { UnsupportedOperationError } from '../../../src/errors.js';
import type { ConformanceContext } from '../context.js';
import { isComposed, missingOp, OP_NEEDS, OPTIONAL_OPS } from '../optional-ops.js';

/** Small valid inputs for one call of every op of `OP_NEEDS`. */
function inputs(g: GpuCompute) {
  return {
    x: g.ones([2, 3]),
    w: g.ones([4, 3]),
    q: g.ones([1, 1, 2, 4]),
    lse: g.zeros([1, 1, 2]),
    wIh: g.ones([6, 3]),
    wHh: g.ones([6, 2]),
    seq: g.ones([1, 2, 3]),
    h: g.ones([2, 2]),
    projection: g.ones([3, 2]),
    classes: g.tensor(Int32Array.from([0, 2])),
  };
}

type Inputs = ReturnType<typeof inputs>;

/** A valid call of each op of `OP_NEEDS` (a new entry there is a compile error here until it has one). */
const CALLS: Record<keyof typeof OP_NEEDS, (g: GpuCompute, t: Inputs) => unknown> = {
  activationGrad: (g, t) => g.activationGrad('relu', t.x, t.x),
  dropout: (g, t) => g.dropout(t.x, 0.5, 1),
  oneHot: (g, t) => g.oneHot(t.classes, 3),
  softmax: (g, t) => g.softmax(t.x),
  logSoftmax: (g, t) => g.logSoftmax(t.x),
  layerNorm: (g, t) => g.layerNorm(t.x),
  matmul: (g, t) => g.matmul(t.x, t.w, { transB: true }),
  linear: (g, t) => g.linear(t.x, t.w),
  attention: (g, t) => g.attention(t.q, t.q, t.q),
  attentionBackward: (g, t) => attentionBackward(g.session, t.q, t.q, t.q, t.q, t.lse, t.q),
  gru: (g, t) => g.gru(t.seq, undefined, { wIh: t.wIh, wHh: t.wHh }),
  gruCell: (g, t) => g.gruCell(t.x, t.h, { wIh: t.wIh, wHh: t.wHh }),
  gruTraining: (g, t) => gruTraining(g.session, t.seq, undefined, { wIh: t.wIh, wHh: t.wHh }),
  gruRollout: (g, t) => g.gruRollout(t.x, t.h, { wIh: t.wIh, wHh: t.wHh }, { steps: 2, outputProjection: { weight: t.projection } }),
  svd: (g, t) => g.svd(t.x),
};

export function describeSupport(ctx: ConformanceContext): void {
  const r = ctx.registration;
  describe('support', () => {
    it('the instance has each optional op exactly where the registration does not leave it out, with its reasons', () => {
      const backend = ctx.gpu.backend;
      expect(backend.kind).toBe(r.kind);
      expect(ctx.gpu.info.backend).toBe(r.kind);
      expect(backend.unsupported ?? {}).toEqual(r.unsupported);
      const present = Object.fromEntries(OPTIONAL_OPS.map((op) => [op, typeof backend[op] === 'function']));
      const expected = Object.fromEntries(OPTIONAL_OPS.map((op) => [op, isComposed(op) || r.unsupported[op] === undefined]));
      expect(present).toEqual(expected);
    });

    for (const op of Object.keys(OP_NEEDS) as (keyof typeof OP_NEEDS)[]) {
      const missing = missingOp(r, OP_NEEDS[op]!);
      if (!missing) continue;
      it(`${op} refuses with UnsupportedOperationError (${missing.op}: ${missing.reason}) before allocating`, () => {
        const gpu = ctx.gpu;
        const t = inputs(gpu);
        try {
          const before = gpu.memoryStats().inUseBytes;
          const alloc = vi.spyOn(gpu.backend, 'alloc');
          try {
            expect(() => CALLS[op](gpu, t)).toThrow(UnsupportedOperationError);
            expect(() => CALLS[op](gpu, t)).toThrow(`${op} is not available on the ${r.kind} backend: ${missing.reason}`);
            expect(alloc).not.toHaveBeenCalled();
          } finally {
            alloc.mockRestore();
          }
          expect(gpu.memoryStats().inUseBytes).toBe(before);
        } finally {
          for (const tensor of Object.values(t) as Tensor[]) tensor.dispose();
        }
      });
    }
  });
}
