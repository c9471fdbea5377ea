/**
 * Cache-blocked matrix product on the host, with every option of
 * {@link MatmulParams}: transposes, alpha/beta with C, bias, a fused activation
 * and batches with broadcast (stride-0) operands.
 *
 * Layout of the loops (after BLIS): the N dimension is cut into NC-wide column
 * blocks, K into KC-deep slices and M into MC-tall row blocks; each B block
 * (KC × NC) and A block (MC × KC) is packed into micro-panels of 4 rows or
 * columns so that the 4 × 4 register-tiled micro-kernel reads both operands
 * contiguously from cache whatever the transposes. Packing pads edges with
 * zeros, so any M, N, K (primes, 1) takes the same path.
 *
 * Accumulation is in double precision (f16/bf16 inputs are widened exactly),
 * and the epilogue rounds once to the output dtype, so this is the most
 * accurate backend and a fair reference for the GPU ones.
 */
import type { MatmulParams } from '../core/matmul-plan.js';
import type { DType } from '../core/dtype.js';
import { bf16BitsToF32, f16BitsToF32, f32ToBf16Bits, f32ToF16Bits } from '../core/dtype.js';
import type { TensorView } from '../core/view.js';
import { UNARY_MATH } from './unary-math.js';

/** Rows of A and columns of B handled by one micro-kernel call. */
const MR = 4;
const NR = 4;
/** Depth of one packed K slice (KC · (MR + NR) doubles stay in L1). */
const KC = 256;
/** Rows of one packed A block (MC · KC doubles = 128 KiB, an L2-sized block). */
const MC = 64;
/** Columns of one packed B block. */
const NC = 512;

/** Where the product's rounded results go: the CPU backend's typed array over `out`. */
export interface HostMatmulIO {
  /** The `view.size` elements of `view` from its offset (f16/bf16 as raw 16-bit patterns). */
  elements(view: TensorView): ArrayLike<number> & { [i: number]: number };
}

/**
 * Runs `params` on host memory. `io.elements(view)` must return the view's
 * storage (f32: Float32Array, f16/bf16: Uint16Array of bit patterns) starting
 * at `view.offset`, writable for `out`.
 */
export function cpuMatmul(params: MatmulParams, io: HostMatmulIO): void {
  const { m, n, k, batch, transA, transB } = params;
  const a = widen(io.elements(params.a), params.a.dtype);
  const b = widen(io.elements(params.b), params.b.dtype);
  const out = io.elements(params.out);
  const c = params.c && params.beta !== 0 ? widen(io.elements(params.c), params.c.dtype) : undefined;
  const bias = params.bias ? widen(io.elements(params.bias), params.bias.dtype) : undefined;
  const store = storeFunction(params.out.dtype);
  const activation = params.activation ? UNARY_MATH[params.activation] : undefined;

  const acc = new Float64Array(m * n);
  const packA = new Float64Array(Math.ceil(Math.min(MC, m) / MR) * MR * Math.min(KC, k));
  const packB = new Float64Array(Math.ceil(Math.min(NC, n) / NR) * NR * Math.min(KC, k));
  const { alpha, beta } = params;

  for (let e = 0; e < batch; e++) {
    acc.fill(0);
    const aBase = e * params.aBatchStride;
    const bBase = e * params.bBatchStride;
    gemmBlocked(a, aBase, transA, b, bBase, transB, m, n, k, acc, packA, packB);

    const outBase = e * m * n;
    const cBase = e * params.cBatchStride;
    for (let i = 0; i < m; i++) {
      const row = i * n;
      for (let j = 0; j < n; j++) {
        let v = alpha * acc[row + j]!;
        if (c) v += beta * c[cBase + row + j]!;
        if (bias) v += bias[j]!;
        if (activation) v = activation(v, 0);
        out[outBase + row + j] = store(v);
      }
    }
  }
}

/** acc (m × n, row-major) += op(A) · op(B) for one batch entry. */
function gemmBlocked(
  a: ArrayLike<number>,
  aBase: number,
  transA: boolean,
  b: ArrayLike<number>,
  bBase: number,
  transB: boolean,
  m: number,
  n: number,
  k: number,
  acc: Float64Array,
  packA: Float64Array,
  packB: Float64Array,
): void {
  // Element (i, p) of op(A) is at aBase + i·aRow + p·aCol; (p, j) of op(B) at bBase + p·bRow + j·bCol.
  const aRow = transA ? 1 : k;
  const aCol = transA ? m : 1;
  const bRow = transB ? 1 : n;
  const bCol = transB ? k : 1;
  for (let jc = 0; jc < n; jc += NC) {
    const nc = Math.min(NC, n - jc);
    for (let pc = 0; pc < k; pc += KC) {
      const kc = Math.min(KC, k - pc);
      packPanels(b, bBase + pc * bRow + jc * bCol, bCol, bRow, nc, kc, NR, packB);
      for (let ic = 0; ic < m; ic += MC) {
        const mc = Math.min(MC, m - ic);
        packPanels(a, aBase + ic * aRow + pc * aCol, aRow, aCol, mc, kc, MR, packA);
        for (let jr = 0; jr < nc; jr += NR) {
          for (let ir = 0; ir < mc; ir += MR) {
            microKernel(packA, ir * kc, packB, jr * kc, kc, acc, (ic + ir) * n + jc + jr, n, Math.min(MR, mc - ir), Math.min(NR, nc - jr));
          }
        }
      }
    }
  }
}

/**
 * Packs `rows` × `depth` elements (row r, depth p at src[base + r·rowStride + p·depthStride])
 * into panels of `width` rows: panel q holds, for each p, rows q·width .. q·width+width-1
 * side by side. Rows past `rows` are zero.
 */
function packPanels(
  src: ArrayLike<number>,
  base: number,
  rowStride: number,
  depthStride: number,
  rows: number,
  depth: number,
  width: number,
  dst: Float64Array,
): void {
  let o = 0;
  for (let r0 = 0; r0 < rows; r0 += width) {
    const live = Math.min(width, rows - r0);
    for (let p = 0; p < depth; p++) {
      const at = base + r0 * rowStride + p * depthStride;
      let w = 0;
      for (; w < live; w++) dst[o + w] = src[at + w * rowStride]!;
      for (; w < width; w++) dst[o + w] = 0;
      o += width;
    }
  }
}

/** acc[4 × 4 tile at `cOff`, row stride `ldc`] += Apanel · Bpanel over `kc`; only `mr` × `nr` is stored. */
function microKernel(
  pa: Float64Array,
  aOff: number,
  pb: Float64Array,
  bOff: number,
  kc: number,
  acc: Float64Array,
  cOff: number,
  ldc: number,
  mr: number,
  nr: number,
): void {
  let c00 = 0, c01 = 0, c02 = 0, c03 = 0;
  let c10 = 0, c11 = 0, c12 = 0, c13 = 0;
  let c20 = 0, c21 = 0, c22 = 0, c23 = 0;
  let c30 = 0, c31 = 0, c32 = 0, c33 = 0;
  let ai = aOff;
  let bi = bOff;
  for (let p = 0; p < kc; p++, ai += MR, bi += NR) {
    const a0 = pa[ai]!, a1 = pa[ai + 1]!, a2 = pa[ai + 2]!, a3 = pa[ai + 3]!;
    const b0 = pb[bi]!, b1 = pb[bi + 1]!, b2 = pb[bi + 2]!, b3 = pb[bi + 3]!;
    c00 += a0 * b0; c01 += a0 * b1; c02 += a0 * b2; c03 += a0 * b3;
    c10 += a1 * b0; c11 += a1 * b1; c12 += a1 * b2; c13 += a1 * b3;
    c20 += a2 * b0; c21 += a2 * b1; c22 += a2 * b2; c23 += a2 * b3;
    c30 += a3 * b0; c31 += a3 * b1; c32 += a3 * b2; c33 += a3 * b3;
  }
  if (mr === MR && nr === NR) {
    let o = cOff;
    acc[o] += c00; acc[o + 1] += c01; acc[o + 2] += c02; acc[o + 3] += c03;
    o += ldc;
    acc[o] += c10; acc[o + 1] += c11; acc[o + 2] += c12; acc[o + 3] += c13;
    o += ldc;
    acc[o] += c20; acc[o + 1] += c21; acc[o + 2] += c22; acc[o + 3] += c23;
    o += ldc;
    acc[o] += c30; acc[o + 1] += c31; acc[o + 2] += c32; acc[o + 3] += c33;
    return;
  }
  const tile = [c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33];
  for (let r = 0; r < mr; r++) {
    for (let s = 0; s < nr; s++) acc[cOff + r * ldc + s] += tile[r * NR + s]!;
  }
}

/** The view's values as numbers: f32 as is, 16-bit patterns decoded (exactly) once. */
function widen(data: ArrayLike<number>, dtype: DType): ArrayLike<number> {
  switch (dtype) {
    case 'f32':
      return data;
    case 'f16':
      return decode(data, f16BitsToF32);
    case 'bf16':
      return decode(data, bf16BitsToF32);
    case 'i32':
      throw new TypeError('matmul has no i32 kernel; the front-end refuses i32 operands');
  }
}

function decode(bits: ArrayLike<number>, f: (h: number) => number): Float32Array {
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = f(bits[i]!);
  return out;
}

/** Number → stored element: f32 rounds on assignment into a Float32Array; 16-bit formats round to nearest even. */
function storeFunction(dtype: DType): (v: number) => number {
  switch (dtype) {
    case 'f32':
      return (v) => v;
    case 'f16':
      return f32ToF16Bits;
    case 'bf16':
      return f32ToBf16Bits;
    case 'i32':
      throw new TypeError('matmul has no i32 kernel; the front-end refuses i32 operands');
  }
}
