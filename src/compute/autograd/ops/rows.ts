/**
 * softmax, logSoftmax and layerNorm with their gradients, over the last axis. With y = softmax(x),
 * dx = y·(g − Σ g·y); with y = logSoftmax(x), dx = g − exp(y)·Σ g. layerNorm's backward recomputes
 * the row statistics from the saved x: with x̂ = (x − μ)·r, r = 1/√(σ² + eps) and ĝ = g·gamma,
 * dx = r·(ĝ − mean(ĝ) − x̂·mean(ĝ·x̂)), dgamma = Σ_rows g·x̂, dbeta = Σ_rows g. In f32 for 16-bit
 * tensors.
 */
import type { DType } from '../../core/dtype.js';
import { binary, unary } from '../../ops/elementwise.js';
import { reduce } from '../../ops/reduce.js';
import { DEFAULT_LAYER_NORM_EPS, layerNorm as rawLayerNorm, softmax as rawSoftmax } from '../../ops/rows.js';
import type { Session } from '../../tensor/session.js';
import type { Tensor } from '../../tensor/tensor.js';
import { inF32 } from '../f32.js';
import { record, recording } from '../record.js';

/** The columns a row op works over (the last dim; 1 for a scalar). */
function columns(x: Tensor): number {
  return x.rank === 0 ? 1 : x.shape[x.rank - 1]!;
}

/** (log)softmax over the last axis, differentiable. */
export function softmax<D extends DType>(s: Session, x: Tensor<D>, log: boolean): Tensor<D> {
  const op = log ? 'logSoftmax' : 'softmax';
  if (!recording(s, op, x)) return rawSoftmax(s, x, log);
  const out = rawSoftmax(s, x, log);
  const shape = x.shape;
  const cols = columns(x);
  return record(op, [x], out, [out], ([g], [y]) => {
    using g2 = g!.reshape([-1, cols]);
    using y2 = y!.reshape([-1, cols]);
    const [dx] = inF32(s, [g2, y2], (gf, yf) => {
      if (log) {
        using total = reduce(s, 'sum', gf!, { axis: 1, keepDims: true });
        using p = unary(s, 'exp', yf!);
        using scaled = binary(s, 'mul', p, total, op);
        return [[binary(s, 'sub', gf!, scaled, op), g!.dtype]];
      }
      using gy = binary(s, 'mul', gf!, yf!, op);
      using dot = reduce(s, 'sum', gy, { axis: 1, keepDims: true });
      using centered = binary(s, 'sub', gf!, dot, op);
      return [[binary(s, 'mul', yf!, centered, op), g!.dtype]];
    });
    try {
      return [dx!.reshape(shape)];
    } finally {
      dx!.dispose();
    }
  });
}

/** layerNorm over the last axis (see `ops/rows.ts`), differentiable in x, gamma and beta. */
export function layerNorm<D extends DType>(s: Session, x: Tensor<D>, gamma: Tensor<D> | null | undefined, beta: Tensor<D> | null | undefined, eps?: unknown): Tensor<D> {
  const op = 'layerNorm';
  if (!recording(s, op, x, gamma, beta)) return rawLayerNorm(s, x, gamma, beta, eps);
  const out = rawLayerNorm(s, x, gamma, beta, eps);
  const epsilon = (eps ?? DEFAULT_LAYER_NORM_EPS) as number;
  const shape = x.shape;
  const cols = columns(x);
  return record(op, [x, gamma ?? undefined, beta ?? undefined], out, [x, gamma ?? undefined], ([g], [sx, sgamma], needs) => {
    using g2 = g!.reshape([-1, cols]);
    using x2 = sx!.reshape([-1, cols]);
    const dtype = g!.dtype;
    const [dx, dgamma, dbeta] = inF32(s, [g2, x2, sgamma], (gf, xf, gammaf) => {
      using mu = reduce(s, 'mean', xf!, { axis: 1, keepDims: true });
      using centered = binary(s, 'sub', xf!, mu, op);
      using squares = binary(s, 'mul', centered, centered, op);
      using variance = reduce(s, 'mean', squares, { axis: 1, keepDims: true });
      using shifted = binary(s, 'add', variance, epsilon, op);
      using r = unary(s, 'rsqrt', shifted);
      using xhat = binary(s, 'mul', centered, r, op);
      let gx: Tensor | undefined;
      if (needs[0]) {
        using ghat = gammaf ? binary(s, 'mul', gf!, gammaf, op) : undefined;
        const gh = ghat ?? gf!;
        using m1 = reduce(s, 'mean', gh, { axis: 1, keepDims: true });
        using ghx = binary(s, 'mul', gh, xhat, op);
        using m2 = reduce(s, 'mean', ghx, { axis: 1, keepDims: true });
        using a = binary(s, 'sub', gh, m1, op);
        using b = binary(s, 'mul', xhat, m2, op);
        using c = binary(s, 'sub', a, b, op);
        using flat = binary(s, 'mul', c, r, op);
        gx = flat.reshape(shape);
      }
      let gg: Tensor | undefined;
      if (needs[1]) {
        using gxhat = binary(s, 'mul', gf!, xhat, op);
        gg = reduce(s, 'sum', gxhat, 0);
      }
      const gb = needs[2] ? reduce(s, 'sum', gf!, 0) : undefined;
      return [[gx, dtype], [gg, dtype], [gb, dtype]];
    });
    return [dx, dgamma, dbeta];
  });
}
