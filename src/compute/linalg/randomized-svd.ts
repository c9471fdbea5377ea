/**
 * The host route of a truncated SVD (the CPU backend, backends without device dense routines,
 * and sketches up to `HOST_ROUTE_MAX_WIDTH` wide): the randomized range finder composed from
 * tensor ops, every basis orthonormalised by guarded CholeskyQR passes whose q×q factor is
 * computed in float64 on the host (`guarded-cholesky.ts`), and the core decomposed on the host
 * (`core-svd.ts`). See `ops/svd.ts` for the whole algorithm and when each route runs.
 */
import { InvalidArgumentError } from '../../errors.js';
import { tensor } from '../ops/creation.js';
import { binary } from '../ops/elementwise.js';
import { matmul } from '../ops/matmul.js';
import { randn } from '../ops/random.js';
import type { Session } from '../tensor/session.js';
import type { Tensor } from '../tensor/tensor.js';
import { coreSvd } from './core-svd.js';
import { appliedR, choleskyStep, type CholeskyStep } from './guarded-cholesky.js';
import { firstSketch, PRODUCT, productScale, sketchSpansColumns, sketchWidth, type SvdProblem, type SvdResult } from './svd-plan.js';
import { multiplyUpper } from './triangular.js';

/** A pass whose input had every scaled pivot above this leaves its output orthonormal to rounding. */
const WELL_CONDITIONED_PIVOT = 0.5;
/** Passes allowed for a final basis (exactly dependent columns need about four). */
const MAX_FINAL_PASSES = 6;

/** How many CholeskyQR passes a basis gets. */
interface PassPolicy {
  /** Passes always made (2 for a final basis: CholeskyQR2). */
  min: number;
  /** Passes at most. */
  max: number;
  /** Also return R with X = Q·R (float64). */
  wantR: boolean;
}

const INTERMEDIATE: PassPolicy = { min: 1, max: 1, wantR: false };
const FINAL: PassPolicy = { min: 2, max: MAX_FINAL_PASSES, wantR: false };
const FINAL_WITH_R: PassPolicy = { ...FINAL, wantR: true };

/** One truncated SVD: the range finder, the core and the two output products. */
export class RandomizedSvd {
  private readonly q: number;
  /** alpha of every product with A: a power of two near 1/max|a|. */
  private readonly alpha: number;
  private readonly powerIterations: number;
  private randomColumns = 0;

  constructor(
    private readonly s: Session,
    private readonly a: Tensor<'f32'>,
    private readonly o: SvdProblem,
    maxAbs: number,
  ) {
    this.q = sketchWidth(o);
    this.alpha = productScale(maxAbs);
    this.powerIterations = sketchSpansColumns(o) ? 0 : o.powerIterations;
  }

  run(): SvdResult {
    const { a, powerIterations } = this;
    let basis = this.orthonormalize(firstSketch(this.s, a, this.o, this.alpha), powerIterations === 0 ? FINAL : INTERMEDIATE).q;
    try {
      for (let i = 0; i < powerIterations; i++) {
        const z = this.orthonormalize(this.product(a, basis, true), INTERMEDIATE).q;
        try {
          const next = this.orthonormalize(this.product(a, z, false), i === powerIterations - 1 ? FINAL : INTERMEDIATE).q;
          basis.dispose();
          basis = next;
        } finally {
          z.dispose();
        }
      }
      const { q: p, r } = this.orthonormalize(this.product(a, basis, true), FINAL_WITH_R);
      try {
        return this.outputs(basis, p, r!);
      } finally {
        p.dispose();
      }
    } finally {
      basis.dispose();
    }
  }

  /** U = Q·X, S = Σ, V = (P·Y)ᵀ from the core SVD of Rᵀ, where Aᵀ·Q = P·R. */
  private outputs(basis: Tensor<'f32'>, p: Tensor<'f32'>, r: Float64Array): SvdResult {
    const { s, q } = this;
    const k = this.o.rank;
    const core = coreSvd(r, q, k);
    const sigma = new Float32Array(k);
    for (let j = 0; j < k; j++) sigma[j] = core.sigma[j]! / this.alpha;
    const yTransposed = new Float32Array(k * q);
    for (let i = 0; i < q; i++) for (let j = 0; j < k; j++) yTransposed[j * q + i] = core.y[i * k + j]!;
    using x = tensor<'f32'>(s, Float32Array.from(core.x), [q, k], 'f32');
    using y = tensor<'f32'>(s, yTransposed, [k, q], 'f32');
    const u = matmul(s, basis, x, PRODUCT);
    let v: Tensor<'f32'> | undefined;
    try {
      v = matmul(s, y, p, { ...PRODUCT, transB: true });
      return { u, s: tensor<'f32'>(s, sigma, [k], 'f32'), v };
    } catch (err) {
      u.dispose();
      v?.dispose();
      throw err;
    }
  }

  /** alpha·A·x, or alpha·Aᵀ·x with `transpose`. */
  private product(a: Tensor<'f32'>, x: Tensor<'f32'>, transpose: boolean): Tensor<'f32'> {
    return matmul(this.s, a, x, { ...PRODUCT, transA: transpose, alpha: this.alpha });
  }

  /**
   * An orthonormal basis of x's columns by guarded CholeskyQR passes (see the file comment),
   * and with `policy.wantR` the R of x = Q·R. Takes ownership of x.
   */
  private orthonormalize(x: Tensor<'f32'>, policy: PassPolicy): { q: Tensor<'f32'>; r?: Float64Array } {
    const q = this.q;
    let current = x;
    let r: Float64Array | undefined;
    let dependent: number[] = [];
    try {
      for (let pass = 0; pass < policy.max; pass++) {
        const step = this.factor(current, dependent);
        dependent = step.dependentColumns;
        const t32 = Float32Array.from(step.t);
        const next = this.applyStep(current, t32, step);
        current.dispose();
        current = next;
        if (policy.wantR) {
          const applied = appliedR(step, t32, q);
          r = r === undefined ? applied : multiplyUpper(applied, r, q);
        }
        if (pass + 1 >= policy.min && step.minPivot >= WELL_CONDITIONED_PIVOT) break;
      }
      return r === undefined ? { q: current } : { q: current, r };
    } catch (err) {
      current.dispose();
      throw err;
    }
  }

  /** The host factor of one pass, from the Gram matrix computed on the device. */
  private factor(x: Tensor<'f32'>, previouslyDependent: readonly number[]): CholeskyStep {
    using gram = matmul(this.s, x, x, { ...PRODUCT, transA: true });
    try {
      return choleskyStep(gram.toArraySync(), this.q, previouslyDependent);
    } catch (err) {
      if (err instanceof RangeError) {
        throw new InvalidArgumentError(`svd: the products of a ${this.a.toString()} overflowed f32; scale a down`);
      }
      throw err;
    }
  }

  /** Q = X·T, plus a fresh random column (norm ≈ 1) at each replaced column. */
  private applyStep(x: Tensor<'f32'>, t32: Float32Array, step: CholeskyStep): Tensor<'f32'> {
    const { s, q } = this;
    using t = tensor<'f32'>(s, t32, [q, q], 'f32');
    if (step.replacedColumns.length === 0) return matmul(s, x, t, PRODUCT);
    const rows = x.shape[0]!;
    const mask = new Float32Array(q);
    for (const j of step.replacedColumns) mask[j] = 1;
    using maskRow = tensor<'f32'>(s, mask, [q], 'f32');
    using noise = randn(s, [rows, q], { seed: this.nextRandomSeed(), std: 1 / Math.sqrt(rows) });
    using fill = binary(s, 'mul', noise, maskRow, 'svd');
    return matmul(s, x, t, { ...PRODUCT, c: fill });
  }

  /** Seeds of the random replacement columns: after the sketch's, deterministic for a seed. */
  private nextRandomSeed(): number {
    this.randomColumns++;
    return (this.o.seed + this.randomColumns) % Number.MAX_SAFE_INTEGER;
  }
}
