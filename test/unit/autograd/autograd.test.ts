/**
 * Autograd's rules beyond each op's formula (`gradcheck-*.test.ts`): which tensors require grad,
 * how gradients accumulate and are reset, what a backward holds and releases, the functional form,
 * noGrad, and how recording meets gpu.scope, gpu.capture, in-place updates and the garbage
 * collector; and the registration API (`autograd/record.ts`) for an op of several outputs.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { record, recording } from '../../../src/compute/autograd/record.js';
import { binary } from '../../../src/compute/ops/elementwise.js';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { CaptureError, DisposedError, GpuError, InvalidArgumentError } from '../../../src/errors.js';
import { cpuCompute } from '../compute/helpers.js';

let g: GpuCompute;
beforeAll(async () => {
  g = await cpuCompute();
});
afterAll(() => g.dispose());

const values = (t: Tensor | undefined) => Array.from(t!.toArraySync());
const inUse = () => g.memoryStats().inUseBytes;

describe('what requires grad', () => {
  it('a marked leaf, and the results of ops recorded from it; not constants, not indices', () => {
    using x = g.tensor([1, 2, 3]);
    expect(x.requiresGrad).toBe(false);
    expect(x.requiresGrad_()).toBe(x);
    expect(x.requiresGrad).toBe(true);
    using c = g.tensor([4, 5, 6]);
    using y = g.mul(x, c);
    using z = g.exp(c);
    using i = g.argmax(y);
    expect([y.requiresGrad, z.requiresGrad, i.requiresGrad]).toEqual([true, false, false]);
    x.requiresGrad_(false);
    using w = g.mul(x, c);
    expect(w.requiresGrad).toBe(false);
  });

  it('only float leaves can be marked, and only leaves', () => {
    using i = g.tensor(Int32Array.from([1, 2]));
    expect(() => i.requiresGrad_()).toThrow(/^requiresGrad_: only float tensors \(f32, f16, bf16\) have gradients, got Tensor\(i32 \[2\]\)/);
    using x = g.tensor([1, 2]).requiresGrad_();
    using y = g.neg(x);
    expect(() => y.requiresGrad_()).toThrow(/^requiresGrad_: Tensor\(f32 \[2\]\) is the result of a recorded op, not a leaf/);
    expect(() => x.requiresGrad_('yes' as never)).toThrow(/^requiresGrad_: requiresGrad must be a boolean, got the string "yes"/);
    using d = y.detach();
    expect(d.requiresGrad).toBe(false);
    expect(values(d)).toEqual([-1, -2]);
  });

  it('the no-grad path records nothing and holds nothing: an input disposed while its result lives gives its memory back', () => {
    using a = g.zeros([1000]);
    const base = inUse();
    const b = g.ones([1000]);
    using y = g.mul(a, b);
    expect(y.requiresGrad).toBe(false);
    expect(y.origin).toBeUndefined();
    const withB = inUse();
    b.dispose();
    expect(withB - inUse()).toBe(4000);
    expect(inUse() - base).toBe(4000);
  });
});

describe('backward', () => {
  it('accumulates across backwards until zeroGrad or grad = undefined; a shared input sums its paths', () => {
    using x = g.tensor([1, 2, 3]).requiresGrad_();
    const run = () => {
      using y = g.add(g.scope(() => g.mul(x, x)), x);
      using s = g.sum(y);
      s.backward();
    };
    run();
    expect(values(x.grad)).toEqual([3, 5, 7]);
    run();
    expect(values(x.grad)).toEqual([6, 10, 14]);
    const old = x.grad!;
    x.zeroGrad();
    expect(x.grad).toBeUndefined();
    expect(old.disposed, 'zeroGrad disposes the gradient').toBe(true);
    run();
    const replaced = x.grad!;
    x.grad = undefined;
    expect(replaced.disposed, 'grad = undefined disposes it too').toBe(true);
    run();
    expect(values(x.grad)).toEqual([3, 5, 7]);
  });

  it('an op that gives one gradient to two inputs, the first a leaf that already has a contribution', () => {
    using w = g.tensor([1, 2]).requiresGrad_();
    using v = g.tensor([0.5, -1]).requiresGrad_();
    // The second add's gradient goes to w (summed with the first add's) and to tanh's backward.
    using loss = g.scope(() => g.add(g.sum(g.add(w, v)), g.sum(g.add(w, g.tanh(v)))));
    loss.backward();
    expect(values(w.grad)).toEqual([2, 2]);
    expect(values(v.grad).map((d, i) => d - (2 - Math.tanh([0.5, -1][i]!) ** 2))).toEqual([expect.closeTo(0, 6), expect.closeTo(0, 6)]);
  });

  it('a gradient belongs to its tensor: no scope disposes it, dispose() does; an assigned one must match', () => {
    const x = g.tensor([1, 2]).requiresGrad_();
    g.scope(() => g.sum(g.mul(x, 3)).backward());
    expect(values(x.grad)).toEqual([3, 3]);
    const grad = x.grad!;
    using wrong = g.ones([3]);
    expect(() => (x.grad = wrong)).toThrow(/^grad: the gradient of Tensor\(f32 \[2\]\) must have its shape and dtype, got Tensor\(f32 \[3\]\)/);
    expect(() => (x.grad = 5 as never)).toThrow(/^grad: must be a Tensor or undefined, got 5/);
    const mine = g.scope(() => g.ones([2]));
    x.grad = mine;
    expect(grad.disposed).toBe(true);
    g.scope(() => g.sum(x).backward());
    expect(values(x.grad)).toEqual([2, 2]);
    const last = x.grad!;
    x.dispose();
    expect(last.disposed).toBe(true);
  });

  it('takes a seed of the root’s shape and dtype (a one-element root needs none), and leaves the seed alone', () => {
    using x = g.tensor([1, 2, 3, 4], [2, 2]).requiresGrad_();
    using y = g.mul(x, 2);
    expect(() => y.backward()).toThrow(/^backward: x Tensor\(f32 \[2, 2\]\) is not a scalar; pass the gradient with respect to it as the seed/);
    using bad = g.ones([4]);
    expect(() => y.backward(bad)).toThrow(/^backward: seed must have the shape and dtype of x Tensor\(f32 \[2, 2\]\), got Tensor\(f32 \[4\]\)/);
    using seed = g.tensor([1, 2, 3, 4], [2, 2]);
    y.backward(seed);
    expect(values(x.grad)).toEqual([2, 4, 6, 8]);
    expect(values(seed)).toEqual([1, 2, 3, 4]);
    // A leaf as the root: its gradient is a copy of the seed.
    x.zeroGrad();
    x.backward(seed);
    expect(values(x.grad)).toEqual([1, 2, 3, 4]);
    expect(x.grad).not.toBe(seed);
    using c = g.ones([1]);
    expect(() => c.backward()).toThrow(/^backward: x Tensor\(f32 \[1\]\) does not require grad/);
  });

  it('releases what the graph saved as it passes; a second backward through it is refused unless the first retained it', () => {
    using x = g.tensor(new Float32Array(1000).fill(0.5)).requiresGrad_();
    const base = inUse();
    // exp saves its result; the scope disposes the tensors, the graph keeps that storage.
    using loss = g.scope(() => g.sum(g.exp(x)));
    const held = inUse() - base;
    expect(held, 'the loss and the saved exp').toBe(4 + 4000);
    loss.backward(undefined, { retainGraph: true });
    expect(inUse() - base, 'retained: exp still held, plus the gradient').toBe(4 + 4000 + 4000);
    loss.backward();
    expect(values(x.grad).slice(0, 2)).toEqual([2 * Math.fround(Math.exp(0.5)), 2 * Math.fround(Math.exp(0.5))]);
    expect(inUse() - base, 'released: the loss and the gradient').toBe(4 + 4000);
    expect(() => loss.backward()).toThrow(/^backward: the graph through exp was already used by a backward, which released the tensors it saved; pass \{ retainGraph: true \}/);
    expect(() => loss.backward(undefined, { retainGraph: 1 } as never)).toThrow(/^backward: retainGraph must be a boolean, got 1/);
  });

  it('a graph dropped without a backward gives its saved memory back', () => {
    using x = g.tensor(new Float32Array(1000).fill(0.5)).requiresGrad_();
    const base = inUse();
    const loss = g.scope(() => g.sum(g.exp(x)));
    expect(inUse() - base).toBe(4004);
    loss.dispose();
    expect(inUse()).toBe(base);
  });

  it('and the garbage collector drops the graphs of tensors never disposed', () => {
    const script = fileURLToPath(new URL('./fixtures/graph-gc-script.ts', import.meta.url));
    const output = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', script], { cwd: fileURLToPath(new URL('../../..', import.meta.url)), encoding: 'utf8' });
    const result = JSON.parse(output.trim().split('\n').pop()!) as { inUseAfterLeak: number; stats: { inUseBytes: number; allocations: number } };
    expect(result.inUseAfterLeak).toBe(4000 + 20 * 4000);
    expect(result.stats).toMatchObject({ inUseBytes: 4000, allocations: 1 });
  });

  it('refuses a saved tensor written in place since the forward', () => {
    using x = g.tensor([1, 2]).requiresGrad_();
    using y = g.mul(x, x);
    using loss = g.sum(y);
    x.sharedStorage.version++;
    expect(() => loss.backward()).toThrow(/^backward: a Tensor\(f32 \[2\]\) that mul saved for its gradient was modified in place \(by an optimizer step\) after the forward/);
    expect(x.grad).toBeUndefined();
  });

  it('reaches a leaf through a zero gradient: zeros, as PyTorch', () => {
    using x = g.tensor([1, 2]).requiresGrad_();
    using y = g.dropout(x, 1, 0);
    using loss = g.sum(y);
    loss.backward();
    expect(values(x.grad)).toEqual([0, 0]);
  });

  it('runs a graph ten thousand ops deep', () => {
    using x = g.tensor([1]).requiresGrad_();
    const loss = g.scope(() => {
      let y: Tensor = x;
      for (let i = 0; i < 10000; i++) y = g.mul(y, 1);
      return g.sum(y);
    });
    loss.backward();
    loss.dispose();
    expect(values(x.grad)).toEqual([1]);
  });

  it('leaves every gradient as it was when it fails, and nothing allocated', () => {
    using x = g.tensor(new Float32Array(256).fill(1)).requiresGrad_();
    using first = g.scope(() => g.sum(g.mul(x, x)));
    first.backward();
    const before = values(x.grad);
    using loss = g.scope(() => g.sum(g.exp(g.mul(x, x))));
    const alloc = g.backend.alloc.bind(g.backend);
    let calls = 0;
    (g.backend as { alloc: typeof alloc }).alloc = (bytes) => {
      if (++calls === 3) throw new GpuError('OUT_OF_MEMORY', 'injected');
      return alloc(bytes);
    };
    const usage = inUse();
    try {
      expect(() => loss.backward()).toThrow(/injected/);
    } finally {
      (g.backend as { alloc: typeof alloc }).alloc = alloc;
    }
    expect(values(x.grad)).toEqual(before);
    expect(inUse()).toBe(usage);
  });
});

describe('the ops without a backward yet', () => {
  it('gruRollout and svd refuse an input that requires grad, found in weights and options too; under noGrad they run', () => {
    using state = g.ones([2, 3]);
    using wIh = g.ones([6, 3]);
    using wHh = g.ones([6, 2]);
    using weight = g.ones([3, 2]).requiresGrad_();
    const options = { steps: 2, outputProjection: { weight } };
    expect(() => g.gruRollout(state, undefined, { wIh, wHh }, options)).toThrow(/^gruRollout: Tensor\(f32 \[3, 2\]\) requires grad, and gruRollout has no backward yet; call it under gpu.noGrad/);
    using m = g.ones([3, 3]).requiresGrad_();
    expect(() => g.svd(m as Tensor<'f32'>)).toThrow(/^svd: .* requires grad, and svd has no backward yet/);
    const out = g.noGrad(() => g.gruRollout(state, undefined, { wIh, wHh }, options));
    out.states.dispose();
    out.hidden.dispose();
  });
});

describe('gpu.grad', () => {
  it('gives the gradients of a one-element function without touching .grad', () => {
    using x = g.tensor([1, 2, 3]);
    using w = g.tensor([2, 2, 2]).requiresGrad_();
    using unused = g.tensor([5]);
    const { value, grads } = g.grad((a: Tensor, b: Tensor) => g.sum(g.mul(g.mul(a, a), w)), [x, unused]);
    expect(values(value)).toEqual([28]);
    expect(value.requiresGrad).toBe(false);
    expect(values(grads[0])).toEqual([4, 8, 12]);
    expect(values(grads[1]), 'an input the value does not depend on').toEqual([0]);
    expect(w.grad, 'a parameter inside fn keeps its .grad').toBeUndefined();
    expect(x.requiresGrad).toBe(false);
    for (const t of [value, ...grads]) t.dispose();
  });

  it('records inside noGrad, refuses a result of many elements, non-float inputs and non-functions', () => {
    using x = g.tensor([1, 2]);
    const { value, grads } = g.noGrad(() => g.grad((a: Tensor) => g.sum(g.exp(a)), [x]));
    expect(values(grads[0])).toEqual([Math.fround(Math.exp(1)), Math.fround(Math.exp(2))]);
    value.dispose();
    grads[0]!.dispose();
    expect(() => g.grad((a: Tensor) => g.exp(a), [x])).toThrow(/^grad: fn must return a one-element tensor \(the value to differentiate\), got Tensor\(f32 \[2\]\)/);
    using i = g.tensor(Int32Array.from([1]));
    expect(() => g.grad((a: Tensor) => a, [i])).toThrow(/^grad: inputs\[0\] must be a float tensor/);
    expect(() => g.grad(3 as never, [x])).toThrow(/^grad: fn must be a function, got 3/);
    expect(() => g.grad((a: Tensor) => 3 as never, [x])).toThrow(/^grad: the result of fn must be a Tensor, got 3/);
  });
});

describe('gpu.noGrad', () => {
  it('records nothing inside, nests, and restores recording after, also after a throw', () => {
    using x = g.tensor([1, 2]).requiresGrad_();
    const y = g.noGrad(() => g.noGrad(() => g.mul(x, 2)));
    expect(y.requiresGrad).toBe(false);
    y.dispose();
    expect(() => g.noGrad(() => { throw new Error('inside'); })).toThrow('inside');
    using z = g.mul(x, 2);
    expect(z.requiresGrad).toBe(true);
    expect(() => g.noGrad(async () => 1)).toThrow(/^noGrad: fn must be synchronous/);
    expect(() => g.noGrad(1 as never)).toThrow(/^noGrad: fn must be a function, got 1/);
  });
});

describe('recording meets gpu.scope and gpu.capture', () => {
  it('a scope disposes the intermediates, the graph keeps what it saved, and the gradients are the caller’s', () => {
    using x = g.tensor([0, 1, 2]).requiresGrad_();
    const base = inUse();
    g.scope(() => {
      const loss = g.sum(g.tanh(g.mul(x, 2)));
      loss.backward();
    });
    expect(values(x.grad).map((v) => Math.round(v * 1e4) / 1e4)).toEqual([2, 0.1413, 0.0027]);
    expect(inUse() - base, 'only the gradient is left').toBe(12);
  });

  it('a captured function may not record: ops, backward and gpu.grad are refused; under noGrad it runs', () => {
    using w = g.tensor([1, 2]).requiresGrad_();
    using x = g.tensor([3, 4]);
    using refused = g.capture((a: Tensor) => g.mul(a, w), [x]);
    expect(() => refused(x)).toThrow(CaptureError);
    expect(() => refused(x)).toThrow(/^capture: mul would be recorded for autograd \(an input requires grad\)/);
    using loss = g.sum(g.scope(() => g.mul(w, w)));
    using backwardInside = g.capture((a: Tensor) => {
      loss.backward(undefined, { retainGraph: true });
      return g.copy(a);
    }, [x]);
    expect(() => backwardInside(x)).toThrow(/^capture: backward cannot run inside a captured function/);
    using gradInside = g.capture((a: Tensor) => g.grad((b: Tensor) => g.sum(b), [a]).value, [x]);
    expect(() => gradInside(x)).toThrow(/^capture: gpu.grad cannot run inside a captured function/);
    using allowed = g.capture((a: Tensor) => g.noGrad(() => g.mul(a, w)), [x]);
    using y = allowed(x);
    expect(values(y)).toEqual([3, 8]);
    expect(w.grad).toBeUndefined();
  });
});

describe('the registration API (autograd/record.ts)', () => {
  /** A toy op of two outputs, (2x, 3x), registered as the brief's "one small function" would be. */
  function twice(x: Tensor): [Tensor, Tensor] {
    const s = g.session;
    const outs = [binary(s, 'mul', x, 2, 'twice'), binary(s, 'mul', x, 3, 'twice')] as [Tensor, Tensor];
    if (!recording(s, 'twice', x)) return outs;
    return record('twice', [x], outs, [], ([g2, g3]) => {
      const parts = [g2 && binary(s, 'mul', g2, 2, 'twice'), g3 && binary(s, 'mul', g3, 3, 'twice')].filter((t) => t !== undefined);
      if (parts.length < 2) return [parts[0]];
      try {
        return [binary(s, 'add', parts[0]!, parts[1]!, 'twice')];
      } finally {
        for (const t of parts) t.dispose();
      }
    });
  }

  it('records several outputs; a backward from one of them gets undefined for the other', () => {
    using x = g.tensor([1, 2]).requiresGrad_();
    const [a, b] = twice(x);
    using sa = a.sum();
    sa.backward();
    expect(values(x.grad)).toEqual([2, 2]);
    using both = g.add(a, b);
    using sb = both.sum();
    sb.backward();
    expect(values(x.grad)).toEqual([7, 7]);
    a.dispose();
    b.dispose();
  });

  it('refuses a gradient of the wrong shape from a backward (a registration bug)', () => {
    using x = g.tensor([1, 2]).requiresGrad_();
    const s = g.session;
    using y = record('broken', [x], binary(s, 'mul', x, 2, 'broken'), [], () => [g.ones([3])]);
    using loss = y.sum();
    expect(() => loss.backward()).toThrow(/the backward of broken returned Tensor\(f32 \[3\]\) for its input 0, which is f32 \[2\]/);
  });

  it('disposed and foreign arguments are refused by the front-ends before anything records', async () => {
    using x = g.tensor([1]).requiresGrad_();
    const dead = g.tensor([1]).requiresGrad_();
    dead.dispose();
    expect(() => g.mul(x, dead)).toThrow(DisposedError);
    const other = await cpuCompute();
    using foreign = other.tensor([1]).requiresGrad_();
    expect(() => g.mul(x, foreign)).toThrow(InvalidArgumentError);
    other.dispose();
  });
});
