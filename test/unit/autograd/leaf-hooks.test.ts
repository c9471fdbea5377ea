/**
 * The backward's leaf hooks (what DataParallel starts its all-reduces from): `reached` names the
 * leaves the pass reaches before any node runs; `final` reports each of them exactly once, as
 * soon as its last contribution has arrived, with the whole gradient (the one a plain backward
 * gives), on chains, diamonds, a leaf used twice by one op and a parameter shared by two layers;
 * no `.grad` changes; what was handed over is the hook's, the rest is freed, also on a failure.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backward, type LeafHooks } from '../../../src/compute/autograd/backward.js';
import { record } from '../../../src/compute/autograd/record.js';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { cpuCompute, randomValues } from '../compute/helpers.js';

let g: GpuCompute;
beforeAll(async () => {
  g = await cpuCompute();
});
afterAll(() => g.dispose());

const values = (t: Tensor | undefined) => Array.from(t!.toArraySync());
const inUse = () => g.memoryStats().inUseBytes;

interface Report {
  leaf: Tensor;
  grad: Tensor | undefined;
  /** Backend op calls made before the report. */
  calls: number;
}

/**
 * Runs a hooked backward of `loss` and records what the hooks saw; `calls` counts the backend's
 * op calls (the matmuls and elementwise ops of the pass) so a report's time is known.
 */
function hookedBackward(loss: Tensor, onFinal?: (leaf: Tensor) => void): { reached: Tensor[]; reports: Report[]; totalCalls: number } {
  const reached: Tensor[] = [];
  const reports: Report[] = [];
  let calls = 0;
  const backend = g.backend as unknown as Record<string, (...args: unknown[]) => unknown>;
  const names = ['matmul', 'binary', 'unary', 'reduce', 'fill', 'copy', 'activationGrad', 'transpose'].filter((n) => typeof backend[n] === 'function');
  const originals = names.map((n) => [n, backend[n]!] as const);
  for (const [n, f] of originals) {
    backend[n] = (...args: unknown[]) => {
      calls++;
      return f.apply(g.backend, args);
    };
  }
  const hooks: LeafHooks = {
    reached: (leaves) => {
      expect(reports, 'reached comes before any leaf is final').toHaveLength(0);
      reached.push(...leaves);
    },
    final: (leaf, grad) => {
      reports.push({ leaf, grad, calls });
      onFinal?.(leaf);
    },
  };
  try {
    backward(g.session, loss, undefined, undefined, hooks);
  } finally {
    for (const [n, f] of originals) backend[n] = f;
  }
  return { reached, reports, totalCalls: calls };
}

/** The gradients a plain backward gives, read to the host; the leaves' .grad are reset after. */
function plainGradients(makeLoss: () => Tensor, leaves: readonly Tensor[]): number[][] {
  const loss = g.scope(makeLoss);
  loss.backward();
  loss.dispose();
  const grads = leaves.map((l) => values(l.grad));
  for (const l of leaves) l.zeroGrad();
  return grads;
}

function leaf(shape: number[], seed: number): Tensor {
  const n = shape.reduce((a, d) => a * d, 1);
  return g.tensor(randomValues(n, seed, 0.5), shape).requiresGrad_();
}

describe('leaf hooks of a backward', () => {
  it('a three-layer MLP: every parameter once, the last layers first and before the first layer is differentiated, each with its whole gradient', () => {
    using x = g.tensor(randomValues(4 * 5, 1), [4, 5]);
    const params = [leaf([6, 5], 2), leaf([6], 3), leaf([7, 6], 4), leaf([7], 5), leaf([3, 7], 6), leaf([3], 7)];
    using unused = leaf([2], 8);
    const [w1, b1, w2, b2, w3, b3] = params as [Tensor, Tensor, Tensor, Tensor, Tensor, Tensor];
    const model = () => g.mean(g.mul(g.linear(g.tanh(g.linear(g.tanh(g.linear(x, w1, b1)), w2, b2)), w3, b3), 1.5));
    const want = plainGradients(model, params);
    const base = inUse();
    const loss = g.scope(model);
    const { reached, reports, totalCalls } = hookedBackward(loss);
    loss.dispose();
    expect(new Set(reached)).toEqual(new Set(params));
    expect(reached).not.toContain(unused);
    expect(reports.map((r) => params.indexOf(r.leaf)).sort()).toEqual([0, 1, 2, 3, 4, 5]);
    const at = (p: Tensor) => reports.find((r) => r.leaf === p)!;
    expect(reports.indexOf(at(w3)), 'w3 before w1').toBeLessThan(reports.indexOf(at(w1)));
    expect(reports.indexOf(at(b2)), 'b2 before b1').toBeLessThan(reports.indexOf(at(b1)));
    expect(at(w3).calls, 'w3 is handed over while backend work of the pass is still to come').toBeLessThan(totalCalls);
    expect(at(w2).calls).toBeLessThan(at(w1).calls);
    params.forEach((p, i) => {
      expect(p.grad, 'no .grad changes').toBeUndefined();
      expect(values(at(p).grad)).toEqual(want[i]);
    });
    expect(inUse() - base, 'only the handed-over gradients are left').toBe(params.reduce((a, p) => a + p.byteLength, 0));
    for (const r of reports) r.grad!.dispose();
    expect(inUse()).toBe(base);
    for (const p of params) p.dispose();
  });

  it('a diamond and a leaf used twice by one op: reported once, after both contributions', () => {
    using x = leaf([5], 11);
    using y = leaf([5], 12);
    // x reaches the loss through exp and through mul(x, x); y through both branches of the sum.
    const model = () => g.sum(g.add(g.mul(g.exp(x), y), g.mul(g.mul(x, x), y)));
    const want = plainGradients(model, [x, y]);
    const loss = g.scope(model);
    const { reached, reports } = hookedBackward(loss);
    loss.dispose();
    expect(new Set(reached)).toEqual(new Set([x, y]));
    expect(reports.map((r) => r.leaf === x)).toHaveLength(2);
    expect(reports.filter((r) => r.leaf === x)).toHaveLength(1);
    expect(values(reports.find((r) => r.leaf === x)!.grad)).toEqual(want[0]);
    expect(values(reports.find((r) => r.leaf === y)!.grad)).toEqual(want[1]);
    for (const r of reports) r.grad!.dispose();
  });

  it('a parameter shared by two layers: reported once, after its first use has been differentiated', () => {
    using x = g.tensor(randomValues(3 * 4, 21), [3, 4]);
    using w = leaf([4, 4], 22);
    using v = leaf([2, 4], 23);
    const model = () => g.sum(g.linear(g.tanh(g.linear(g.tanh(g.linear(x, w)), w)), v));
    const want = plainGradients(model, [w, v]);
    const loss = g.scope(model);
    const { reports } = hookedBackward(loss);
    loss.dispose();
    expect(reports.map((r) => r.leaf)).toEqual([v, w]);
    expect(values(reports[1]!.grad)).toEqual(want[0]);
    expect(values(reports[0]!.grad)).toEqual(want[1]);
    for (const r of reports) r.grad!.dispose();
  });

  it('a leaf reached without a gradient arriving is reported with undefined; one outside the graph is not reached', () => {
    using x = leaf([3], 31);
    using y = leaf([3], 32);
    using z = leaf([3], 33);
    // An op whose backward sends x nothing (a zero gradient).
    const stop = (t: Tensor) => record('stop', [t], g.noGrad(() => g.copy(t)), [], () => [undefined]);
    using loss = g.scope(() => g.add(g.sum(stop(x)), g.sum(g.mul(y, y))));
    const { reached, reports } = hookedBackward(loss);
    expect(new Set(reached)).toEqual(new Set([x, y]));
    expect(reports.find((r) => r.leaf === x)!.grad).toBeUndefined();
    expect(values(reports.find((r) => r.leaf === y)!.grad)).toEqual(values(y).map((v) => 2 * v));
    expect(reports.some((r) => r.leaf === z)).toBe(false);
    for (const r of reports) r.grad?.dispose();
  });

  it('a loss that is itself a leaf: reached and reported with the seed', () => {
    using x = leaf([1], 41);
    const { reached, reports } = hookedBackward(x);
    expect(reached).toEqual([x]);
    expect(reports).toHaveLength(1);
    expect(values(reports[0]!.grad)).toEqual([1]);
    expect(x.grad).toBeUndefined();
    reports[0]!.grad!.dispose();
  });

  it('when a hook throws, no .grad changes, what was handed over stays the hook’s and everything else is freed', () => {
    using x = g.tensor(randomValues(8, 51), [2, 4]);
    using w1 = leaf([4, 4], 52);
    using w2 = leaf([3, 4], 53);
    w1.grad = g.ones([4, 4]);
    const base = inUse();
    const loss = g.scope(() => g.sum(g.linear(g.tanh(g.linear(x, w1)), w2)));
    let handed: Tensor | undefined;
    expect(() =>
      backward(g.session, loss, undefined, undefined, {
        reached: () => {},
        final: (_leaf, grad) => {
          handed = grad;
          throw new Error('stop');
        },
      }),
    ).toThrow('stop');
    loss.dispose();
    expect(values(w1.grad)).toEqual(new Array(16).fill(1));
    expect(w2.grad).toBeUndefined();
    expect(handed!.disposed, 'the handed-over gradient is the hook’s').toBe(false);
    expect(inUse() - base).toBe(handed!.byteLength);
    handed!.dispose();
    expect(inUse()).toBe(base);
  });
});
