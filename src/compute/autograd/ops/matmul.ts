/**
 * matmul and linear with their gradients. For out = act(z), z = alpha·op(a)·op(b) + beta·c + bias:
 * dz = act'(z)·g; with P = op(a) and Q = op(b), dP = alpha·dz·Qᵀ and dQ = alpha·Pᵀ·dz, each written
 * as one product of the saved operands with the transposes folded into its flags, then summed over
 * the batch dims the operand was broadcast along; dc = beta·dz summed to c's shape; dbias = dz
 * summed over every row. linear is the same with a = x (rows of any leading shape), b = weight
 * (transposed). While recording, a fused activation runs as its own op after the product, so the
 * product z can be saved for act'(z).
 */
import type { DType } from '../../core/dtype.js';
import { MATMUL_ACTIVATIONS, type MatmulActivation } from '../../core/matmul-plan.js';
import { activationGrad, binary, unary } from '../../ops/elementwise.js';
import { linear as rawLinear, matmul as rawMatmul, type LinearOptions, type MatmulOptions } from '../../ops/matmul.js';
import { reduce } from '../../ops/reduce.js';
import type { Session } from '../../tensor/session.js';
import type { Tensor } from '../../tensor/tensor.js';
import { record, recording } from '../record.js';
import { sumToShape } from '../sum-to-shape.js';

/** The fused activation asked for, when it is one (an unknown name is left to the forward to refuse). */
function fusedActivation(activation: unknown): MatmulActivation | undefined {
  return MATMUL_ACTIVATIONS.includes(activation as MatmulActivation) ? (activation as MatmulActivation) : undefined;
}

/** z, then act(z) as a separate op when there is an activation (z is disposed if that fails). */
function activate(s: Session, op: string, z: Tensor, act: MatmulActivation | undefined): Tensor {
  if (act === undefined) return z;
  try {
    return unary(s, act, z, undefined, op);
  } catch (err) {
    z.dispose();
    throw err;
  }
}

/** The options the backward products share with the forward's. */
function productOptions(o: Partial<MatmulOptions>): Pick<MatmulOptions, 'precision' | 'engine' | 'autotune'> {
  const p: Pick<MatmulOptions, 'precision' | 'engine' | 'autotune'> = {};
  if (o.precision !== undefined) p.precision = o.precision;
  if (o.engine !== undefined) p.engine = o.engine;
  if (o.autotune !== undefined) p.autotune = o.autotune;
  return p;
}

/** act(alpha·op(a)·op(b) + beta·c + bias) (see `ops/matmul.ts`), differentiable in a, b, c and bias. */
export function matmul<D extends DType>(s: Session, a: Tensor<D>, b: Tensor<D>, opts?: unknown): Tensor<D> {
  const given = opts as Partial<MatmulOptions> | undefined;
  if (!recording(s, 'matmul', a, b, given?.c, given?.bias)) return rawMatmul(s, a, b, opts);
  const o = given ?? {};
  const act = fusedActivation(o.activation);
  const z = rawMatmul(s, a, b, act === undefined ? opts : { ...o, activation: 'none' });
  const out = activate(s, 'matmul', z, act) as Tensor<D>;
  const transA = o.transA ?? false;
  const transB = o.transB ?? false;
  const alpha = o.alpha ?? 1;
  const beta = o.beta ?? (o.c === undefined ? 0 : 1);
  const product = productOptions(o);
  const [aShape, bShape, cShape] = [a.shape, b.shape, o.c?.shape];
  const n = out.shape[out.rank - 1]!;
  try {
    // Each operand's gradient reads the other operand.
    return record('matmul', [a, b, o.c, o.bias], out, [b.requiresGrad ? a : undefined, a.requiresGrad ? b : undefined, act && z], ([g], [sa, sb, sz], needs) => {
      using dzAct = act === undefined ? undefined : activationGrad(s, act, sz!, g!, {});
      const dz = dzAct ?? g!;
      let da: Tensor | undefined;
      if (needs[0]) {
        // dP = alpha·dz·Qᵀ; a = P, or Pᵀ when transA.
        using full = transA
          ? rawMatmul(s, sb!, dz, { ...product, alpha, transA: transB, transB: true })
          : rawMatmul(s, dz, sb!, { ...product, alpha, transB: !transB });
        da = sumToShape(s, full, aShape);
        if (da === full) da = full.reshape(aShape);
      }
      let db: Tensor | undefined;
      if (needs[1]) {
        // dQ = alpha·Pᵀ·dz; b = Q, or Qᵀ when transB.
        using full = transB
          ? rawMatmul(s, dz, sa!, { ...product, alpha, transA: true, transB: transA })
          : rawMatmul(s, sa!, dz, { ...product, alpha, transA: !transA });
        db = sumToShape(s, full, bShape);
        if (db === full) db = full.reshape(bShape);
      }
      let dc: Tensor | undefined;
      if (needs[2]) {
        using scaled = beta === 1 ? undefined : binary(s, 'mul', dz, beta, 'matmul');
        dc = sumToShape(s, scaled ?? dz, cShape!);
        if (dc === scaled) dc = scaled.reshape(cShape!);
      }
      let dbias: Tensor | undefined;
      if (needs[3]) {
        using rows = dz.reshape([-1, n]);
        dbias = reduce(s, 'sum', rows, 0);
      }
      return [da, db, dc, dbias];
    });
  } finally {
    if (act !== undefined) z.dispose();
  }
}

/** x·weightᵀ + bias, then activation (see `ops/matmul.ts`), differentiable in x, weight and bias. */
export function linear<D extends DType>(
  s: Session,
  x: Tensor<D>,
  weight: Tensor<D>,
  bias?: Tensor<D> | null,
  activation?: MatmulActivation | 'none',
  opts?: unknown,
): Tensor<D> {
  if (!recording(s, 'linear', x, weight, bias)) return rawLinear(s, x, weight, bias, activation, opts);
  const act = fusedActivation(activation);
  const z = rawLinear(s, x, weight, bias, act === undefined ? activation : 'none', opts);
  const out = activate(s, 'linear', z, act) as Tensor<D>;
  const product = productOptions((opts ?? {}) as LinearOptions);
  const xShape = x.shape;
  const inFeatures = weight.shape[1]!;
  const outFeatures = weight.shape[0]!;
  try {
    return record('linear', [x, weight, bias ?? undefined], out, [weight.requiresGrad ? x : undefined, x.requiresGrad ? weight : undefined, act && z], ([g], [sx, sw, sz], needs) => {
      using dzAct = act === undefined ? undefined : activationGrad(s, act, sz!, g!, {});
      using dz = (dzAct ?? g!).reshape([-1, outFeatures]);
      let dx: Tensor | undefined;
      if (needs[0]) {
        using rows = rawMatmul(s, dz, sw!, product);
        dx = rows.reshape(xShape);
      }
      let dw: Tensor | undefined;
      if (needs[1]) {
        using x2 = sx!.reshape([-1, inFeatures]);
        dw = rawMatmul(s, dz, x2, { ...product, transA: true });
      }
      const dbias = needs[2] ? reduce(s, 'sum', dz, 0) : undefined;
      return [dx, dw, dbias];
    });
  } finally {
    if (act !== undefined) z.dispose();
  }
}
