/**
 * gpu.capture on CUDA: the function is recorded as a CUDA graph, and replays with new inputs
 * give what the eager function gives (and what the CPU backend gives), hold their memory until
 * disposed, and refuse what a graph cannot hold.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CaptureError, DisposedError } from '../../../src/errors.js';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { gpuAvailable } from '../gpu-available.js';
import { closePair, freshSeed, openPair, randomValues, relError, valuesOf, type Pair } from './setup.js';

let pair: Pair;
beforeAll(async () => {
  if (gpuAvailable) pair = await openPair();
});
afterAll(() => closePair(pair));

/** A small pipeline of many ops: linear + relu, softmax, a number operand, a reduction, a product. */
function pipeline(g: GpuCompute, w: Tensor, b: Tensor, v: Tensor) {
  return (x: Tensor, h: Tensor) => {
    const hidden = g.linear(x, w, b, 'relu');
    const probs = g.softmax(g.mul(hidden, 0.5));
    const mixed = g.add(g.matmul(probs, v), h);
    return { mixed, total: g.sum(mixed, 1), scaled: g.sub(1, g.tanh(mixed)) };
  };
}

function weights(g: GpuCompute, seed: number) {
  return {
    w: g.tensor(randomValues(48 * 33, seed), [48, 33]),
    b: g.tensor(randomValues(48, seed + 1), [48]),
    v: g.tensor(randomValues(48 * 17, seed + 2), [48, 17]),
  };
}

const inputs = (g: GpuCompute, seed: number) => [g.tensor(randomValues(5 * 33, seed), [5, 33]), g.tensor(randomValues(5 * 17, seed + 1), [5, 17])] as const;

describe.skipIf(!gpuAvailable)('gpu.capture on CUDA', () => {
  it('replays with new inputs as the eager function and the CPU backend compute, and frees its memory on dispose', () => {
    const g = pair.cuda;
    const seed = freshSeed();
    const ww = weights(g, seed);
    const wc = weights(pair.cpu, seed);
    const f = pipeline(g, ww.w, ww.b, ww.v);
    const fc = pipeline(pair.cpu, wc.w, wc.b, wc.v);
    const baseline = g.memoryStats().inUseBytes;
    const [x0, h0] = inputs(g, seed + 10);
    const step = g.capture(f, [x0, h0]);
    expect(step.graphed).toBe(true);
    expect(step.reservedBytes).toBeGreaterThan(0);
    for (let i = 0; i < 3; i++) {
      const [x, h] = inputs(g, seed + 20 + i);
      const [xc, hc] = inputs(pair.cpu, seed + 20 + i);
      const replayed = step(x, h);
      const eager = g.scope(() => f(x, h));
      const cpu = pair.cpu.scope(() => fc(xc, hc));
      for (const k of ['mixed', 'total', 'scaled'] as const) {
        expect(relError(valuesOf(replayed[k]), valuesOf(eager[k])), `${k}, replay ${i} against eager`).toBeLessThan(1e-6);
        expect(relError(valuesOf(replayed[k]), valuesOf(cpu[k])), `${k}, replay ${i} against the CPU`).toBeLessThan(1e-5);
      }
      for (const t of [x, h, xc, hc, ...Object.values(replayed), ...Object.values(eager), ...Object.values(cpu)]) t.dispose();
    }
    step.dispose();
    x0.dispose();
    h0.dispose();
    expect(step.disposed).toBe(true);
    expect(g.memoryStats().inUseBytes).toBe(baseline);
    expect(() => step(x0, h0)).toThrow(DisposedError);
    for (const t of [...Object.values(ww), ...Object.values(wc)]) t.dispose();
  });

  it('keeps what the graph reads alive after the caller disposes it, and returns outputs that later replays leave alone', () => {
    const g = pair.cuda;
    const seed = freshSeed();
    const w = g.tensor(randomValues(8 * 8, seed), [8, 8]);
    const hw = valuesOf(w);
    const step = g.capture((x: Tensor) => g.matmul(x, w), [g.zeros([3, 8])]);
    w.dispose();
    const a = g.tensor(randomValues(24, seed + 1), [3, 8]);
    const b = g.tensor(randomValues(24, seed + 2), [3, 8]);
    const ya = step(a);
    const yb = step(b);
    const product = (x: number[]) => Array.from({ length: 24 }, (_, i) => {
      let s = 0;
      for (let k = 0; k < 8; k++) s += x[Math.floor(i / 8) * 8 + k]! * hw[k * 8 + (i % 8)]!;
      return s;
    });
    expect(relError(valuesOf(ya), product(valuesOf(a))), 'first replay').toBeLessThan(1e-5);
    expect(relError(valuesOf(yb), product(valuesOf(b))), 'second replay').toBeLessThan(1e-5);
    for (const t of [a, b, ya, yb]) t.dispose();
    step.dispose();
  });

  it('orders replays on different streams after each other and after the inputs were written', () => {
    const g = pair.cuda;
    const main = g.currentStream();
    const side = g.createStream();
    const step = g.capture((x: Tensor) => g.sum(g.exp(g.mul(x, 0.001)), 0), [g.zeros([4096])]);
    const values = randomValues(4096, freshSeed());
    const expected = values.reduce((s, v) => s + Math.exp(Math.fround(v * 0.001)), 0);
    const results: Tensor[] = [];
    for (let i = 0; i < 6; i++) {
      g.setStream(i % 2 === 0 ? main : side);
      const x = g.tensor(values, [4096]);
      results.push(step(x));
      x.dispose();
    }
    g.setStream(main);
    for (const r of results) {
      expect(Math.abs(valuesOf(r)[0]! - expected) / expected).toBeLessThan(1e-5);
      r.dispose();
    }
    step.dispose();
  });

  it('records a GRU rollout (the hybrid trainer\'s predict stage) and replays it as run eagerly', () => {
    const g = pair.cuda;
    const seed = freshSeed();
    const [E, B, S, H] = [3, 4, 16, 32];
    const weights = {
      wIh: g.tensor(randomValues(E * 3 * H * S, seed, 0.2), [E, 3 * H, S]),
      wHh: g.tensor(randomValues(E * 3 * H * H, seed + 1, 0.2), [E, 3 * H, H]),
      bIh: g.tensor(randomValues(E * 3 * H, seed + 2, 0.2), [E, 3 * H]),
      bHh: g.tensor(randomValues(E * 3 * H, seed + 3, 0.2), [E, 3 * H]),
    };
    const head = { weight: g.tensor(randomValues(E * S * H, seed + 4, 0.2), [E, S, H]), bias: g.tensor(randomValues(E * S, seed + 5, 0.2), [E, S]) };
    const predict = (state: Tensor) => {
      const r = g.gruRollout(state, undefined, weights, { steps: 5, outputProjection: head });
      return [g.mean(r.states, 0), r.hidden];
    };
    const step = g.capture(predict, [g.zeros([B, S])]);
    for (let i = 0; i < 2; i++) {
      const state = g.tensor(randomValues(B * S, seed + 10 + i), [B, S]);
      const replayed = step(state);
      const eager = g.scope(() => predict(state));
      replayed.forEach((t, k) => expect(relError(valuesOf(t), valuesOf(eager[k]!)), `output ${k}`).toBeLessThan(1e-6));
      for (const t of [state, ...replayed, ...eager]) t.dispose();
    }
    step.dispose();
    for (const t of [...Object.values(weights), ...Object.values(head)]) t.dispose();
  });

  it('refuses host reads, host writes, synchronisation and nested captures while recording, and leaves nothing allocated', () => {
    const g = pair.cuda;
    const x = g.ones([16]);
    const baseline = g.memoryStats().inUseBytes;
    const cases: [string, (t: Tensor) => Tensor, RegExp][] = [
      ['a host read', (t) => g.full([1], t.toArraySync()[0]!), /^capture: a copy between host and device .* cannot be recorded in a graph/],
      ['a host write', (t) => g.add(t, g.tensor([1])), /^capture: a copy between host and device/],
      [
        'synchronize',
        (t) => {
          g.synchronize();
          return g.neg(t);
        },
        /^capture: synchronize .* cannot be recorded in a graph/,
      ],
      [
        'a nested capture',
        (t) => {
          using inner = g.capture((u: Tensor) => g.neg(u), [t]);
          return inner(t);
        },
        /^capture: capture \(captures do not nest\) cannot be recorded/,
      ],
    ];
    for (const [label, fn, message] of cases) {
      let err: unknown;
      try {
        g.capture(fn, [x]);
      } catch (e) {
        err = e;
      }
      expect(err, label).toBeInstanceOf(CaptureError);
      expect((err as Error).message, label).toMatch(message);
      expect(g.memoryStats().inUseBytes, `${label}: nothing kept`).toBe(baseline);
    }
    // The backend still works, and a capture after the failures records.
    using step = g.capture((t: Tensor) => g.mul(t, 3), [x]);
    const y = step(x);
    expect(valuesOf(y)).toEqual(new Array<number>(16).fill(3));
    y.dispose();
    using other = g.ones([15]);
    expect(() => step(other)).toThrow(/^capture: input 0 is Tensor\(f32 \[15\]\) but was captured as f32 \[16\]/);
    x.dispose();
  });
});
