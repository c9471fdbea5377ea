import { describe, expect, it } from 'vitest';
import { coreSvd } from '../../../src/compute/linalg/core-svd.js';
import { appliedR, choleskyStep } from '../../../src/compute/linalg/guarded-cholesky.js';
import { jacobiSvd } from '../../../src/compute/linalg/jacobi-svd.js';
import { orthonormalizeTail } from '../../../src/compute/linalg/orthonormal-columns.js';
import { symmetricEigen } from '../../../src/compute/linalg/symmetric-eigen.js';
import { invertUpper, multiplyUpper } from '../../../src/compute/linalg/triangular.js';
import { freshSeed, randomValues } from '../compute/helpers.js';
import { knownMatrix, orthonormalityError, randomOrthonormal } from './known-spectrum.js';
import { relativeDistance } from './svd-checks.js';

/** Row-major a (r×k) · b (k×c). */
function mul(a: ArrayLike<number>, b: ArrayLike<number>, r: number, k: number, c: number): Float64Array {
  const out = new Float64Array(r * c);
  for (let i = 0; i < r; i++) for (let p = 0; p < k; p++) for (let j = 0; j < c; j++) out[i * c + j]! += a[i * k + p]! * b[p * c + j]!;
  return out;
}

function transpose(a: ArrayLike<number>, r: number, c: number): Float64Array {
  const out = new Float64Array(r * c);
  for (let i = 0; i < r; i++) for (let j = 0; j < c; j++) out[j * r + i] = a[i * c + j]!;
  return out;
}

function upperRandom(n: number, seed: number): Float64Array {
  const values = randomValues(n * n, seed);
  const r = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let j = i; j < n; j++) r[i * n + j] = i === j ? 2 + Math.abs(values[i * n + j]!) : values[i * n + j]!;
  return r;
}

describe('triangular helpers', () => {
  it('invertUpper and multiplyUpper give R·R⁻¹ = I', () => {
    const n = 17;
    const r = upperRandom(n, freshSeed());
    const identity = multiplyUpper(r, invertUpper(r, n), n);
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) expect(Math.abs(identity[i * n + j]! - (i === j ? 1 : 0))).toBeLessThan(1e-13);
    expect(relativeDistance(multiplyUpper(r, r, n), mul(r, r, n, n, n))).toBeLessThan(1e-15);
  });
});

describe('symmetricEigen', () => {
  it('decomposes random, graded, repeated-eigenvalue and tiny matrices', () => {
    const seed = freshSeed();
    const cases: [string, number, (n: number) => Float64Array][] = [
      ['random', 40, (n) => {
        const b = Float64Array.from(randomValues(n * n, seed));
        return mul(b, transpose(b, n, n), n, n, n);
      }],
      ['graded', 30, (n) => {
        const q = randomOrthonormal(n, n, seed);
        const d = Array.from({ length: n }, (_, i) => 10 ** (-i / 3));
        return mul(mul(q, diag(d), n, n, n), transpose(q, n, n), n, n, n);
      }],
      ['repeated', 25, (n) => {
        const q = randomOrthonormal(n, n, seed + 1);
        const d = Array.from({ length: n }, (_, i) => (i < 10 ? 2 : i < 20 ? -1 : 0));
        return mul(mul(q, diag(d), n, n, n), transpose(q, n, n), n, n, n);
      }],
      ['identity', 6, (n) => diag(Array.from({ length: n }, () => 1))],
      ['one', 1, () => Float64Array.of(-3)],
      ['two', 2, () => Float64Array.of(1, 2, 2, 1)],
    ];
    for (const [label, n, make] of cases) {
      const a = make(n);
      const { values, vectors } = symmetricEigen(a, n);
      for (let j = 1; j < n; j++) expect(values[j]!, label).toBeLessThanOrEqual(values[j - 1]!);
      expect(orthonormalityError(vectors, n, n), label).toBeLessThan(1e-13);
      const rebuilt = mul(mul(vectors, diag(Array.from(values)), n, n, n), transpose(vectors, n, n), n, n, n);
      expect(relativeDistance(rebuilt, a), `${label} seed ${seed}`).toBeLessThan(1e-13);
    }
  });
});

function diag(d: number[]): Float64Array {
  const n = d.length;
  const out = new Float64Array(n * n);
  d.forEach((v, i) => (out[i * n + i] = v));
  return out;
}

describe('jacobiSvd', () => {
  it('gives a thin SVD of tall and wide matrices to float64 accuracy', () => {
    const seed = freshSeed();
    for (const [m, n] of [[30, 12], [9, 21]] as const) {
      const km = knownMatrix(m, n, Array.from({ length: Math.min(m, n) }, (_, i) => 5 * 0.7 ** i), seed);
      const { u, s, v } = jacobiSvd(km.a, m, n);
      const p = Math.min(m, n);
      for (let j = 0; j < p; j++) expect(Math.abs(s[j]! - km.singularValues[j]!) / km.singularValues[j]!).toBeLessThan(1e-12);
      expect(orthonormalityError(u, m, p)).toBeLessThan(1e-13);
      expect(orthonormalityError(v, n, p)).toBeLessThan(1e-13);
      expect(relativeDistance(mul(mul(u, diag(Array.from(s)), m, p, p), transpose(v, n, p), m, p, n), km.a)).toBeLessThan(1e-13);
    }
  });

  it('completes U to orthonormal columns when singular values are zero', () => {
    const km = knownMatrix(20, 10, [3, 1], freshSeed());
    // Zero rows and columns make the trailing singular values exactly zero.
    const { u, s } = jacobiSvd(km.a, 20, 10);
    expect(s[0]).toBeCloseTo(3, 12);
    expect(orthonormalityError(u, 20, 10)).toBeLessThan(1e-12);
    const zero = jacobiSvd(new Float64Array(12), 4, 3);
    expect(Array.from(zero.s)).toEqual([0, 0, 0]);
    expect(orthonormalityError(zero.u, 4, 3)).toBeLessThan(1e-15);
  });
});

describe('choleskyStep', () => {
  /** G = XᵀX for row-major m×q x. */
  const gramOf = (x: Float64Array, m: number, q: number) => mul(transpose(x, m, q), x, q, m, q);

  it('orthonormalises a well-conditioned X in one step, with X = Q·R', () => {
    const [m, q] = [50, 8];
    const x = Float64Array.from(randomValues(m * q, freshSeed()));
    const step = choleskyStep(gramOf(x, m, q), q);
    expect(step.dependentColumns).toEqual([]);
    expect(step.replacedColumns).toEqual([]);
    expect(step.minPivot).toBeGreaterThan(0.05);
    const qm = mul(x, step.t, m, q, q);
    expect(orthonormalityError(qm, m, q)).toBeLessThan(1e-12);
    expect(relativeDistance(mul(qm, step.r, m, q, q), x)).toBeLessThan(1e-14);
    const t32 = Float32Array.from(step.t);
    expect(relativeDistance(mul(mul(x, t32, m, q, q), appliedR(step, t32, q), m, q, q), x)).toBeLessThan(1e-14);
  });

  it('keeps a dependent column as its residual, then replaces it when it is dependent again; zero columns are replaced', () => {
    const [m, q] = [40, 5];
    const x = Float64Array.from(randomValues(m * q, freshSeed()));
    for (let i = 0; i < m; i++) {
      x[i * q + 2] = 2 * x[i * q + 0]! - x[i * q + 1]!; // dependent on columns 0 and 1
      x[i * q + 4] = 0;
    }
    const first = choleskyStep(gramOf(x, m, q), q);
    expect(first.dependentColumns).toEqual([2]);
    expect(first.replacedColumns).toEqual([4]);
    expect(first.minPivot).toBe(0);
    // The kept residual is orthogonal to the earlier columns; the zero column's T is zero.
    const q1 = mul(x, first.t, m, q, q);
    for (let i = 0; i < q; i++) expect(Math.abs(first.t[i * q + 4]!)).toBe(0);
    const again = choleskyStep(gramOf(q1, m, q), q, first.dependentColumns);
    expect(again.replacedColumns).toEqual([2, 4]);
    // R keeps column 2's coefficients: X_2 = 2·X_0 − X_1 survives in Q·R without Q's column 2.
    const r = appliedR(first, Float32Array.from(first.t), q);
    expect(r[2 * q + 2]).not.toBe(0);
    expect(r[4 * q + 4]).toBe(0);
  });

  it('throws a RangeError for a Gram matrix that overflowed', () => {
    expect(() => choleskyStep([Infinity, 0, 0, 1], 2)).toThrow(RangeError);
    expect(() => choleskyStep([1, NaN, NaN, 1], 2)).toThrow(RangeError);
  });
});

describe('coreSvd and orthonormalizeTail', () => {
  it('gives the leading singular triplets of Rᵀ', () => {
    const q = 14;
    const k = 6;
    const r = upperRandom(q, freshSeed());
    const { x, sigma, y } = coreSvd(r, q, k);
    const full = jacobiSvd(transpose(r, q, q), q, q);
    for (let j = 0; j < k; j++) expect(Math.abs(sigma[j]! - full.s[j]!) / full.s[j]!).toBeLessThan(1e-12);
    expect(orthonormalityError(x, q, k)).toBeLessThan(1e-12);
    expect(orthonormalityError(y, q, k)).toBeLessThan(1e-12);
    // Rᵀ·y_j = σ_j·x_j.
    const rty = mul(transpose(r, q, q), y, q, q, k);
    for (let i = 0; i < q; i++) for (let j = 0; j < k; j++) expect(Math.abs(rty[i * k + j]! - sigma[j]! * x[i * k + j]!)).toBeLessThan(1e-12 * sigma[0]!);
  });

  it('keeps the direction of a weak column and completes one that leaves nothing', () => {
    const [m, n] = [8, 4];
    const u = new Float64Array(m * n);
    u[0 * n + 0] = 1; // e_0
    u[1 * n + 1] = 1; // e_1
    u[0 * n + 2] = 1; // e_0 + 1e-3·e_5: its own direction is e_5
    u[5 * n + 2] = 1e-3;
    u[1 * n + 3] = 1; // e_1 again: nothing left, completed by the first unit vector outside the span (e_2)
    orthonormalizeTail(u, m, n, 2);
    expect(orthonormalityError(u, m, n)).toBeLessThan(1e-15);
    expect(u[5 * n + 2]).toBeCloseTo(1, 12);
    expect(u[2 * n + 3]).toBeCloseTo(1, 12);
  });
});
