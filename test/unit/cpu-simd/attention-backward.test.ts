/**
 * The f32 attention backward by products (`attention-backward-products.ts`), on the SIMD sgemm and
 * on the BLAS where one is installed, against
 * the host's float64 gradients (`attentionGradients`) of the same forward: several blocks of query
 * rows, causal with Sq < Sk and Sq > Sk, GQA (dk and dv gather the heads that share them), key
 * lengths 0 and beyond Sk, odd head dims. Gradient buffers start as garbage, so dk and dv must be
 * cleared and a row that saw no key must get a dq of 0.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Blas } from '../../../src/blas/blas.js';
import { attentionGradients } from '../../../src/compute/cpu/attention-backward.js';
import { ProductEngine } from '../../../src/compute/cpu/product-engine.js';
import { attention } from '../../../src/compute/cpu/simd/attention.js';
import { attentionBackwardByProducts } from '../../../src/compute/cpu/simd/attention-backward-products.js';
import { blasAvailable } from '../blas/blas-available.js';
import { MANY_THREADS, alloc, type AttentionCase, decode, encode, freshSeed, get, put, randomValues, relError, runtime } from './helpers.js';

const rt = runtime(MANY_THREADS);
afterAll(() => rt.dispose());

function check(c: AttentionCase, engine: ProductEngine): void {
  const seed = freshSeed();
  const { B, Hq, Hkv, Sq, Sk, D } = c;
  const causal = c.causal ?? false;
  const scale = 1 / Math.sqrt(D);
  const qValues = randomValues(B * Hq * Sq * D, seed);
  const kValues = randomValues(B * Hkv * Sk * D, seed + 1);
  const vValues = randomValues(B * Hkv * Sk * D, seed + 2);
  const dOutValues = randomValues(B * Hq * Sq * D, seed + 3);
  const [q, k, v, dOut] = [qValues, kValues, vValues, dOutValues].map((x) => put(rt, encode(x, 'f32')));
  const keyLengths = c.lengths ? put(rt, new Uint8Array(Int32Array.from(c.lengths).buffer)) : undefined;
  const shape = { batch: B, heads: Hq, kvHeads: Hkv, seqQ: Sq, seqK: Sk, headDim: D, scale, causal };
  const out = alloc(rt, B * Hq * Sq * D * 4);
  const lse = alloc(rt, B * Hq * Sq * 4);
  attention(rt, { dtype: 'f32', q: q!, k: k!, v: v!, out, lse, ...(keyLengths ? { keyLengths } : {}), ...shape });
  const outValues = decode(get(rt, out, B * Hq * Sq * D * 4), 'f32');
  const lseValues = decode(get(rt, lse, B * Hq * Sq * 4), 'f32');

  const dq = alloc(rt, B * Hq * Sq * D * 4);
  const dk = alloc(rt, B * Hkv * Sk * D * 4);
  const dv = alloc(rt, B * Hkv * Sk * D * 4);
  attentionBackwardByProducts(rt, { q: q!, k: k!, v: v!, out, lse, dOut: dOut!, dq, dk, dv, ...(keyLengths ? { keyLengths } : {}), ...shape }, (g) => engine.gemm(g));
  const want = attentionGradients({ q: qValues, k: kValues, v: vValues, out: outValues, lse: lseValues, dOut: dOutValues, ...(c.lengths ? { keyLengths: c.lengths } : {}), ...shape });
  const label = `${JSON.stringify(c)} seed ${seed}`;
  const grads = { dq: [dq, want.dq], dk: [dk, want.dk], dv: [dv, want.dv] } as const;
  for (const [name, [at, ref]] of Object.entries(grads)) {
    const got = decode(get(rt, at, ref.length * 4), 'f32');
    expect(got.every(Number.isFinite), `${name} ${label}`).toBe(true);
    expect(relError(got, ref), `${name} ${label}`).toBeLessThanOrEqual(2e-5);
    // Where the reference is exactly 0 (a row that saw no key, a padded key), so is the result.
    expect(Array.from(got).filter((x, i) => ref[i] === 0 && x !== 0), `${name} ${label}`).toEqual([]);
  }
}

const ENGINES: [string, () => ProductEngine][] = [
  ['the SIMD sgemm', () => new ProductEngine(rt, undefined)],
  ...(blasAvailable ? [['the BLAS', () => new ProductEngine(rt, Blas.open())] as [string, () => ProductEngine]] : []),
];

describe.each(ENGINES)(`attention backward by products on %s`, (_, engine) => {
  const run = (c: AttentionCase) => check(c, engine());
  it('plain, odd sizes', () => run({ B: 2, Hq: 2, Hkv: 2, Sq: 37, Sk: 53, D: 13 }));
  it('several blocks of query rows, causal with Sq < Sk and Sq > Sk', () => {
    run({ B: 1, Hq: 2, Hkv: 2, Sq: 300, Sk: 400, D: 16, causal: true });
    run({ B: 1, Hq: 1, Hkv: 1, Sq: 290, Sk: 70, D: 32, causal: true });
  });
  it('grouped-query heads gather into their k/v head', () => run({ B: 2, Hq: 6, Hkv: 2, Sq: 17, Sk: 65, D: 64 }));
  it('key lengths 0 and beyond Sk, with and without causal', () => {
    run({ B: 3, Hq: 2, Hkv: 1, Sq: 20, Sk: 50, D: 24, causal: true, lengths: [0, 33, 99] });
    run({ B: 2, Hq: 2, Hkv: 2, Sq: 9, Sk: 30, D: 8, lengths: [7, 0] });
  });
  it('one query row against many keys', () => run({ B: 2, Hq: 4, Hkv: 1, Sq: 1, Sk: 300, D: 64 }));
});
