import { beforeAll, describe, expect, it } from 'vitest';
import { Blas } from '../../../src/blas/blas.js';
import type { SgemmArgs } from '../../../src/blas/sgemm.js';
import { sharedWasmMemory, type SharedWasmMemory } from '../ffi/shared-wasm-memory.js';
import { blasAvailable, needsBlas } from './blas-available.js';

type Memory = 'array' | 'shared' | 'wasm';

interface Case {
  transA: boolean;
  transB: boolean;
  m: number;
  n: number;
  k: number;
  alpha?: number;
  beta?: number;
  /** Extra elements per stored row beyond the row length (the leading dimension's slack). */
  padA?: number;
  padB?: number;
  padC?: number;
  /** Elements before each matrix in its array. */
  aOffset?: number;
  bOffset?: number;
  cOffset?: number;
  memory?: Memory;
}

const SENTINEL = 1234.5;
let wasmMemory: SharedWasmMemory;
let wasmUsed = 0;

/** A Float32Array of `length` elements in the given kind of memory, starting at a deliberately odd byte offset. */
function allocate(memory: Memory, length: number): Float32Array {
  if (memory === 'array') return new Float32Array(length);
  if (memory === 'shared') return new Float32Array(new SharedArrayBuffer(4 * length + 12), 12, length);
  // Bump allocation through one shared WebAssembly memory, as the CPU backend's tensors will live.
  const byteOffset = 4 * (wasmUsed + 3);
  wasmUsed += length + 5;
  const needed = 4 * wasmUsed - wasmMemory.buffer.byteLength;
  if (needed > 0) wasmMemory.grow(Math.ceil(needed / 65536));
  return new Float32Array(wasmMemory.buffer, byteOffset, length);
}

function random(array: Float32Array): Float32Array {
  for (let i = 0; i < array.length; i++) array[i] = Math.random() * 2 - 1;
  return array;
}

/**
 * Runs one product on fresh random inputs and checks every element of C against a float64
 * reference, within 2(k+3)·2⁻²⁴ of the sum of the magnitudes that make it up, and that nothing
 * outside C's elements (the row gaps of ldc, the guards around C) was written.
 */
function check(blas: Blas, c: Case): void {
  const { transA, transB, m, n, k } = c;
  const alpha = c.alpha ?? 1;
  const beta = c.beta ?? 0;
  const memory = c.memory ?? 'array';
  const [aRows, aCols] = transA ? [k, m] : [m, k];
  const [bRows, bCols] = transB ? [n, k] : [k, n];
  const lda = Math.max(1, aCols + (c.padA ?? 0));
  const ldb = Math.max(1, bCols + (c.padB ?? 0));
  const ldc = Math.max(1, n + (c.padC ?? 0));
  const aOffset = c.aOffset ?? 0;
  const bOffset = c.bOffset ?? 0;
  const cOffset = c.cOffset ?? 0;
  const a = random(allocate(memory, aOffset + aRows * lda + 3));
  const b = random(allocate(memory, bOffset + bRows * ldb + 3));
  const out = allocate(memory, cOffset + m * ldc + 3).fill(SENTINEL);
  const c0 = new Float64Array(m * n);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      // beta = 0 must not read C: NaN there must not reach the result.
      const v = beta === 0 ? NaN : Math.random() * 2 - 1;
      out[cOffset + i * ldc + j] = v;
      c0[i * n + j] = Math.fround(v);
    }
  }
  const before = out.slice();
  const at = (x: Float32Array, off: number, ld: number, r: number, col: number) => x[off + r * ld + col]!;
  const opA = (i: number, l: number) => (transA ? at(a, aOffset, lda, l, i) : at(a, aOffset, lda, i, l));
  const opB = (l: number, j: number) => (transB ? at(b, bOffset, ldb, j, l) : at(b, bOffset, ldb, l, j));

  const args: SgemmArgs = { transA, transB, m, n, k, alpha, beta, a, lda, b, ldb, c: out, ldc };
  if (aOffset) args.aOffset = aOffset;
  if (bOffset) args.bOffset = bOffset;
  if (cOffset) args.cOffset = cOffset;
  blas.sgemm(args);

  const label = JSON.stringify({ ...c, lda, ldb, ldc });
  const u = 2 ** -24;
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let sum = 0;
      let magnitude = 0;
      for (let l = 0; l < k; l++) {
        const p = opA(i, l) * opB(l, j);
        sum += p;
        magnitude += Math.abs(p);
      }
      const prior = beta === 0 ? 0 : beta * c0[i * n + j]!;
      const want = alpha * sum + prior;
      const bound = 2 * (k + 3) * u * (Math.abs(alpha) * magnitude + Math.abs(prior)) + 1e-30;
      const got = out[cOffset + i * ldc + j]!;
      if (!(Math.abs(got - want) <= bound)) {
        expect.fail(`${label}: C[${i}][${j}] = ${got}, want ${want} (±${bound})`);
      }
    }
  }
  for (let x = 0; x < out.length; x++) {
    const inC = x >= cOffset && x < cOffset + m * ldc && (x - cOffset) % ldc < n;
    if (!inC && !Object.is(out[x], before[x])) expect.fail(`${label}: element ${x} outside C was written (${before[x]} → ${out[x]})`);
  }
}

const TRANSPOSES = [
  [false, false],
  [false, true],
  [true, false],
  [true, true],
] as const;

describe.skipIf(!blasAvailable)(`Blas.sgemm against a float64 reference${needsBlas}`, () => {
  let blas: Blas;
  beforeAll(() => {
    blas = Blas.open();
    wasmMemory = sharedWasmMemory(1, 1024);
  });

  it.each(TRANSPOSES)('odd sizes, transA %s transB %s', (transA, transB) => {
    const sizes = [
      [1, 1, 1],
      [7, 33, 129],
      [129, 7, 33],
      [33, 129, 7],
      [64, 64, 64],
      [2, 3, 1],
      [201, 157, 263],
    ];
    for (const [m, n, k] of sizes) check(blas, { transA, transB, m: m!, n: n!, k: k! });
  });

  it.each(TRANSPOSES)('alpha and beta, transA %s transB %s', (transA, transB) => {
    for (const [alpha, beta] of [
      [2.5, 0],
      [-0.75, 1],
      [1, -1.5],
      [0, 0.5],
      [0.5, 3],
    ]) {
      check(blas, { transA, transB, m: 33, n: 7, k: 129, alpha: alpha!, beta: beta! });
    }
  });

  it.each(TRANSPOSES)('leading dimensions beyond the row length and offsets into shared memory, transA %s transB %s', (transA, transB) => {
    for (const memory of ['array', 'shared', 'wasm'] as const) {
      const layout = { padA: 5, padB: 3, padC: 7, aOffset: 11, bOffset: 1, cOffset: 29, memory };
      check(blas, { transA, transB, m: 33, n: 129, k: 7, beta: 0.5, ...layout });
      check(blas, { transA, transB, m: 129, n: 33, k: 65, alpha: -2, ...layout });
    }
  });

  it.each(TRANSPOSES)('vector shapes (one row of op(A) or one column of op(B)), transA %s transB %s', (transA, transB) => {
    for (const [m, n, k] of [
      [1, 129, 33],
      [1, 1, 257],
      [33, 1, 129],
      [1, 7, 1],
      [5, 1, 1],
      [1, 1000, 300],
      [300, 1, 1000],
    ]) {
      check(blas, { transA, transB, m: m!, n: n!, k: k! });
      check(blas, { transA, transB, m: m!, n: n!, k: k!, alpha: 0.5, beta: -1, padA: 3, padB: 5, padC: 2, aOffset: 4, cOffset: 9, memory: 'wasm' });
    }
  });

  it('k = 0 scales C by beta (beta 0 clears it, NaN included)', () => {
    for (const [transA, transB] of TRANSPOSES) {
      check(blas, { transA, transB, m: 7, n: 5, k: 0, beta: 0.5 });
      check(blas, { transA, transB, m: 1, n: 5, k: 0, beta: 0 });
      check(blas, { transA, transB, m: 7, n: 1, k: 0, beta: -2, padC: 3 });
    }
  });

  it('an empty C (m or n = 0) touches nothing', () => {
    for (const [transA, transB] of TRANSPOSES) {
      check(blas, { transA, transB, m: 0, n: 5, k: 3, beta: 1 });
      check(blas, { transA, transB, m: 4, n: 0, k: 3 });
      check(blas, { transA, transB, m: 0, n: 0, k: 0 });
    }
  });

  it('defaults to tight leading dimensions, alpha 1 and beta 0', () => {
    const a = new Float32Array([1, 2, 3, 4, 5, 6]); // 2×3
    const b = new Float32Array([7, 8, 9, 10, 11, 12]); // 3×2
    const c = new Float32Array(4).fill(NaN);
    blas.sgemm({ m: 2, n: 2, k: 3, a, b, c });
    expect([...c]).toEqual([58, 64, 139, 154]);
  });

  it('takes inputs and output side by side in one shared buffer', () => {
    const shared = new Float32Array(new SharedArrayBuffer(4 * 47));
    const [a, b, c] = [shared.subarray(0, 15), shared.subarray(15, 35), shared.subarray(35, 47)];
    a.set(Array.from({ length: 15 }, (_, i) => i - 7));
    b.set(Array.from({ length: 20 }, (_, i) => (i % 3) - 1));
    blas.sgemm({ m: 3, n: 4, k: 5, a, b, c });
    const want = Array.from({ length: 12 }, (_, x) => {
      let sum = 0;
      for (let l = 0; l < 5; l++) sum += a[Math.floor(x / 4) * 5 + l]! * b[l * 4 + (x % 4)]!;
      return sum;
    });
    expect([...c]).toEqual(want);
  });

  it('gives the same results with 1 thread and with 2 on a product large enough to split', () => {
    const initial = blas.threads;
    try {
      for (const threads of [1, 2]) {
        blas.setThreads(threads);
        check(blas, { transA: false, transB: true, m: 256, n: 384, k: 320, alpha: 1.5, beta: 0.25, memory: 'shared' });
      }
    } finally {
      if (initial !== null) blas.setThreads(initial);
    }
  });
});
