/**
 * Every public op, called the ways that allocate differently (temporaries for JS-number
 * operands, fill paths for empty inputs, reshapes, the SVD's routes, the GRU's stacks,
 * ensembles, dropout and rollouts...). The failure sweep runs each; the coverage test checks
 * that every public method that allocates has at least one case here.
 */
import { ACTIVATION_GRAD, PLAIN_UNARY_OPS, type ActivationName } from '../../../src/compute/core/elementwise-ops.js';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { GruLayerWeights } from '../../../src/compute/ops/gru.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import type { Inputs, OpCase } from './leak-check.js';

/** Deterministic values in [-1, 1) (a small LCG), so every case is the same run after run. */
export function values(n: number, seed = 1, low = -1, high = 1): Float32Array {
  const out = new Float32Array(n);
  let state = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    out[i] = low + ((high - low) * state) / 2 ** 32;
  }
  return out;
}

/** A tensor of `shape` with deterministic values. */
export function filled(g: GpuCompute, shape: number[], seed = 1, dtype: 'f32' | 'f16' | 'bf16' = 'f32', low = -1, high = 1): Tensor {
  return g.tensor(values(shape.reduce((a, d) => a * d, 1), seed, low, high), shape, dtype);
}

/** One GRU layer's tensors, named `${prefix}wIh` etc. */
export function gruLayerInputs(g: GpuCompute, prefix: string, input: number, hidden: number, options: { ensemble?: number; layerNorm?: boolean; seed?: number } = {}): Inputs {
  const lead = options.ensemble === undefined ? [] : [options.ensemble];
  const seed = options.seed ?? 7;
  const t: Inputs = {
    [`${prefix}wIh`]: filled(g, [...lead, 3 * hidden, input], seed),
    [`${prefix}wHh`]: filled(g, [...lead, 3 * hidden, hidden], seed + 1),
    [`${prefix}bIh`]: filled(g, [...lead, 3 * hidden], seed + 2),
    [`${prefix}bHh`]: filled(g, [...lead, 3 * hidden], seed + 3),
  };
  if (options.layerNorm) {
    t[`${prefix}lnW`] = filled(g, [...lead, hidden], seed + 4);
    t[`${prefix}lnB`] = filled(g, [...lead, hidden], seed + 5);
  }
  return t;
}

/** The weights object of the layer {@link gruLayerInputs} made under `prefix`. */
export function gruLayer(t: Inputs, prefix: string): GruLayerWeights {
  const w: GruLayerWeights = { wIh: t[`${prefix}wIh`]!, wHh: t[`${prefix}wHh`]!, bIh: t[`${prefix}bIh`]!, bHh: t[`${prefix}bHh`]! };
  if (t[`${prefix}lnW`]) w.layerNorm = { weight: t[`${prefix}lnW`]!, bias: t[`${prefix}lnB`]!, eps: 1e-5 };
  return w;
}

const x34 = (g: GpuCompute): Inputs => ({ x: filled(g, [3, 4], 1, 'f32', 0.1, 2) });

export const OP_CASES: readonly OpCase[] = [
  // ---------------------------------------------------------------- creation
  { method: 'tensor', inputs: () => ({}), run: (g) => g.tensor([1, 2, 3, 4], [2, 2]) },
  { method: 'tensor', label: 'f16 from numbers', inputs: () => ({}), run: (g) => g.tensor([1, 2, 3], [3], 'f16') },
  { method: 'empty', inputs: () => ({}), run: (g) => g.empty([3, 4]) },
  { method: 'zeros', inputs: () => ({}), run: (g) => g.zeros([2, 3]) },
  { method: 'ones', inputs: () => ({}), run: (g) => g.ones([2, 3], 'bf16') },
  { method: 'full', inputs: () => ({}), run: (g) => g.full([4], 2.5) },
  { method: 'rand', inputs: () => ({}), run: (g) => g.rand([4, 4], { seed: 3 }) },
  { method: 'randn', inputs: () => ({}), run: (g) => g.randn([4, 4], { seed: 3, dtype: 'f16' }) },
  { method: 'copy', inputs: x34, run: (g, t) => g.copy(t.x!) },
  { method: 'cast', inputs: x34, run: (g, t) => g.cast(t.x!, 'f16') },
  { method: 'cast', label: 'same dtype', inputs: x34, run: (g, t) => g.cast(t.x!, 'f32') },

  // ------------------------------------------------------------ elementwise
  ...PLAIN_UNARY_OPS.map((op): OpCase => ({ method: op, inputs: x34, run: (g, t) => g[op](t.x!) })),
  { method: 'leakyRelu', inputs: x34, run: (g, t) => g.leakyRelu(t.x!, 0.2) },
  { method: 'gelu', inputs: x34, run: (g, t) => g.gelu(t.x!, { approximate: 'tanh' }) },
  ...(Object.keys(ACTIVATION_GRAD) as ActivationName[]).map(
    (name): OpCase => ({
      method: 'activationGrad',
      label: name,
      inputs: (g) => ({ x: filled(g, [3, 4]), dy: filled(g, [3, 4], 2) }),
      run: (g, t) => g.activationGrad(name, t.x!, t.dy!, name === 'gelu' ? { approximate: 'tanh' } : {}),
    }),
  ),
  ...(['add', 'sub', 'mul', 'div', 'maximum', 'minimum'] as const).flatMap((op): OpCase[] => [
    { method: op, label: 'broadcast', inputs: (g) => ({ a: filled(g, [3, 1]), b: filled(g, [1, 4], 2, 'f32', 0.5, 1) }), run: (g, t) => g[op](t.a!, t.b!) },
    { method: op, label: 'number on the left', inputs: x34, run: (g, t) => g[op](2, t.x!) },
    { method: op, label: 'number on the right', inputs: x34, run: (g, t) => g[op](t.x!, 2) },
  ]),
  { method: 'vectorAdd', inputs: (g) => ({ a: filled(g, [5]), b: filled(g, [5], 2) }), run: (g, t) => g.vectorAdd(t.a!, t.b!) },
  { method: 'dropout', inputs: x34, run: (g, t) => g.dropout(t.x!, 0.5, 1) },
  { method: 'dropout', label: 'p = 0 (a copy)', inputs: x34, run: (g, t) => g.dropout(t.x!, 0, 1) },
  { method: 'dropout', label: 'p = 1 (zeros)', inputs: x34, run: (g, t) => g.dropout(t.x!, 1, 1) },

  // --------------------------------------------------------- rows, reductions, layout
  { method: 'softmax', inputs: x34, run: (g, t) => g.softmax(t.x!) },
  { method: 'logSoftmax', inputs: x34, run: (g, t) => g.logSoftmax(t.x!) },
  { method: 'layerNorm', inputs: (g) => ({ x: filled(g, [3, 4]), w: filled(g, [4], 2), b: filled(g, [4], 3) }), run: (g, t) => g.layerNorm(t.x!, t.w!, t.b!) },
  { method: 'layerNorm', label: 'no affine', inputs: x34, run: (g, t) => g.layerNorm(t.x!) },
  ...(['sum', 'mean', 'max', 'min', 'argmax'] as const).flatMap((op): OpCase[] => [
    { method: op, label: 'everything', inputs: x34, run: (g, t) => g[op](t.x!) },
    { method: op, label: 'axis, keepDims', inputs: x34, run: (g, t) => g[op](t.x!, { axis: -1, keepDims: true }) },
  ]),
  { method: 'sum', label: 'empty axis (filled)', inputs: (g) => ({ x: g.zeros([3, 0]) }), run: (g, t) => g.sum(t.x!, 1) },
  { method: 'mean', label: 'empty axis (filled)', inputs: (g) => ({ x: g.zeros([3, 0]) }), run: (g, t) => g.mean(t.x!, 1) },
  { method: 'transpose', inputs: (g) => ({ x: filled(g, [2, 3, 4]) }), run: (g, t) => g.transpose(t.x!) },
  { method: 'scope', inputs: x34, run: (g, t) => g.scope(() => g.exp(g.add(t.x!, 1))) },
  {
    method: 'capture',
    inputs: x34,
    run: (g, t) => {
      using step = g.capture((a: Tensor) => ({ y: g.exp(g.mul(a, 2)), s: g.sum(a) }), [t.x!]);
      return step(t.x!);
    },
  },

  // ------------------------------------------------------------ products
  { method: 'matmul', inputs: (g) => ({ a: filled(g, [3, 4]), b: filled(g, [4, 5], 2) }), run: (g, t) => g.matmul(t.a!, t.b!) },
  {
    method: 'matmul',
    label: 'batched, broadcast, c, bias, activation, transposes',
    inputs: (g) => ({ a: filled(g, [2, 1, 4, 3]), b: filled(g, [3, 5, 4], 2), c: filled(g, [1, 3, 3, 5], 3), bias: filled(g, [5], 4) }),
    run: (g, t) => g.matmul(t.a!, t.b!, { transA: true, transB: true, c: t.c!, beta: 0.5, bias: t.bias!, activation: 'gelu' }),
  },
  {
    method: 'linear',
    label: 'x of rank 3 (a reshaped result)',
    inputs: (g) => ({ x: filled(g, [2, 3, 4]), w: filled(g, [5, 4], 2), b: filled(g, [5], 3) }),
    run: (g, t) => g.linear(t.x!, t.w!, t.b!, 'relu'),
  },
  { method: 'linear', label: '2-D', inputs: (g) => ({ x: filled(g, [3, 4]), w: filled(g, [5, 4], 2) }), run: (g, t) => g.linear(t.x!, t.w!) },
  { method: 'svd', label: 'truncated', inputs: (g) => ({ a: filled(g, [12, 8]) }), run: (g, t) => g.svd(t.a as Tensor<'f32'>, { rank: 3, oversample: 2 }) },
  { method: 'svd', label: 'no power iterations', inputs: (g) => ({ a: filled(g, [12, 8]) }), run: (g, t) => g.svd(t.a as Tensor<'f32'>, { rank: 2, powerIterations: 0 }) },
  {
    method: 'svd',
    label: 'rank-deficient (random replacement columns)',
    inputs: (g) => ({ a: g.ones([10, 8]) }),
    run: (g, t) => g.svd(t.a as Tensor<'f32'>, { rank: 3, oversample: 2, powerIterations: 1 }),
  },
  { method: 'svd', label: 'full', inputs: (g) => ({ a: filled(g, [6, 4]) }), run: (g, t) => g.svd(t.a as Tensor<'f32'>, { full: true }) },
  {
    method: 'svd',
    label: 'large entries whose products stay finite (σ₁ read back to rule out overflow)',
    inputs: (g) => ({ a: g.tensor(Float32Array.from({ length: 16 }, (_, i) => (i % 5 === 0 ? 1e18 : 0)), [4, 4]) }),
    run: (g, t) => g.svd(t.a as Tensor<'f32'>, { rank: 2 }),
  },
  {
    method: 'attention',
    inputs: (g) => ({ q: filled(g, [1, 2, 3, 8]), k: filled(g, [1, 2, 5, 8], 2), v: filled(g, [1, 2, 5, 8], 3) }),
    run: (g, t) => g.attention(t.q!, t.k!, t.v!),
  },
  {
    method: 'attention',
    label: 'keyLengths array, log-sum-exp, grouped heads, causal',
    inputs: (g) => ({ q: filled(g, [2, 4, 3, 8]), k: filled(g, [2, 2, 5, 8], 2), v: filled(g, [2, 2, 5, 8], 3) }),
    run: (g, t) => g.attention(t.q!, t.k!, t.v!, { keyLengths: [3, 5], returnLogSumExp: true, causal: true }),
  },
  {
    method: 'attention',
    label: 'keyLengths tensor',
    inputs: (g) => ({ q: filled(g, [2, 2, 3, 8]), k: filled(g, [2, 2, 5, 8], 2), v: filled(g, [2, 2, 5, 8], 3), len: g.tensor(Int32Array.from([2, 4])) }),
    run: (g, t) => g.attention(t.q!, t.k!, t.v!, { keyLengths: t.len as Tensor<'i32'> }),
  },
  {
    method: 'attention',
    label: 'no keys (filled), log-sum-exp',
    inputs: (g) => ({ q: filled(g, [1, 2, 3, 8]), k: g.zeros([1, 2, 0, 8]), v: g.zeros([1, 2, 0, 8]) }),
    run: (g, t) => g.attention(t.q!, t.k!, t.v!, { returnLogSumExp: true }),
  },

  // ------------------------------------------------------------------- GRU
  {
    method: 'gru',
    label: 'one layer, h0',
    inputs: (g) => ({ x: filled(g, [2, 3, 4]), h0: filled(g, [2, 5], 9), ...gruLayerInputs(g, 'l0', 4, 5) }),
    run: (g, t) => g.gru(t.x!, t.h0, gruLayer(t, 'l0')),
  },
  {
    method: 'gru',
    label: 'two layers, dropout, returnSequences: false',
    inputs: (g) => ({ x: filled(g, [2, 3, 4]), ...gruLayerInputs(g, 'l0', 4, 5), ...gruLayerInputs(g, 'l1', 5, 5, { seed: 20 }) }),
    run: (g, t) => g.gru(t.x!, undefined, [gruLayer(t, 'l0'), gruLayer(t, 'l1')], { dropout: { p: 0.3, seed: 1 }, returnSequences: false }),
  },
  {
    method: 'gru',
    label: 'two layers, stacked h0, layer norm',
    inputs: (g) => ({
      x: filled(g, [2, 3, 4]),
      h0: filled(g, [2, 2, 5], 9),
      ...gruLayerInputs(g, 'l0', 4, 5, { layerNorm: true }),
      ...gruLayerInputs(g, 'l1', 5, 5, { seed: 20 }),
    }),
    run: (g, t) => g.gru(t.x!, t.h0, [gruLayer(t, 'l0'), gruLayer(t, 'l1')]),
  },
  {
    method: 'gru',
    label: 'ensemble, per-member x',
    inputs: (g) => ({ x: filled(g, [2, 2, 3, 4]), ...gruLayerInputs(g, 'l0', 4, 5, { ensemble: 2 }) }),
    run: (g, t) => g.gru(t.x!, undefined, gruLayer(t, 'l0')),
  },
  {
    method: 'gruCell',
    inputs: (g) => ({ x: filled(g, [2, 4]), h: filled(g, [2, 5], 9), ...gruLayerInputs(g, 'l0', 4, 5) }),
    run: (g, t) => g.gruCell(t.x!, t.h!, gruLayer(t, 'l0')),
  },
  {
    method: 'gruCell',
    label: 'ensemble, shared x',
    inputs: (g) => ({ x: filled(g, [2, 4]), h: filled(g, [3, 2, 5], 9), ...gruLayerInputs(g, 'l0', 4, 5, { ensemble: 3 }) }),
    run: (g, t) => g.gruCell(t.x!, t.h!, gruLayer(t, 'l0')),
  },
  {
    method: 'gruRollout',
    label: 'one layer',
    inputs: (g) => ({ state: filled(g, [2, 4]), ...gruLayerInputs(g, 'l0', 4, 5), pw: filled(g, [4, 5], 11), pb: filled(g, [4], 12) }),
    run: (g, t) => g.gruRollout(t.state!, undefined, gruLayer(t, 'l0'), { steps: 3, outputProjection: { weight: t.pw!, bias: t.pb! } }),
  },
  {
    method: 'gruRollout',
    label: 'two layers, stacked h0, ensemble, per-member projection',
    inputs: (g) => ({
      state: filled(g, [2, 2, 4]),
      h0: filled(g, [2, 2, 2, 5], 9),
      ...gruLayerInputs(g, 'l0', 4, 5, { ensemble: 2 }),
      ...gruLayerInputs(g, 'l1', 5, 5, { ensemble: 2, seed: 20 }),
      pw: filled(g, [2, 4, 5], 11),
      pb: filled(g, [2, 4], 12),
    }),
    run: (g, t) => g.gruRollout(t.state!, t.h0, [gruLayer(t, 'l0'), gruLayer(t, 'l1')], { steps: 2, outputProjection: { weight: t.pw!, bias: t.pb! } }),
  },

  // ---------------------------------------------------------- tensor methods
  ...(['add', 'sub', 'mul', 'div', 'maximum', 'minimum'] as const).map(
    (op): OpCase => ({ method: `Tensor#${op}`, inputs: x34, run: (_, t) => t.x![op](3) }),
  ),
  ...PLAIN_UNARY_OPS.map((op): OpCase => ({ method: `Tensor#${op}`, inputs: x34, run: (_, t) => t.x![op]() })),
  ...(['sum', 'mean', 'max', 'min', 'argmax'] as const).map((op): OpCase => ({ method: `Tensor#${op}`, inputs: x34, run: (_, t) => t.x![op](0) })),
  { method: 'Tensor#leakyRelu', inputs: x34, run: (_, t) => t.x!.leakyRelu(0.1) },
  { method: 'Tensor#gelu', inputs: x34, run: (_, t) => t.x!.gelu() },
  { method: 'Tensor#activationGrad', inputs: (g) => ({ x: filled(g, [3, 4]), dy: filled(g, [3, 4], 2) }), run: (_, t) => t.x!.activationGrad('silu', t.dy!) },
  { method: 'Tensor#softmax', inputs: x34, run: (_, t) => t.x!.softmax() },
  { method: 'Tensor#logSoftmax', inputs: x34, run: (_, t) => t.x!.logSoftmax() },
  { method: 'Tensor#layerNorm', inputs: x34, run: (_, t) => t.x!.layerNorm() },
  { method: 'Tensor#transpose', inputs: x34, run: (_, t) => t.x!.transpose() },
  { method: 'Tensor#dropout', inputs: x34, run: (_, t) => t.x!.dropout(0.25, 2) },
  { method: 'Tensor#cast', inputs: x34, run: (_, t) => t.x!.cast('i32') },
  { method: 'Tensor#clone', inputs: x34, run: (_, t) => t.x!.clone() },
  { method: 'Tensor#to', inputs: x34, run: (g, t) => t.x!.to(g) },

  // ------------------------------------------------------------ training
  { method: 'oneHot', inputs: (g) => ({ i: g.tensor(Int32Array.from([2, -1, 0, 5]), [2, 2]) }), run: (g, t) => g.oneHot(t.i as Tensor<'i32'>, 3, 'f16') },
  ...(['mean', 'sum', 'none'] as const).map((reduction): OpCase => ({
    method: 'mseLoss',
    label: reduction,
    inputs: (g) => ({ p: filled(g, [3, 4]), t: filled(g, [3, 4], 2) }),
    run: (g, t) => g.mseLoss(t.p!, t.t!, { reduction }),
  })),
  {
    method: 'crossEntropy',
    label: 'class indices, an ignored row, f16 logits',
    inputs: (g) => ({ x: filled(g, [3, 4], 1, 'f16'), t: g.tensor(Int32Array.from([1, -100, 3])) }),
    run: (g, t) => g.crossEntropy(t.x!, t.t!),
  },
  {
    method: 'crossEntropy',
    label: 'probabilities, no reduction',
    inputs: (g) => ({ x: filled(g, [2, 3, 4]), p: filled(g, [2, 3, 4], 2, 'f32', 0, 0.5) }),
    run: (g, t) => g.crossEntropy(t.x!, t.p!, { reduction: 'none' }),
  },
  { method: 'noGrad', inputs: x34, run: (g, t) => g.noGrad(() => g.scope(() => g.exp(g.add(t.x!, 1)))) },
  {
    method: 'grad',
    inputs: (g) => ({ x: filled(g, [3, 4]), w: filled(g, [4], 2) }),
    run: (g, t) => g.grad((x: Tensor, w: Tensor) => g.sum(g.tanh(g.mul(x, w))), [t.x!, t.w!]),
  },
  {
    method: 'Tensor#backward',
    label: 'through linear, layerNorm, softmax and crossEntropy (the parameters’ gradients)',
    inputs: (g) => ({ x: filled(g, [3, 4]), w: filled(g, [5, 4], 2), b: filled(g, [5], 3), t: g.tensor(Int32Array.from([1, 4, 0])) }),
    run: (g, t) => {
      using w = t.w!.detach().requiresGrad_();
      using b = t.b!.detach().requiresGrad_();
      using loss = g.scope(() => g.crossEntropy(g.logSoftmax(g.layerNorm(g.linear(t.x!, w, b, 'gelu'))), t.t!));
      loss.backward();
      return g.scope(() => [g.copy(w.grad!), g.copy(b.grad!)]);
    },
  },
  {
    method: 'Tensor#backward',
    label: 'through broadcasting, maximum, max over an axis, a seed, retained',
    inputs: (g) => ({ a: filled(g, [3, 1]), b: filled(g, [4], 2), seed: filled(g, [3], 3) }),
    run: (g, t) => {
      using a = t.a!.detach().requiresGrad_();
      using b = t.b!.detach().requiresGrad_();
      using y = g.scope(() => g.max(g.maximum(g.mul(a, b), g.sqrt(g.add(g.abs(b), 1))), 1));
      y.backward(t.seed!, { retainGraph: true });
      return g.scope(() => [g.copy(a.grad!), g.copy(b.grad!)]);
    },
  },
];
