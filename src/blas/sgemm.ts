import { InvalidArgumentError } from '../errors.js';
import { cblas, CblasOrder, CblasTranspose } from './bindings.js';

/**
 * A row-major product C = alpha·op(A)·op(B) + beta·C, with op(A) m×k, op(B) k×n and C m×n.
 * Leading dimensions and offsets count elements; a leading dimension is the distance between
 * consecutive rows of the matrix as stored.
 */
export interface SgemmArgs {
  /** op(A) = Aᵀ, so A is stored k×m. Default false: A is stored m×k. */
  transA?: boolean;
  /** op(B) = Bᵀ, so B is stored n×k. Default false: B is stored k×n. */
  transB?: boolean;
  m: number;
  n: number;
  k: number;
  /** Default 1. */
  alpha?: number;
  a: Float32Array;
  /** Default: A's row length as stored (k, or m when transposed). */
  lda?: number;
  /** Where A starts in `a`; default 0. */
  aOffset?: number;
  b: Float32Array;
  /** Default: B's row length as stored (n, or k when transposed). */
  ldb?: number;
  bOffset?: number;
  /** Default 0, and then C's prior contents are not read (a NaN there does not propagate). */
  beta?: number;
  c: Float32Array;
  /** Default n. */
  ldc?: number;
  cOffset?: number;
}

const INT32_MAX = 2 ** 31 - 1;
const { ROW_MAJOR } = CblasOrder;
const { NO_TRANS, TRANS } = CblasTranspose;

/**
 * Checks every argument, then runs the product: through `cblas_sgemv` where op(A) is one row
 * or op(B) one column (4-5x faster than OpenBLAS 0.3.21's sgemm on 1×1024×1024 and the like),
 * else `cblas_sgemm`.
 * Throws {@link InvalidArgumentError} naming the argument; nothing reaches the library unchecked.
 */
export function sgemm(args: SgemmArgs): void {
  const { m, n, k } = args;
  const transA = args.transA ?? false;
  const transB = args.transB ?? false;
  extent('m', m);
  extent('n', n);
  extent('k', k);
  const alpha = args.alpha === undefined ? 1 : scalar('alpha', args.alpha);
  const beta = args.beta === undefined ? 0 : scalar('beta', args.beta);
  // The matrices as stored: rows × columns, and how far into the array their last row reaches.
  const aRows = transA ? k : m;
  const aCols = transA ? m : k;
  const bRows = transB ? n : k;
  const bCols = transB ? k : n;
  const lda = leading('lda', args.lda, aCols, transA ? 'm (A is transposed)' : 'k');
  const ldb = leading('ldb', args.ldb, bCols, transB ? 'k (B is transposed)' : 'n');
  const ldc = leading('ldc', args.ldc, n, 'n');
  const aReach = reach(aRows, aCols, lda);
  const bReach = reach(bRows, bCols, ldb);
  const cReach = reach(m, n, ldc);
  const aOffset = offset('a', args.a, args.aOffset, aReach);
  const bOffset = offset('b', args.b, args.bOffset, bReach);
  const cOffset = offset('c', args.c, args.cOffset, cReach);
  if (cReach === 0) return;
  disjoint('a', args.a, aOffset, aReach, args.c, cOffset, cReach);
  disjoint('b', args.b, bOffset, bReach, args.c, cOffset, cReach);
  const a = aOffset === 0 ? args.a : args.a.subarray(aOffset);
  const b = bOffset === 0 ? args.b : args.b.subarray(bOffset);
  const c = cOffset === 0 ? args.c : args.c.subarray(cOffset);
  // With k = 0, sgemv returns early and leaves y unscaled where sgemm scales C by beta: keep sgemm.
  if (k > 0 && m === 1) {
    // c (1×n) = op(B)ᵀ·x, x being A's one row (stride 1) or, transposed, its one column (stride lda).
    if (transB) cblas.cblas_sgemv(ROW_MAJOR, NO_TRANS, n, k, alpha, b, ldb, a, transA ? lda : 1, beta, c, 1);
    else cblas.cblas_sgemv(ROW_MAJOR, TRANS, k, n, alpha, b, ldb, a, transA ? lda : 1, beta, c, 1);
  } else if (k > 0 && n === 1) {
    // c (m×1, stride ldc) = op(A)·x, x being B's one column (stride ldb) or, transposed, its one row.
    if (transA) cblas.cblas_sgemv(ROW_MAJOR, TRANS, k, m, alpha, a, lda, b, transB ? 1 : ldb, beta, c, ldc);
    else cblas.cblas_sgemv(ROW_MAJOR, NO_TRANS, m, k, alpha, a, lda, b, transB ? 1 : ldb, beta, c, ldc);
  } else {
    cblas.cblas_sgemm(ROW_MAJOR, transA ? TRANS : NO_TRANS, transB ? TRANS : NO_TRANS, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
}

function extent(name: string, value: number): void {
  if (!Number.isInteger(value) || value < 0 || value > INT32_MAX) {
    throw new InvalidArgumentError(`sgemm: ${name} ${value} is not an integer in [0, 2^31)`);
  }
}

function scalar(name: string, value: number): number {
  if (typeof value !== 'number') throw new InvalidArgumentError(`sgemm: ${name} ${String(value)} is not a number`);
  return value;
}

/** A leading dimension: at least the stored row length (and 1), as BLAS requires even of empty matrices. */
function leading(name: string, value: number | undefined, rowLength: number, what: string): number {
  const least = Math.max(1, rowLength);
  if (value === undefined) return least;
  if (!Number.isInteger(value) || value < least || value > INT32_MAX) {
    throw new InvalidArgumentError(`sgemm: ${name} ${value} must be an integer of at least ${least}, the stored row length ${what}`);
  }
  return value;
}

/** Elements from a matrix's first to past its last: rows - 1 strides and one row. */
function reach(rows: number, cols: number, ld: number): number {
  return rows === 0 || cols === 0 ? 0 : (rows - 1) * ld + cols;
}

/** Checks that `array` is a Float32Array holding `needed` elements from `offset`; returns the offset. */
function offset(name: string, array: Float32Array, value: number | undefined, needed: number): number {
  if (!(array instanceof Float32Array)) throw new InvalidArgumentError(`sgemm: ${name} must be a Float32Array, not ${kind(array)}`);
  const start = value === undefined ? 0 : value;
  if (!Number.isInteger(start) || start < 0) throw new InvalidArgumentError(`sgemm: ${name}Offset ${start} is not a non-negative integer`);
  if (array.length - start < needed) {
    throw new InvalidArgumentError(
      `sgemm: ${name} holds ${array.length} elements, but the matrix at ${name}Offset ${start} reaches element ${start + needed} ` +
        `(rows, columns and leading dimension as given)`,
    );
  }
  return start;
}

function kind(value: unknown): string {
  if (value === null || typeof value !== 'object') return String(value);
  return value.constructor?.name ?? 'an object';
}

/** BLAS leaves the result undefined when C overlaps an input: refuse shared bytes. */
function disjoint(name: string, input: Float32Array, inOffset: number, inReach: number, c: Float32Array, cOffset: number, cReach: number): void {
  if (inReach === 0 || input.buffer !== c.buffer) return;
  const inStart = input.byteOffset + 4 * inOffset;
  const cStart = c.byteOffset + 4 * cOffset;
  if (inStart < cStart + 4 * cReach && cStart < inStart + 4 * inReach) {
    throw new InvalidArgumentError(`sgemm: c overlaps ${name} in their buffer; BLAS needs the output apart from its inputs`);
  }
}
