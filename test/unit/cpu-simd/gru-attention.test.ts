/**
 * The GRU recurrence (batched sgemm + gru_step per step) and attention (tiled online softmax, and
 * for f32 the route by products: on the SIMD sgemm, and on the BLAS where one is installed)
 * against the JS backend's float64 implementations, within each dtype's tolerance: biases present
 * or not, layer norm, a ring of two slots, odd hidden sizes; causal masks with Sq ≠ Sk, GQA, key
 * lengths including 0 (a row that sees no key: 0 and a log-sum-exp of -inf), head dims up to 256,
 * and for the products route blocks over several chunks of scores.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { dtypeSize, type DType } from '../../../src/compute/core/dtype.js';
import { attention as jsAttention } from '../../../src/compute/cpu/attention.js';
import { gruRecurrence as jsGru } from '../../../src/compute/cpu/gru.js';
import { cpuMatmul } from '../../../src/compute/cpu/matmul.js';
import { Blas } from '../../../src/blas/blas.js';
import { ProductEngine } from '../../../src/compute/cpu/product-engine.js';
import { attention, type SimdAttention } from '../../../src/compute/cpu/simd/attention.js';
import { attentionByProducts } from '../../../src/compute/cpu/simd/attention-products.js';
import { gruRecurrence } from '../../../src/compute/cpu/simd/gru.js';
import { blasAvailable } from '../blas/blas-available.js';
import { FLOAT_DTYPES, MANY_THREADS, TOLERANCE, type AttentionCase, alloc, cpuBytes, cpuElements, cpuView, decode, encode, freshSeed, get, put, randomValues, relError, runtime } from './helpers.js';

const rt = runtime(MANY_THREADS);
afterAll(() => rt.dispose());

/** GRU results accumulate T steps of f32 rounding against the reference's f64. */
const GRU_BOUND: Record<'f32' | 'f16' | 'bf16', number> = { f32: 5e-5, f16: 3e-3, bf16: 2e-2 };

interface GruCase {
  E: number;
  B: number;
  T: number;
  H: number;
  slots?: number;
  biases?: boolean;
  layerNorm?: boolean;
}

function checkGru(dtype: 'f32' | 'f16' | 'bf16', c: GruCase): void {
  const seed = freshSeed();
  const { E, B, T, H } = c;
  const slots = c.slots ?? T;
  const size = dtypeSize[dtype];
  const scale = 1 / Math.sqrt(H);
  const gx = encode(randomValues(E * B * T * 3 * H, seed), dtype);
  const w = encode(randomValues(E * 3 * H * H, seed + 1, scale), dtype);
  const bih = encode(randomValues(E * 3 * H, seed + 2, 0.3), dtype);
  const bhh = encode(randomValues(E * 3 * H, seed + 3, 0.3), dtype);
  const h0 = encode(randomValues(E * B * H, seed + 4, 0.5), dtype);
  const gamma = encode(randomValues(E * H, seed + 5, 0.2).map((v) => v + 1), dtype);
  const beta = encode(randomValues(E * H, seed + 6, 0.2), dtype);
  const gxStrides = [B * T * 3 * H, T * 3 * H, 3 * H] as const;
  const seqStrides = [B * slots * H, slots * H, H] as const;
  const hSeq = alloc(rt, E * B * slots * H * size);
  const hN = alloc(rt, E * B * H * size);
  gruRecurrence(rt, {
    dtype,
    gx: put(rt, gx),
    gxStrides,
    wHh: put(rt, w),
    ...(c.biases ? { bIh: put(rt, bih), bHh: put(rt, bhh) } : {}),
    h0: put(rt, h0),
    hSeq,
    seqStrides,
    slots,
    hN,
    ...(c.layerNorm ? { layerNorm: { gamma: put(rt, gamma), beta: put(rt, beta), eps: 1e-5 } } : {}),
    ensemble: E,
    batch: B,
    steps: T,
    hidden: H,
  });
  const refSeq = cpuView(E * B * slots * H * size, dtype, [E, B, slots, H]);
  const refN = cpuView(E * B * H * size, dtype, [E, B, H]);
  jsGru({
    gx: cpuView(gx, dtype, [E, B, T, 3 * H]),
    gxStrides,
    wHh: cpuView(w, dtype, [E, 3 * H, H]),
    ...(c.biases ? { bIh: cpuView(bih, dtype, [E, 3 * H]), bHh: cpuView(bhh, dtype, [E, 3 * H]) } : {}),
    h0: cpuView(h0, dtype, [E, B, H]),
    hSeq: refSeq,
    seqStrides,
    slots,
    hN: refN,
    ...(c.layerNorm ? { layerNorm: { gamma: cpuView(gamma, dtype, [E, H]), beta: cpuView(beta, dtype, [E, H]), eps: 1e-5 } } : {}),
    ensemble: E,
    batch: B,
    steps: T,
    hidden: H,
    precision: 'highest',
    path: 'auto',
  }, (product) => cpuMatmul(product, { elements: cpuElements }));
  const label = `${JSON.stringify(c)} seed ${seed}`;
  expect(relError(decode(get(rt, hSeq, E * B * slots * H * size), dtype), decode(cpuBytes(refSeq), dtype)), label).toBeLessThanOrEqual(GRU_BOUND[dtype]);
  expect(relError(decode(get(rt, hN, E * B * H * size), dtype), decode(cpuBytes(refN), dtype)), label).toBeLessThanOrEqual(GRU_BOUND[dtype]);
}

describe.each(FLOAT_DTYPES)('GRU recurrence %s', (dtype) => {
  it('one member, no biases', () => checkGru(dtype, { E: 1, B: 3, T: 5, H: 16 }));
  it('an ensemble with biases and an odd hidden size', () => checkGru(dtype, { E: 2, B: 5, T: 4, H: 13, biases: true }));
  it('a ring of two slots', () => checkGru(dtype, { E: 2, B: 3, T: 6, H: 9, slots: 2, biases: true }));
  it('layer norm of every state', () => checkGru(dtype, { E: 2, B: 4, T: 3, H: 24, biases: true, layerNorm: true }));
  it('a batch large enough to split across threads', () => checkGru(dtype, { E: 1, B: 96, T: 3, H: 257, biases: true }));
});

/** How an attention forward runs: the tiled kernel, or as products on the SIMD sgemm or the BLAS. */
type AttentionRoute = 'kernel' | 'sgemm' | 'blas';

function run(route: AttentionRoute, p: SimdAttention): void {
  if (route === 'kernel') return attention(rt, p);
  const engine = new ProductEngine(rt, route === 'blas' ? Blas.open() : undefined);
  attentionByProducts(rt, p, (g) => engine.gemm(g));
}

function checkAttention(dtype: DType, c: AttentionCase, route: AttentionRoute = 'kernel'): void {
  const seed = freshSeed();
  const { B, Hq, Hkv, Sq, Sk, D } = c;
  const size = dtypeSize[dtype];
  const q = encode(randomValues(B * Hq * Sq * D, seed), dtype);
  const k = encode(randomValues(B * Hkv * Sk * D, seed + 1), dtype);
  const v = encode(randomValues(B * Hkv * Sk * D, seed + 2), dtype);
  const lengths = c.lengths ? new Uint8Array(Int32Array.from(c.lengths).buffer) : undefined;
  const out = alloc(rt, B * Hq * Sq * D * size);
  const lse = alloc(rt, B * Hq * Sq * 4);
  const scale = 1 / Math.sqrt(D);
  const causal = c.causal ?? false;
  run(route, {
    dtype, q: put(rt, q), k: put(rt, k), v: put(rt, v), out, lse, ...(lengths ? { keyLengths: put(rt, lengths) } : {}),
    batch: B, heads: Hq, kvHeads: Hkv, seqQ: Sq, seqK: Sk, headDim: D, scale, causal,
  });
  const refOut = cpuView(B * Hq * Sq * D * size, dtype, [B, Hq, Sq, D]);
  const refLse = cpuView(B * Hq * Sq * 4, 'f32', [B, Hq, Sq]);
  jsAttention({
    q: cpuView(q, dtype, [B, Hq, Sq, D]), k: cpuView(k, dtype, [B, Hkv, Sk, D]), v: cpuView(v, dtype, [B, Hkv, Sk, D]),
    out: refOut, lse: refLse, ...(lengths ? { keyLengths: cpuView(lengths, 'i32', [B]) } : {}),
    batch: B, heads: Hq, kvHeads: Hkv, seqQ: Sq, seqK: Sk, headDim: D, scale, causal,
  });
  const label = `${route} ${JSON.stringify(c)} seed ${seed}`;
  expect(relError(decode(get(rt, out, B * Hq * Sq * D * size), dtype), decode(cpuBytes(refOut), dtype)), label).toBeLessThanOrEqual(TOLERANCE[dtype as 'f32']);
  expect(relError(decode(get(rt, lse, B * Hq * Sq * 4), 'f32'), decode(cpuBytes(refLse), 'f32')), label).toBeLessThanOrEqual(1e-5);
}

describe.each(FLOAT_DTYPES)('attention %s', (dtype) => {
  it('plain, one block', () => checkAttention(dtype, { B: 1, Hq: 1, Hkv: 1, Sq: 5, Sk: 7, D: 8 }));
  it('several blocks, odd head dim', () => checkAttention(dtype, { B: 2, Hq: 2, Hkv: 2, Sq: 37, Sk: 131, D: 13 }));
  it('causal with Sq < Sk', () => checkAttention(dtype, { B: 1, Hq: 2, Hkv: 2, Sq: 40, Sk: 100, D: 16, causal: true }));
  it('causal with Sq > Sk', () => checkAttention(dtype, { B: 1, Hq: 1, Hkv: 1, Sq: 90, Sk: 70, D: 32, causal: true }));
  it('grouped-query heads', () => checkAttention(dtype, { B: 2, Hq: 8, Hkv: 2, Sq: 17, Sk: 65, D: 64 }));
  it('key lengths, one of them 0, with causal', () => checkAttention(dtype, { B: 3, Hq: 2, Hkv: 1, Sq: 20, Sk: 50, D: 24, causal: true, lengths: [0, 33, 99] }));
  it('head dim 256', () => checkAttention(dtype, { B: 1, Hq: 2, Hkv: 1, Sq: 19, Sk: 80, D: 256 }));
  it('enough work to split across threads', () => checkAttention(dtype, { B: 2, Hq: 4, Hkv: 4, Sq: 128, Sk: 128, D: 64, causal: true }));
});

const PRODUCT_ROUTES: AttentionRoute[] = blasAvailable ? ['sgemm', 'blas'] : ['sgemm'];

describe.each(PRODUCT_ROUTES)('attention f32 as products on the %s', (route) => {
  const check = (c: AttentionCase) => checkAttention('f32', c, route);
  it('plain, odd sizes', () => check({ B: 2, Hq: 2, Hkv: 2, Sq: 37, Sk: 131, D: 13 }));
  it('one query row (decode) against many keys', () => check({ B: 2, Hq: 4, Hkv: 2, Sq: 1, Sk: 300, D: 64 }));
  it('causal with Sq < Sk and Sq > Sk, over several blocks of rows', () => {
    check({ B: 1, Hq: 2, Hkv: 2, Sq: 300, Sk: 500, D: 16, causal: true });
    check({ B: 1, Hq: 1, Hkv: 1, Sq: 290, Sk: 70, D: 32, causal: true });
  });
  it('grouped-query heads', () => check({ B: 2, Hq: 8, Hkv: 2, Sq: 17, Sk: 65, D: 64 }));
  it('key lengths, one of them 0 and one beyond Sk, with and without causal', () => {
    check({ B: 3, Hq: 2, Hkv: 1, Sq: 20, Sk: 50, D: 24, causal: true, lengths: [0, 33, 99] });
    check({ B: 3, Hq: 2, Hkv: 1, Sq: 20, Sk: 50, D: 24, lengths: [7, 0, 50] });
  });
  it('no keys at all', () => check({ B: 1, Hq: 2, Hkv: 2, Sq: 5, Sk: 0, D: 8 }));
  it('head dim 256', () => check({ B: 1, Hq: 2, Hkv: 1, Sq: 19, Sk: 80, D: 256 }));
  it('scores beyond one chunk (8 MiB), so blocks are flushed in several', () => check({ B: 1, Hq: 3, Hkv: 1, Sq: 1100, Sk: 1100, D: 8 }));
  it('a NaN in a key makes the rows that see it NaN, and only those (causal)', () => {
    const D = 4;
    const q = put(rt, encode(randomValues(6 * D, 1), 'f32'));
    const keys = randomValues(6 * D, 2);
    keys[3 * D] = Number.NaN;
    const k = put(rt, encode(keys, 'f32'));
    const v = put(rt, encode(randomValues(6 * D, 3), 'f32'));
    const out = alloc(rt, 6 * D * 4);
    run(route, { dtype: 'f32', q, k, v, out, batch: 1, heads: 1, kvHeads: 1, seqQ: 6, seqK: 6, headDim: D, scale: 0.5, causal: true });
    const got = decode(get(rt, out, 6 * D * 4), 'f32');
    const nanRows = [0, 1, 2, 3, 4, 5].filter((r) => got.slice(r * D, (r + 1) * D).some(Number.isNaN));
    expect(nanRows).toEqual([3, 4, 5]);
  });
  it('refuses a 16-bit dtype (the BLAS is f32)', () => {
    expect(() => attentionByProducts(rt, { dtype: 'bf16', q: 0, k: 0, v: 0, out: 0, batch: 1, heads: 1, kvHeads: 1, seqQ: 1, seqK: 1, headDim: 8, scale: 1, causal: false }, () => undefined)).toThrow(RangeError);
  });
});

describe('limits', () => {
  it('refuses head dims beyond 256 rather than overrun its scratch', () => {
    expect(() =>
      attention(rt, { dtype: 'f32', q: 0, k: 0, v: 0, out: 0, batch: 1, heads: 1, kvHeads: 1, seqQ: 1, seqK: 1, headDim: 257, scale: 1, causal: false }),
    ).toThrow(RangeError);
  });
});
