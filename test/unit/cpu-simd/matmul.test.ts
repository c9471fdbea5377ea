/**
 * sgemm against the JS backend's matmul (f64 accumulation, one rounding): transposes, depths
 * below and above one packed slice (KC = 256), odd sizes, batches with a broadcast operand, the
 * whole epilogue (alpha, beta·C, bias, each activation), f16/bf16 operands and outputs, and
 * row strides other than dense. Norm-wise bounds: 1e-5 for f32 outputs, the dtype's otherwise.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { dtypeSize, type DType } from '../../../src/compute/core/dtype.js';
import { MATMUL_ACTIVATIONS, type MatmulActivation, type MatmulParams } from '../../../src/compute/core/matmul-plan.js';
import { cpuMatmul, type HostMatmulIO } from '../../../src/compute/cpu/matmul.js';
import type { CpuBuffer } from '../../../src/compute/cpu/cpu-buffer.js';
import { gemm } from '../../../src/compute/cpu/simd/matmul.js';
import { MANY_THREADS, TOLERANCE, alloc, cpuBytes, cpuView, decode, encode, freshSeed, get, put, randomValues, relError, runtime } from './helpers.js';

const rt = runtime(MANY_THREADS);
afterAll(() => rt.dispose());

/** The CPU backend's storage of a view, as its matmul wants it. */
const io: HostMatmulIO = {
  elements(view) {
    const b = view.buffer as CpuBuffer;
    const end = view.offset + view.size;
    return view.dtype === 'f32' ? b.f32.subarray(view.offset, end) : b.u16.subarray(view.offset, end);
  },
};

interface Case {
  m: number;
  n: number;
  k: number;
  batch?: number;
  transA?: boolean;
  transB?: boolean;
  broadcastB?: boolean;
  c?: boolean;
  bias?: boolean;
  alpha?: number;
  beta?: number;
  activation?: MatmulActivation;
  types?: [DType, DType, DType];
}

function check(t: Case): void {
  const seed = freshSeed();
  const { m, n, k, transA = false, transB = false, alpha = 1, beta = 0 } = t;
  const batch = t.batch ?? 1;
  const [aType, bType, outType] = t.types ?? ['f32', 'f32', 'f32'];
  const bCount = t.broadcastB ? 1 : batch;
  const aBytes = encode(randomValues(batch * m * k, seed), aType);
  const bBytes = encode(randomValues(bCount * k * n, seed + 1), bType);
  const cBytes = encode(randomValues(batch * m * n, seed + 2), outType);
  const biasBytes = encode(randomValues(n, seed + 3), outType);
  const out = alloc(rt, batch * m * n * dtypeSize[outType]);
  gemm(rt, {
    a: put(rt, aBytes),
    aType,
    b: put(rt, bBytes),
    bType,
    out,
    outType,
    ...(t.c ? { c: put(rt, cBytes), cType: outType } : {}),
    ...(t.bias ? { bias: put(rt, biasBytes), biasType: outType } : {}),
    m,
    n,
    k,
    batch,
    transA,
    transB,
    alpha,
    beta,
    ...(t.activation ? { activation: t.activation } : {}),
    aBatchStride: m * k,
    bBatchStride: t.broadcastB ? 0 : k * n,
    cBatchStride: m * n,
  });
  const params: MatmulParams = {
    a: cpuView(aBytes, aType, [batch, m * k]),
    b: cpuView(bBytes, bType, [bCount, k * n]),
    out: cpuView(batch * m * n * dtypeSize[outType], outType, [batch, m, n]),
    ...(t.c ? { c: cpuView(cBytes, outType, [batch, m, n]) } : {}),
    ...(t.bias ? { bias: cpuView(biasBytes, outType, [n]) } : {}),
    m,
    n,
    k,
    batch,
    aBatchStride: m * k,
    bBatchStride: t.broadcastB ? 0 : k * n,
    cBatchStride: m * n,
    transA,
    transB,
    alpha,
    beta,
    ...(t.activation ? { activation: t.activation } : {}),
    precision: 'highest',
    engine: 'auto',
    autotune: false,
  };
  cpuMatmul(params, io);
  const got = decode(get(rt, out, batch * m * n * dtypeSize[outType]), outType);
  const ref = decode(cpuBytes(params.out), outType);
  const bound = outType === 'f32' ? 1e-5 : TOLERANCE[outType as 'f16' | 'bf16'];
  expect(relError(got, ref), `${JSON.stringify(t)} seed ${seed}`).toBeLessThanOrEqual(bound);
}

describe('sgemm', () => {
  const shapes: [number, number, number][] = [[1, 1, 1], [5, 7, 3], [4, 8, 16], [33, 17, 300], [64, 129, 513], [128, 96, 64]];
  for (const [m, n, k] of shapes) {
    for (const transA of [false, true]) {
      for (const transB of [false, true]) {
        it(`${m}x${n}x${k}${transA ? ' transA' : ''}${transB ? ' transB' : ''}`, () => check({ m, n, k, transA, transB }));
      }
    }
  }

  it('splits a large product across threads', () => check({ m: 300, n: 257, k: 301 }));
  it('batches, with B repeated by a stride of 0', () => check({ m: 9, n: 13, k: 290, batch: 4, broadcastB: true }));
  it('batches more entries than threads', () => check({ m: 31, n: 33, k: 70, batch: 7 }));
  it('alpha, beta·C and bias', () => check({ m: 23, n: 41, k: 37, c: true, bias: true, alpha: 0.5, beta: -1.25 }));
  it('ignores C when beta is 0', () => check({ m: 6, n: 10, k: 7, c: true, beta: 0 }));
  it('an empty depth gives beta·C + bias', () => check({ m: 5, n: 9, k: 0, c: true, bias: true, beta: 2 }));
  it.each(MATMUL_ACTIVATIONS)('fuses %s', (activation) => check({ m: 19, n: 45, k: 33, bias: true, activation }));

  for (const types of [['f16', 'f16', 'f16'], ['bf16', 'bf16', 'bf16'], ['f16', 'bf16', 'f32'], ['f32', 'f32', 'bf16']] as [DType, DType, DType][]) {
    it(`${types.join(' x ')} (within and beyond one depth slice)`, () => {
      check({ m: 17, n: 23, k: 100, types, c: true, beta: 1, bias: true });
      check({ m: 17, n: 23, k: 600, types, transA: true });
    });
  }

  it('reads operands with row strides other than dense', () => {
    const seed = freshSeed();
    const [m, n, k, lda, ldo] = [7, 9, 11, 16, 12];
    const a = randomValues(m * lda, seed);
    const b = randomValues(k * n, seed + 1);
    const out = alloc(rt, m * ldo * 4);
    gemm(rt, {
      a: put(rt, encode(a, 'f32')), aType: 'f32', b: put(rt, encode(b, 'f32')), bType: 'f32', out, outType: 'f32',
      m, n, k, batch: 1, transA: false, transB: false, alpha: 1, beta: 0, lda, ldo, aBatchStride: 0, bBatchStride: 0, cBatchStride: 0,
    });
    const got = decode(get(rt, out, m * ldo * 4), 'f32');
    const gotDense: number[] = [];
    const ref: number[] = [];
    const af = decode(encode(a, 'f32'), 'f32');
    const bf = decode(encode(b, 'f32'), 'f32');
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let s = 0;
        for (let p = 0; p < k; p++) s += af[i * lda + p]! * bf[p * n + j]!;
        ref.push(s);
        gotDense.push(got[i * ldo + j]!);
      }
    }
    expect(relError(gotDense, ref), `seed ${seed}`).toBeLessThanOrEqual(1e-6);
  });
});
