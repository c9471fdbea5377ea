/**
 * Gradient checks (see `gradcheck.ts`) of the elementwise ops: every binary op over every kind of
 * broadcast and with a number on either side, every unary op and activation, activationGrad in
 * dy, transpose and reshape; and the ops whose gradient is exact by definition (cast, copy,
 * dropout's mask, maximum's ties), checked element by element.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLAIN_UNARY_OPS, type UnaryOp } from '../../../src/compute/core/elementwise-ops.js';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { cpuCompute, freshSeed, randomValues, roundTo } from '../compute/helpers.js';
import { broadcastRef, derivativeRef, UNARY_REFERENCE } from '../compute/reference.js';
import { awayFromZero, gradcheck, product } from './gradcheck.js';

let g: GpuCompute;
beforeAll(async () => {
  g = await cpuCompute();
});
afterAll(() => g.dispose());

const BINARY = {
  add: (a: number, b: number) => a + b,
  sub: (a: number, b: number) => a - b,
  mul: (a: number, b: number) => a * b,
  div: (a: number, b: number) => a / b,
  maximum: (a: number, b: number) => Math.max(a, b),
  minimum: (a: number, b: number) => Math.min(a, b),
} as const;
type BinaryMethod = keyof typeof BINARY;

/** Shape pairs covering each broadcast: none, both sides, a missing leading dim, a scalar, inner ones, an empty output. */
const PAIRS: [number[], number[]][] = [
  [[3, 4], [3, 4]],
  [[3, 1], [1, 4]],
  [[2, 3, 4], [4]],
  [[5], [2, 1, 5]],
  [[], [3, 2]],
  [[2, 1, 3, 1], [4, 1, 2]],
  [[1, 1], [7]],
  [[0, 3], [3]],
];

function broadcastShape(a: number[], b: number[]): number[] {
  const rank = Math.max(a.length, b.length);
  return Array.from({ length: rank }, (_, i) => {
    const da = a[a.length - rank + i] ?? 1;
    const db = b[b.length - rank + i] ?? 1;
    return da === 1 ? db : da;
  });
}

/**
 * Operands for `op` (`second`: the right-hand one, or the tensor beside a number): divisors kept
 * away from 0; maximum's and minimum's on a grid of eighths, the right-hand one shifted by a
 * sixteenth, so the two sides (and the numbers 0.3 beside them) never come within the central
 * difference's step of each other, where it straddles the kink (about 1.8e-4 of runs before).
 */
function operand(op: BinaryMethod, n: number, seed: number, second: boolean): number[] {
  const values = randomValues(n, seed);
  if (op === 'div' && second) return values.map((v) => Math.sign(v || 1) * (0.5 + Math.abs(v)));
  if (op === 'maximum' || op === 'minimum') return values.map((v) => Math.round(v * 8) / 8 + (second ? 1 / 16 : 0));
  return values;
}

describe('binary ops', () => {
  for (const op of Object.keys(BINARY) as BinaryMethod[]) {
    it(`${op}: every broadcast pattern`, () => {
      for (const [aShape, bShape] of PAIRS) {
        const seed = freshSeed();
        const out = broadcastShape(aShape, bShape);
        gradcheck(g, {
          label: `${op} ${JSON.stringify(aShape)} ${JSON.stringify(bShape)}`,
          inputs: [
            { shape: aShape, values: operand(op, product(aShape), seed, false) },
            { shape: bShape, values: operand(op, product(bShape), seed + 7, true) },
          ],
          forward: (gpu, [a, b]) => gpu[op](a!, b!),
          reference: ([a, b]) => broadcastRef(aShape, a!, bShape, b!, out, BINARY[op]),
          tolerance: 1e-5,
          seed,
        });
      }
    });

    it(`${op}: a number on either side`, () => {
      const seed = freshSeed();
      const values = operand(op, 12, seed, true);
      for (const side of ['left', 'right'] as const) {
        const c = Math.fround(op === 'div' ? 1.7 : 0.3);
        gradcheck(g, {
          label: `${op} with ${c} on the ${side}`,
          inputs: [{ shape: [3, 4], values }],
          forward: (gpu, [x]) => (side === 'left' ? gpu[op](c, x!) : gpu[op](x!, c)),
          reference: ([x]) => Array.from(x!, (v) => (side === 'left' ? BINARY[op](c, v) : BINARY[op](v, c))),
          tolerance: 1e-5,
          seed,
        });
      }
    });
  }

  it('vectorAdd', () => {
    const seed = freshSeed();
    gradcheck(g, {
      label: 'vectorAdd',
      inputs: [
        { shape: [6], values: randomValues(6, seed) },
        { shape: [6], values: randomValues(6, seed + 1) },
      ],
      forward: (gpu, [a, b]) => gpu.vectorAdd(a!, b!),
      reference: ([a, b]) => Array.from(a!, (v, i) => v + b![i]!),
      tolerance: 1e-5,
      seed,
    });
  });

  it('a constant operand gets no gradient', () => {
    const seed = freshSeed();
    gradcheck(g, {
      label: 'mul by a constant tensor',
      inputs: [
        { shape: [2, 3], values: randomValues(6, seed) },
        { shape: [3], values: randomValues(3, seed + 1), grad: false },
      ],
      forward: (gpu, [a, b]) => gpu.mul(a!, b!),
      reference: ([a, b]) => broadcastRef([2, 3], a!, [3], b!, [2, 3], BINARY.mul),
      tolerance: 1e-5,
      seed,
    });
  });

  it('maximum and minimum split the gradient in half where the operands tie', () => {
    using a = g.tensor([1, 2, 3, 4]).requiresGrad_();
    using b = g.tensor([1, 5, 3, 0]).requiresGrad_();
    using seed = g.tensor([2, 4, 6, 8]);
    for (const [op, wantA, wantB] of [
      ['maximum', [1, 0, 3, 8], [1, 4, 3, 0]],
      ['minimum', [1, 4, 3, 0], [1, 0, 3, 8]],
    ] as const) {
      using out = g[op](a, b);
      out.backward(seed);
      expect(Array.from(a.grad!.toArraySync()), op).toEqual(wantA);
      expect(Array.from(b.grad!.toArraySync()), op).toEqual(wantB);
      a.zeroGrad();
      b.zeroGrad();
    }
    using same = g.maximum(a, a);
    same.backward(seed);
    expect(Array.from(a.grad!.toArraySync()), 'maximum(a, a): both halves reach a').toEqual([2, 4, 6, 8]);
  });
});

/** Inputs inside each op's domain and away from its kinks. */
function unaryInputs(op: UnaryOp, n: number, seed: number): number[] {
  if (op === 'log' || op === 'sqrt' || op === 'rsqrt') return randomValues(n, seed).map((v) => 0.2 + Math.abs(v));
  return awayFromZero(n, seed, 2);
}

describe('unary ops and activations', () => {
  for (const op of PLAIN_UNARY_OPS) {
    it(op, () => {
      const seed = freshSeed();
      for (const shape of [[7], [2, 3, 5], []]) {
        gradcheck(g, {
          label: `${op} [${shape}]`,
          inputs: [{ shape, values: unaryInputs(op, product(shape), seed) }],
          forward: (gpu, [x]) => gpu[op](x!),
          reference: ([x]) => Array.from(x!, (v) => UNARY_REFERENCE[op](v, 0.01)),
          tolerance: 1e-5,
          seed,
        });
      }
    });
  }

  it('leakyRelu with a slope, and both gelu forms', () => {
    const seed = freshSeed();
    const values = awayFromZero(24, seed, 2);
    const cases: [string, (gpu: GpuCompute, x: Tensor) => Tensor, UnaryOp, number][] = [
      ['leakyRelu 0.2', (gpu, x) => gpu.leakyRelu(x, 0.2), 'leakyRelu', Math.fround(0.2)],
      ['gelu', (gpu, x) => gpu.gelu(x), 'gelu', 0],
      ['gelu tanh', (gpu, x) => gpu.gelu(x, { approximate: 'tanh' }), 'geluTanh', 0],
      ['Tensor#leakyRelu', (_, x) => x.leakyRelu(0.3), 'leakyRelu', Math.fround(0.3)],
      ['Tensor#gelu', (_, x) => x.gelu({ approximate: 'tanh' }), 'geluTanh', 0],
    ];
    for (const [label, forward, op, slope] of cases) {
      gradcheck(g, {
        label,
        inputs: [{ shape: [4, 6], values }],
        forward: (gpu, [x]) => forward(gpu, x!),
        reference: ([x]) => Array.from(x!, (v) => UNARY_REFERENCE[op](v, slope)),
        tolerance: 1e-5,
        seed,
      });
    }
  });

  it('activationGrad is differentiable in dy, and refuses an x that requires grad', () => {
    const seed = freshSeed();
    const xs = awayFromZero(10, seed, 2);
    gradcheck(g, {
      label: 'activationGrad silu',
      inputs: [
        { shape: [10], values: xs, grad: false },
        { shape: [10], values: randomValues(10, seed + 1) },
      ],
      forward: (gpu, [x, dy]) => gpu.activationGrad('silu', x!, dy!),
      reference: ([x, dy]) => Array.from(x!, (v, i) => dy![i]! * derivativeRef('silu', v, 0.01)),
      tolerance: 1e-5,
      seed,
    });
    using x = g.tensor(xs).requiresGrad_();
    using dy = g.tensor(xs);
    expect(() => g.activationGrad('relu', x, dy)).toThrow(/^activationGrad: x Tensor\(f32 \[10\]\) requires grad, and activationGrad has no gradient with respect to x/);
  });
});

describe('layout', () => {
  it('transpose of every batch shape, and reshape', () => {
    const seed = freshSeed();
    for (const shape of [[3, 4], [2, 3, 5], [2, 1, 2, 3]]) {
      const rows = shape[shape.length - 2]!;
      const cols = shape[shape.length - 1]!;
      gradcheck(g, {
        label: `transpose [${shape}]`,
        inputs: [{ shape, values: randomValues(product(shape), seed) }],
        forward: (gpu, [x]) => gpu.mul(gpu.transpose(x!), 1),
        reference: ([x]) => {
          const out: number[] = [];
          for (let b = 0; b < x!.length / (rows * cols); b++) {
            for (let c = 0; c < cols; c++) for (let r = 0; r < rows; r++) out.push(x![b * rows * cols + r * cols + c]!);
          }
          return out;
        },
        tolerance: 1e-5,
        seed,
      });
    }
    gradcheck(g, {
      label: 'reshape',
      inputs: [{ shape: [2, 6], values: randomValues(12, seed) }],
      forward: (_, [x]) => x!.reshape([3, -1]).exp(),
      reference: ([x]) => Array.from(x!, Math.exp),
      tolerance: 1e-5,
      seed,
    });
  });
});

describe('gradients that are exact by definition', () => {
  it('cast sends the gradient back through the cast', () => {
    using x = g.tensor(randomValues(8, freshSeed())).requiresGrad_();
    const r = randomValues(8, freshSeed());
    using seed = g.tensor(r);
    using half = g.cast(x, 'bf16');
    using back = half.cast('f32');
    back.backward(seed);
    expect(Array.from(x.grad!.toArraySync())).toEqual(r.map(roundTo('bf16')));
    using integer = g.cast(x, 'i32');
    expect(integer.requiresGrad, 'an i32 result has no gradient').toBe(false);
  });

  it('copy and clone pass the gradient through', () => {
    using x = g.tensor([1, 2, 3]).requiresGrad_();
    using seed = g.tensor([4, 5, 6]);
    using a = g.copy(x);
    using b = x.clone();
    using sum = g.add(a, b);
    sum.backward(seed);
    expect(Array.from(x.grad!.toArraySync())).toEqual([8, 10, 12]);
  });

  it('dropout sends the gradient through the same mask and scale, with or without a seed', () => {
    const values = awayFromZero(64, freshSeed());
    for (const seedArg of [17, undefined]) {
      using x = g.tensor(values).requiresGrad_();
      using out = g.dropout(x, 0.4, seedArg);
      const r = randomValues(64, freshSeed());
      using seed = g.tensor(r);
      out.backward(seed);
      const kept = out.toArraySync();
      const scale = Math.fround(1 / (1 - 0.4));
      const grad = x.grad!.toArraySync();
      for (let i = 0; i < 64; i++) expect(grad[i], `element ${i}, seed ${seedArg}`).toBe(kept[i] === 0 ? 0 : Math.fround(Math.fround(r[i]!) * scale));
    }
    for (const p of [0, 1]) {
      using x = g.tensor(values).requiresGrad_();
      using out = g.dropout(x, p, 3);
      out.sum().backward();
      expect(Array.from(x.grad!.toArraySync()), `p = ${p}`).toEqual(values.map(() => 1 - p));
    }
  });
});
