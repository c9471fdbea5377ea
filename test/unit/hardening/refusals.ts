/**
 * What every public method must refuse, as a table: one {@link MethodSpec} per method (the
 * coverage test fails until a new method has one). A spec gives a valid call whose arguments
 * go through `arg(name, value)`, so the test can substitute each in turn:
 * - each tensor argument by a non-tensor, a disposed tensor and another GpuCompute's tensor
 *   (and by undefined where it is required);
 * - each options object (the call's `options`, and nested ones: GRU weights, layer norm,
 *   dropout, output projection) by null, an array, a Tensor, one with a misspelt key (refused
 *   with the right name suggested), and, for every key it takes, one with a bad value.
 * Every option key must have its bad value here (checked against the op's exported key list).
 * `bad` adds the method's own cases: numbers, strings, shapes and sizes it cannot take.
 */
import { BACKWARD_OPTIONS } from '../../../src/compute/autograd/backward.js';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { CREATE_OPTIONS, DEVICE_REQUIREMENTS } from '../../../src/compute/gpu-compute.js';
import { PLAIN_UNARY_OPS } from '../../../src/compute/core/elementwise-ops.js';
import { ATTENTION_OPTIONS } from '../../../src/compute/ops/attention.js';
import { ACTIVATION_GRAD_OPTIONS, GELU_OPTIONS } from '../../../src/compute/ops/elementwise.js';
import {
  GRU_CELL_OPTIONS,
  GRU_DROPOUT_KEYS,
  GRU_LAYER_KEYS,
  GRU_LAYER_NORM_KEYS,
  GRU_OPTIONS,
  GRU_PROJECTION_KEYS,
  GRU_ROLLOUT_OPTIONS,
} from '../../../src/compute/ops/gru.js';
import { LOSS_OPTIONS } from '../../../src/compute/ops/losses.js';
import { LINEAR_OPTIONS, MATMUL_OPTIONS } from '../../../src/compute/ops/matmul.js';
import { RAND_OPTIONS, RANDN_OPTIONS } from '../../../src/compute/ops/random.js';
import { REDUCE_OPTIONS } from '../../../src/compute/ops/reduce.js';
import { SVD_OPTIONS } from '../../../src/compute/ops/svd.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { CaptureError, DisposedError, InvalidArgumentError, OutOfMemoryError, UnsupportedOperationError } from '../../../src/errors.js';

/** Passes `value` through, unless the test substitutes the argument `name`. */
export type Arg = <T>(name: string, value: T) => T;

/** The tensors the valid calls use (made once on the GpuCompute under test). */
export interface Fixtures {
  x: Tensor; // f32 [2, 3]
  y: Tensor; // f32 [2, 3]
  xi: Tensor<'i32'>; // i32 [2, 3]
  row: Tensor; // f32 [3]
  square: Tensor; // f32 [3, 3]
  q: Tensor; // f32 [2, 2, 3, 4]
  kv: Tensor; // f32 [2, 1, 5, 4]
  lengths: Tensor<'i32'>; // i32 [2]
  seq: Tensor; // f32 [2, 4, 3]  (batch, time, input 3)
  h: Tensor; // f32 [2, 5]     (batch, hidden 5)
  wIh: Tensor; // f32 [15, 3]
  wHh: Tensor; // f32 [15, 5]
  b: Tensor; // f32 [15]
  lnW: Tensor; // f32 [5]
  proj: Tensor; // f32 [3, 5]
  projB: Tensor; // f32 [3]
  wHhWide: Tensor; // f32 [15, 6]
  wIh16: Tensor; // f16 [15, 3]
  leaf: Tensor; // f32 [2, 3], requires grad
  loss: Tensor; // f32 [], sum(leaf²): a graph every backward of the specs retains
  one: Tensor; // f32 [], 1
}

/** An options object's keys and, for each, a bad value with what the refusal must say. */
export interface OptionSpec {
  keys: readonly string[];
  /** The argument takes a number too (the reductions' axis), so a number is no bad value for it. */
  orNumber?: boolean;
  bad: Record<string, readonly [value: unknown, message: RegExp]>;
}

type ErrorClass = typeof InvalidArgumentError | typeof DisposedError | typeof OutOfMemoryError | typeof UnsupportedOperationError | typeof CaptureError;

/** One more call the method must refuse. */
export interface BadCall {
  label: string;
  call: (g: GpuCompute, f: Fixtures) => unknown;
  error: ErrorClass;
  message: RegExp;
  /** It may call the backend before refusing (svd reads max and min to find NaN; an allocation that fails). */
  runsBackend?: boolean;
}

export interface MethodSpec {
  /** The op's name in messages (default: the method's name). */
  op?: string;
  /** A valid call. */
  call(g: GpuCompute, f: Fixtures, arg: Arg): unknown;
  /** Tensor arguments that may be left out. */
  optional?: readonly string[];
  /** The argument that is the receiver of a Tensor method (only a disposed tensor can stand in for it). */
  receiver?: string;
  /** The options objects among the arguments, by argument name. */
  options?: Readonly<Record<string, OptionSpec>>;
  bad?: readonly BadCall[];
}

const invalid = (label: string, call: BadCall['call'], message: RegExp, extra: Partial<BadCall> = {}): BadCall => ({
  label,
  call,
  error: InvalidArgumentError,
  message,
  ...extra,
});

const REDUCE: OptionSpec = {
  keys: REDUCE_OPTIONS,
  orNumber: true,
  bad: {
    axis: ['1', /axis must be an integer, got the string "1"/],
    keepDims: ['yes', /keepDims must be a boolean, got the string "yes"/],
  },
};

function reduceSpec(op: 'sum' | 'mean' | 'max' | 'min' | 'argmax'): MethodSpec {
  return {
    call: (g, f, arg) => g[op](arg('x', f.x), arg('options', { axis: 1, keepDims: true })),
    options: { options: REDUCE },
    bad: [
      invalid('a string axis', (g, f) => g[op](f.x, '1' as never), new RegExp(`^${op}: the second argument must be an axis \\(an integer\\) or \\{ axis, keepDims \\}, got the string "1"`)),
      invalid('an axis out of range', (g, f) => g[op](f.x, 2), /axis 2 is out of range for a tensor of rank 2 \(valid: -2..1\)/),
      invalid('a fractional axis', (g, f) => g[op](f.x, 0.5), /axis must be an integer, got 0.5/),
    ],
  };
}

function tensorReduceSpec(op: 'sum' | 'mean' | 'max' | 'min' | 'argmax'): MethodSpec {
  return {
    op,
    receiver: 'x',
    call: (_, f, arg) => arg('x', f.x)[op](arg('options', { axis: 0 })),
    options: { options: REDUCE },
  };
}

function binarySpec(method: 'add' | 'sub' | 'mul' | 'div' | 'maximum' | 'minimum'): MethodSpec {
  return {
    call: (g, f, arg) => g[method](arg('a', f.x), arg('b', f.y)),
    bad: [
      invalid('two numbers', (g) => g[method](1, 2), new RegExp(`^${method}: at least one operand must be a Tensor`)),
      invalid('a string operand', (g, f) => g[method](f.x, '2' as never), new RegExp(`^${method}: b must be a Tensor, got the string "2"`)),
      invalid('shapes that do not broadcast', (g, f) => g[method](f.x, f.square), /shapes \[2, 3\] and \[3, 3\] do not broadcast/),
      invalid('mixed dtypes', (g, f) => g[method](f.x, f.xi as never), /dtype mismatch \(f32 vs i32\)/),
      ...(method === 'div' ? [] : [invalid('a fraction with an i32 tensor', (g: GpuCompute, f: Fixtures) => g[method](f.xi, 1.5), /1.5 is not an i32 value/)]),
    ],
  };
}

const UNARY_SPECS = Object.fromEntries(
  PLAIN_UNARY_OPS.map((op): [string, MethodSpec] => [
    op,
    {
      call: (g, f, arg) => g[op](arg('x', f.x)),
      bad: op === 'neg' || op === 'abs' ? [] : [invalid('an i32 tensor', (g, f) => g[op](f.xi as never), new RegExp(`^${op}: x must be a float tensor`))],
    },
  ]),
);

const TENSOR_UNARY_SPECS = Object.fromEntries(
  PLAIN_UNARY_OPS.map((op): [string, MethodSpec] => [`Tensor#${op}`, { op, receiver: 'x', call: (_, f, arg) => arg('x', f.x)[op]() }]),
);

const TENSOR_BINARY_SPECS = Object.fromEntries(
  (['add', 'sub', 'mul', 'div', 'maximum', 'minimum'] as const).map((op): [string, MethodSpec] => [
    `Tensor#${op}`,
    { op, receiver: 'a', call: (_, f, arg) => arg('a', f.x)[op](arg('b', f.y)) },
  ]),
);

const GELU: OptionSpec = { keys: GELU_OPTIONS, bad: { approximate: ['exact', /approximate must be 'none' or 'tanh', got the string "exact"/] } };

const GRU_WEIGHTS: OptionSpec = {
  keys: GRU_LAYER_KEYS,
  bad: {
    wIh: [null, /wIh must be a Tensor, got null/],
    wHh: [5, /wHh must be a Tensor, got 5/],
    bIh: ['0', /bIh must be a Tensor, got the string "0"/],
    bHh: [[0], /bHh must be a Tensor, got \[0\]/],
    layerNorm: [true, /layerNorm must be an object \{ weight, bias, eps \}, got true/],
  },
};
const GRU_LN: OptionSpec = {
  keys: GRU_LAYER_NORM_KEYS,
  bad: {
    weight: [1, /layerNorm.weight must be a Tensor, got 1/],
    bias: ['b', /layerNorm.bias must be a Tensor, got the string "b"/],
    eps: [-1, /layerNorm.eps must be a finite number ≥ 0, got -1/],
  },
};
const GRU_COMMON_BAD = {
  precision: ['fast', /precision must be 'highest' or 'tf32', got the string "fast"/],
  path: ['fusd', /path must be 'auto', 'sequence', 'fused', 'steps' or 'persistent', got the string "fusd"; did you mean 'fused'\?/],
} as const;

/** A layer's weights through `arg`, so each tensor and the objects can be substituted. */
function gruWeights(f: Fixtures, arg: Arg) {
  return arg('weights', {
    wIh: arg('wIh', f.wIh),
    wHh: arg('wHh', f.wHh),
    bIh: arg('bIh', f.b),
    bHh: arg('bHh', f.b),
    layerNorm: arg('layerNorm', { weight: arg('layerNorm.weight', f.lnW), eps: 1e-5 }),
  });
}

const matrixOverflow = (g: GpuCompute) => g.full([4, 4], 1e38) as Tensor<'f32'>;

/** Every public method's refusals (see the file comment). */
export const SPECS: Readonly<Record<string, MethodSpec>> = {
  // ---------------------------------------------------------------- static
  'GpuCompute.create': {
    op: 'GpuCompute.create',
    call: async (g, _f, arg) => {
      const made = await (g.constructor as typeof GpuCompute).create(arg('options', { backend: 'cpu', logLevel: 'silent' }));
      made.dispose();
    },
    options: {
      options: {
        keys: CREATE_OPTIONS,
        bad: {
          backend: ['cdua', /unknown backend cdua .*did you mean 'cuda'\?/],
          device: [-1, /device must be an integer ≥ 0, got -1/],
          logger: ['console', /logger must be a function \(level, message\) => void, got the string "console"/],
          logLevel: ['loud', /unknown logLevel loud/],
          poolLimitBytes: ['1G', /poolLimitBytes must be a positive integer number of bytes, got the string "1G"/],
          threads: [0, /threads must be an integer in \[1, 256\], got 0/],
          onProgress: ['yes', /onProgress must be a function \(event\) => void, got the string "yes"/],
        },
      },
    },
  },
  'GpuCompute.selectDevice': {
    op: 'selectDevice',
    call: (g, _f, arg) => (g.constructor as typeof GpuCompute).selectDevice(arg('requirements', { platforms: ['cpu' as const] })),
    options: {
      requirements: {
        keys: DEVICE_REQUIREMENTS,
        bad: {
          minMemoryBytes: [-1, /minMemoryBytes must be a number ≥ 0, got -1/],
          tensorCores: ['yes', /tensorCores must be a boolean, got the string "yes"/],
          platforms: ['cpu', /platforms must be an array of backend kinds .*, got the string "cpu"/],
          fp16: [1, /fp16 must be a boolean, got 1/],
          bf16: [null, /bf16 must be a boolean, got null/],
        },
      },
    },
    bad: [invalid('an unknown platform', (g) => (g.constructor as typeof GpuCompute).selectDevice({ platforms: ['tpu' as never] }), /unknown platform tpu/)],
  },

  // ---------------------------------------------------------------- creation
  tensor: {
    call: (g) => g.tensor([1, 2, 3, 4], [2, 2]),
    bad: [
      invalid('string elements', (g) => g.tensor(['a', 'b'] as never), /^tensor: data\[0\] must be a number, got the string "a"/),
      invalid('an object element', (g) => g.tensor([1, {}, 3] as never), /^tensor: data\[1\] must be a number, got Object/),
      invalid('an undefined element', (g) => g.tensor([1, undefined, 3] as never), /^tensor: data\[1\] must be a number, got undefined/),
      invalid('a hole', (g) => g.tensor([1, , 3] as never), /^tensor: data\[1\] must be a number, got undefined/),
      invalid('a numeric string', (g) => g.tensor([1, '2', 3] as never), /^tensor: data\[1\] must be a number, got the string "2"/),
      invalid('strings, null and booleans', (g) => g.tensor(['1', 'x', null, true] as never), /^tensor: data\[0\] must be a number, got the string "1"/),
      invalid('null', (g) => g.tensor([1, null] as never), /^tensor: data\[1\] must be a number, got null/),
      invalid('a boolean', (g) => g.tensor([true] as never), /^tensor: data\[0\] must be a number, got true/),
      invalid('a BigInt element', (g) => g.tensor([1n] as never), /^tensor: data\[0\] must be a number, got the bigint 1n/),
      invalid('a Symbol element', (g) => g.tensor([Symbol('s')] as never), /^tensor: data\[0\] must be a number, got Symbol\(s\)/),
      invalid('nested arrays', (g) => g.tensor([[1, 2]] as never), /^tensor: data\[0\] must be a number, got \[1, 2\]/),
      invalid('data null', (g) => g.tensor(null as never), /^tensor: data must be an array of numbers or a typed array, got null/),
      invalid('data a string', (g) => g.tensor('12' as never), /^tensor: data must be an array of numbers or a typed array, got the string "12"/),
      invalid('a BigInt64Array', (g) => g.tensor(new BigInt64Array(2) as never), /BigInt64Array is not accepted/),
      invalid('a DataView', (g) => g.tensor(new DataView(new ArrayBuffer(4)) as never), /DataView is not accepted/),
      invalid('a string dim', (g) => g.tensor([1, 2], ['2'] as never), /^tensor: shape \["2"\] has an invalid dim the string "2"/),
      invalid('shape null', (g) => g.tensor([1, 2], null as never), /^tensor: shape must be an array of integers, got null/),
      invalid('too few values', (g) => g.tensor([1, 2, 3], [2, 2]), /^tensor: 3 values do not fill shape \[2, 2\] \(4 elements\)/),
      invalid('a dtype alias', (g) => g.tensor([1], [1], 'float32' as never), /^tensor: unknown dtype float32 \(use 'f32', 'f16', 'bf16' or 'i32'; float32 is 'f32'\)/),
      invalid('a fraction for i32', (g) => g.tensor([1.5], [1], 'i32'), /^tensor: value 1.5 at index 0 is not an i32 value/),
      invalid('a Uint16Array without a dtype', (g) => g.tensor(new Uint16Array(2) as never), /pass a dtype with a Uint16Array/),
    ],
  },
  empty: {
    call: (g) => g.empty([2, 3]),
    bad: [
      invalid('a negative dim', (g) => g.empty([-1]), /^empty: shape \[-1\] has an invalid dim -1/),
      invalid('a dtype name from elsewhere', (g) => g.empty([2], 'int32' as never), /^empty: unknown dtype int32 .*int32 is 'i32'/),
    ],
  },
  zeros: {
    call: (g) => g.zeros([2, 3]),
    bad: [
      invalid('a negative dim', (g) => g.zeros([-1]), /^zeros: shape \[-1\] has an invalid dim -1 \(dims are integers ≥ 0\)/),
      invalid('a string dim', (g) => g.zeros(['3'] as never), /^zeros: shape \["3"\] has an invalid dim the string "3"/),
      invalid('a fractional dim', (g) => g.zeros([2.5]), /^zeros: shape \[2.5\] has an invalid dim 2.5/),
      invalid('a number for the shape', (g) => g.zeros(3 as never), /^zeros: shape must be an array of integers, got 3/),
      invalid('an unknown dtype', (g) => g.zeros([2], 'float32' as never), /^zeros: unknown dtype float32/),
      invalid('more elements than a buffer can hold', (g) => g.zeros([2 ** 40, 2 ** 40]), /^zeros: a f32 tensor of shape \[1099511627776, 1099511627776\] holds 1\.209e\+24 elements .*more than any buffer can/),
      {
        label: '1e6 × 1e6 (4 TB)',
        call: (g) => g.zeros([1e6, 1e6]),
        error: OutOfMemoryError,
        message: /^zeros: a f32 tensor of shape \[1000000, 1000000\]: Out of device memory: requested 3\.64 TiB/,
        runsBackend: true,
      },
      { label: '2^40 elements', call: (g) => g.zeros([2 ** 40]), error: OutOfMemoryError, message: /^zeros: a f32 tensor of shape \[1099511627776\]: Out of device memory: requested 4\.00 TiB/, runsBackend: true },
      { label: '2^31 elements (8 GiB)', call: (g) => g.zeros([2 ** 31]), error: OutOfMemoryError, message: /^zeros: a f32 tensor of shape \[2147483648\]: Out of device memory: requested 8\.00 GiB/, runsBackend: true },
    ],
  },
  ones: {
    call: (g) => g.ones([2]),
    bad: [invalid('an unknown dtype', (g) => g.ones([2], 'float32' as never), /^ones: unknown dtype float32/), invalid('a negative dim', (g) => g.ones([-2]), /^ones: shape \[-2\]/)],
  },
  full: {
    call: (g) => g.full([2], 3),
    bad: [
      invalid('a string value', (g) => g.full([2], '1' as never), /^full: value must be a number, got the string "1"/),
      invalid('a fraction for i32', (g) => g.full([2], 0.5, 'i32'), /^full: 0.5 is not an i32 value/),
      invalid('an unknown dtype', (g) => g.full([2], 1, 'u8' as never), /^full: unknown dtype u8/),
    ],
  },
  rand: {
    call: (g, _f, arg) => g.rand([2, 3], arg('options', { seed: 1 })),
    options: {
      options: {
        keys: RAND_OPTIONS,
        bad: {
          seed: [-1, /seed must be an integer in \[0, 2\^53\), got -1/],
          dtype: ['i32', /dtype must be f32, f16 or bf16, got i32/],
          low: [NaN, /low must be a finite number, got NaN/],
          high: ['1', /high must be a finite number, got the string "1"/],
        },
      },
    },
    bad: [
      invalid('low above high', (g) => g.rand([2], { low: 2, high: 1 }), /^rand: high \(1\) must be greater than low \(2\)/),
      { label: '1e5 × 1e5', call: (g) => g.rand([1e5, 1e5]), error: OutOfMemoryError, message: /^rand: a f32 tensor of shape \[100000, 100000\]: Out of device memory: requested 37\.3 GiB/, runsBackend: true },
    ],
  },
  randn: {
    call: (g, _f, arg) => g.randn([2, 3], arg('options', { seed: 1 })),
    options: {
      options: {
        keys: RANDN_OPTIONS,
        bad: {
          seed: [1.5, /seed must be an integer in \[0, 2\^53\), got 1.5/],
          dtype: ['float16', /unknown dtype float16 .*float16 is 'f16'/],
          mean: [Infinity, /mean must be a finite number, got Infinity/],
          std: [-1, /std must be ≥ 0, got -1/],
        },
      },
    },
  },
  copy: { call: (g, f, arg) => g.copy(arg('x', f.x)) },
  cast: {
    call: (g, f, arg) => g.cast(arg('x', f.x), 'f16'),
    bad: [invalid('a dtype alias', (g, f) => g.cast(f.x, 'half' as never), /^cast: unknown dtype half .*half is 'f16'/)],
  },

  // ------------------------------------------------------------ elementwise
  ...UNARY_SPECS,
  add: binarySpec('add'),
  sub: binarySpec('sub'),
  mul: binarySpec('mul'),
  div: binarySpec('div'),
  maximum: binarySpec('maximum'),
  minimum: binarySpec('minimum'),
  vectorAdd: {
    call: (g, f, arg) => g.vectorAdd(arg('a', f.x), arg('b', f.y)),
    bad: [invalid('different shapes', (g, f) => g.vectorAdd(f.x, f.row), /^vectorAdd: shapes \[2, 3\] and \[3\] differ \(use add\(\) to broadcast\)/)],
  },
  leakyRelu: {
    call: (g, f, arg) => g.leakyRelu(arg('x', f.x), 0.1),
    bad: [
      invalid('a string slope', (g, f) => g.leakyRelu(f.x, '0.1' as never), /^leakyRelu: slope must be a finite number, got the string "0.1"/),
      invalid('a slope beyond f32', (g, f) => g.leakyRelu(f.x, 1e39), /^leakyRelu: slope 1e\+39 is beyond the f32 range/),
    ],
  },
  gelu: { call: (g, f, arg) => g.gelu(arg('x', f.x), arg('options', { approximate: 'tanh' as const })), options: { options: GELU } },
  activationGrad: {
    call: (g, f, arg) => g.activationGrad('gelu', arg('x', f.x), arg('dy', f.y), arg('options', { approximate: 'tanh' as const, slope: 0.1 })),
    options: {
      options: {
        keys: ACTIVATION_GRAD_OPTIONS,
        bad: { approximate: [1, /approximate must be 'none' or 'tanh', got 1/], slope: [NaN, /slope must be a finite number, got NaN/] },
      },
    },
    bad: [
      invalid('an unknown activation', (g, f) => g.activationGrad('swish' as never, f.x, f.y), /^activationGrad: unknown activation swish \(use /),
      invalid('a misspelt activation', (g, f) => g.activationGrad('sigmod' as never, f.x, f.y), /did you mean 'sigmoid'\?/),
      invalid('different shapes', (g, f) => g.activationGrad('relu', f.x, f.square), /x \[2, 3\] and dy \[3, 3\] must have the same shape/),
    ],
  },
  dropout: {
    call: (g, f, arg) => g.dropout(arg('x', f.x), 0.5, 1),
    bad: [
      invalid('p above 1', (g, f) => g.dropout(f.x, 1.5), /^dropout: p must be in \[0, 1\], got 1.5/),
      invalid('a string p', (g, f) => g.dropout(f.x, '0.5' as never), /^dropout: p must be in \[0, 1\], got the string "0.5"/),
      invalid('a negative seed', (g, f) => g.dropout(f.x, 0.5, -1), /^dropout: seed must be an integer in \[0, 2\^53\), got -1/),
    ],
  },

  // ----------------------------------------------------- rows, reductions, layout
  softmax: { call: (g, f, arg) => g.softmax(arg('x', f.x)), bad: [invalid('an i32 tensor', (g, f) => g.softmax(f.xi as never), /^softmax: x must be a float tensor/)] },
  logSoftmax: { call: (g, f, arg) => g.logSoftmax(arg('x', f.x)) },
  layerNorm: {
    call: (g, f, arg) => g.layerNorm(arg('x', f.x), arg('gamma', f.row), arg('beta', f.row), 1e-5),
    optional: ['gamma', 'beta'],
    bad: [
      invalid('a negative eps', (g, f) => g.layerNorm(f.x, null, null, -1), /^layerNorm: eps must be ≥ 0, got -1/),
      invalid('a string eps', (g, f) => g.layerNorm(f.x, null, null, '1e-5' as never), /^layerNorm: eps must be a finite number, got the string "1e-5"/),
      invalid('gamma of the wrong length', (g, f) => g.layerNorm(f.x, f.x), /^layerNorm: gamma must have shape \[3\]/),
    ],
  },
  sum: reduceSpec('sum'),
  mean: reduceSpec('mean'),
  max: reduceSpec('max'),
  min: reduceSpec('min'),
  argmax: reduceSpec('argmax'),
  transpose: {
    call: (g, f, arg) => g.transpose(arg('x', f.x)),
    bad: [invalid('a vector', (g, f) => g.transpose(f.row), /^transpose: needs a tensor of rank ≥ 2, got Tensor\(f32 \[3\]\)/)],
  },

  // -------------------------------------------------------------- products
  matmul: {
    call: (g, f, arg) => g.matmul(arg('a', f.x), arg('b', f.square), arg('options', { c: arg('c', f.x), bias: arg('bias', f.row), beta: 0.5 })),
    optional: ['c', 'bias'],
    options: {
      options: {
        keys: MATMUL_OPTIONS,
        bad: {
          transA: ['yes', /transA must be a boolean, got the string "yes"/],
          transB: [1, /transB must be a boolean, got 1/],
          alpha: [NaN, /alpha must be a finite number, got NaN/],
          beta: ['1', /beta must be a finite number, got the string "1"/],
          c: [5, /c must be a Tensor, got 5/],
          bias: [[1], /bias must be a Tensor, got \[1\]/],
          activation: ['swish', /unknown activation swish \(use /],
          precision: ['fast', /precision must be 'highest' or 'tf32', got the string "fast"/],
          engine: ['cudnn', /engine must be 'auto', 'kernels' or 'cublas', got the string "cudnn"/],
          autotune: ['no', /autotune must be a boolean, got the string "no"/],
        },
      },
    },
    bad: [
      invalid('inner dims that differ', (g, f) => g.matmul(f.x, f.x), /^matmul: inner dimensions differ/),
      invalid('beta without c', (g, f) => g.matmul(f.x, f.square, { beta: 1 }), /^matmul: beta is 1 but no c was given/),
      invalid('an i32 operand', (g, f) => g.matmul(f.xi as never, f.square), /^matmul: a must be f32, f16 or bf16, got Tensor\(i32 \[2, 3\]\); cast it first, e.g. gpu.cast\(a, 'f32'\)/),
      {
        label: 'a 1e5 × 1e5 output',
        call: (g) => {
          using a = g.zeros([1e5, 1]);
          using b = g.zeros([1, 1e5]);
          return g.matmul(a, b);
        },
        error: OutOfMemoryError,
        message: /^matmul: a f32 tensor of shape \[100000, 100000\]: Out of device memory: requested 37\.3 GiB/,
        runsBackend: true,
      },
    ],
  },
  linear: {
    call: (g, f, arg) => g.linear(arg('x', f.x), arg('weight', f.square), arg('bias', f.row), 'relu', arg('options', { precision: 'highest' as const })),
    optional: ['bias'],
    options: {
      options: {
        keys: LINEAR_OPTIONS,
        bad: {
          precision: ['tf23', /precision must be 'highest' or 'tf32', got the string "tf23"; did you mean 'tf32'\?/],
          engine: [0, /engine must be 'auto', 'kernels' or 'cublas', got 0/],
          autotune: [null, /autotune must be a boolean, got null/],
        },
      },
    },
    bad: [
      invalid('an unknown activation', (g, f) => g.linear(f.x, f.square, undefined, 'swish' as never), /^linear: unknown activation swish/),
      invalid('a weight of the wrong width', (g, f) => g.linear(f.x, f.h), /^linear: x \[2, 3\] must end in the 5 input features of weight \[2, 5\]/),
    ],
  },
  svd: {
    call: (g, f, arg) => g.svd(arg('a', f.square) as Tensor<'f32'>, arg('options', { rank: 2 })),
    options: {
      options: {
        keys: SVD_OPTIONS,
        bad: {
          rank: [0, /rank must be an integer in \[1, min\(m, n\) = 3\] for a Tensor\(f32 \[3, 3\]\), got 0/],
          oversample: [-1, /oversample must be an integer ≥ 0, got -1/],
          powerIterations: [1.5, /powerIterations must be an integer ≥ 0, got 1.5/],
          seed: ['0', /seed must be an integer in \[0, 2\^53\), got the string "0"/],
          full: ['yes', /full must be a boolean, got the string "yes"/],
        },
      },
    },
    bad: [
      invalid('an i32 matrix', (g, f) => g.svd(f.xi as never), /^svd: a must be f32, got Tensor\(i32 \[2, 3\]\)/),
      invalid('a vector', (g, f) => g.svd(f.row as Tensor<'f32'>), /^svd: a must be a 2-D matrix \[m, n\], got Tensor\(f32 \[3\]\)/),
      invalid('NaN', (g) => {
        using a = g.full([2, 2], NaN) as Tensor<'f32'>;
        return g.svd(a);
      }, /^svd: a Tensor\(f32 \[2, 2\]\) contains NaN or ±Infinity/, { runsBackend: true }),
      invalid('entries near 1e38 (σ overflows f32)', (g) => {
        using a = matrixOverflow(g);
        return g.svd(a);
      }, /^svd: the largest singular value of a Tensor\(f32 \[4, 4\]\) .* is beyond f32's range/, { runsBackend: true }),
      invalid('entries near 1e38, full', (g) => {
        using a = matrixOverflow(g);
        return g.svd(a, { full: true });
      }, /^svd: the largest singular value .* is beyond f32's range/, { runsBackend: true }),
    ],
  },
  attention: {
    call: (g, f, arg) => g.attention(arg('q', f.q), arg('k', f.kv), arg('v', f.kv), arg('options', { keyLengths: arg('keyLengths', f.lengths), causal: true })),
    optional: ['keyLengths'],
    options: {
      options: {
        keys: ATTENTION_OPTIONS,
        bad: {
          causal: ['yes', /causal must be a boolean, got the string "yes"/],
          scale: [NaN, /scale must be a finite number, got NaN/],
          keyLengths: [[1], /keyLengths has 1 entries, expected one per batch entry \(2\)/],
          returnLogSumExp: [1, /returnLogSumExp must be a boolean, got 1/],
        },
      },
    },
    bad: [
      invalid('a key length beyond seqK', (g, f) => g.attention(f.q, f.kv, f.kv, { keyLengths: [6, 1] }), /^attention: keyLengths\[0\] must be an integer in \[0, 5\]/),
      invalid('a string key length', (g, f) => g.attention(f.q, f.kv, f.kv, { keyLengths: [1, '2'] as never }), /keyLengths\[1\] must be an integer in \[0, 5\] \(the key sequence length\), got the string "2"/),
      invalid('a hole in keyLengths', (g, f) => g.attention(f.q, f.kv, f.kv, { keyLengths: [1, ,] as never }), /keyLengths\[1\] must be an integer .*got undefined/),
      invalid('a rank-3 q', (g, f) => g.attention(f.x.reshape([1, 2, 3]), f.kv, f.kv), /^attention: q must be \[batch, heads, seq, headDim\]/),
    ],
  },
  gru: {
    call: (g, f, arg) => g.gru(arg('x', f.seq), arg('h0', f.h), gruWeights(f, arg), arg('options', { dropout: arg('dropout', { p: 0.1, seed: 1 }) })),
    optional: ['h0', 'layerNorm.weight', 'bIh', 'bHh'],
    options: {
      options: {
        keys: GRU_OPTIONS,
        bad: {
          ...GRU_COMMON_BAD,
          returnSequences: ['false', /returnSequences must be a boolean, got the string "false"/],
          dropout: [0.5, /dropout must be an object \{ p, seed \}, got 0.5/],
        },
      },
      weights: GRU_WEIGHTS,
      layerNorm: GRU_LN,
      dropout: { keys: GRU_DROPOUT_KEYS, bad: { p: [2, /dropout.p must be in \[0, 1\], got 2/], seed: [-3, /seed must be an integer in \[0, 2\^53\), got -3/] } },
    },
    bad: [
        invalid('wHh with one column too many', (g, f) => g.gru(f.seq, undefined, { wIh: f.wIh, wHh: f.wHhWide }), /^gru: wHh must be \[15, 5\] \(3H, H with H = 5\), got \[15, 6\]/),
      invalid('an f16 wIh beside f32 weights', (g, f) => g.gru(f.seq, undefined, { wIh: f.wIh16, wHh: f.wHh, bIh: f.b, bHh: f.b }), /^gru: dtype mismatch: wIh is f16 but the GRU's other tensors are f32; .*gpu\.cast\(wIh, 'f32'\)/),
      invalid('an empty stack', (g, f) => g.gru(f.seq, undefined, []), /^gru: weights must hold at least one layer/),
      invalid('weights null', (g, f) => g.gru(f.seq, undefined, null as never), /^gru: weights .* are required, got null/),
      invalid('options null', (g, f) => g.gru(f.seq, undefined, { wIh: f.wIh, wHh: f.wHh }, null as never), /^gru: options must be an object .*got null/),
    ],
  },
  gruCell: {
    call: (g, f, arg) => g.gruCell(arg('x', f.x), arg('h', f.h), gruWeights(f, arg), arg('options', { path: 'auto' as const })),
    optional: ['layerNorm.weight', 'bIh', 'bHh'],
    options: { options: { keys: GRU_CELL_OPTIONS, bad: GRU_COMMON_BAD }, weights: GRU_WEIGHTS, layerNorm: GRU_LN },
    bad: [
      invalid('h of the wrong shape, named h', (g, f) => g.gruCell(f.x, f.x, { wIh: f.wIh, wHh: f.wHh }), /^gruCell: h must be \[2, 5\] \(batch, hidden\), got \[2, 3\]/),
      invalid('a stack', (g, f) => g.gruCell(f.x, f.h, [{ wIh: f.wIh, wHh: f.wHh }] as never), /^gruCell: takes one layer's weights, not a stack/),
    ],
  },
  gruRollout: {
    call: (g, f, arg) =>
      g.gruRollout(arg('state', f.x), arg('h0', f.h), gruWeights(f, arg), arg('options', { steps: 2, outputProjection: arg('outputProjection', { weight: arg('outputProjection.weight', f.proj), bias: arg('outputProjection.bias', f.projB) }) })),
    optional: ['h0', 'layerNorm.weight', 'bIh', 'bHh', 'outputProjection.bias'],
    options: {
      options: {
        keys: GRU_ROLLOUT_OPTIONS,
        bad: {
          ...GRU_COMMON_BAD,
          steps: [0, /steps must be an integer ≥ 1, got 0/],
          outputProjection: [null, /outputProjection \{ weight, bias\? \} is required/],
        },
      },
      weights: GRU_WEIGHTS,
      layerNorm: GRU_LN,
      outputProjection: {
        keys: GRU_PROJECTION_KEYS,
        bad: { weight: [undefined, /outputProjection.weight must be a Tensor \[3, 5\] \(hidden → the 3 inputs of layer 0\), got undefined/], bias: [2, /outputProjection.bias must be a Tensor, got 2/] },
      },
    },
    bad: [
      invalid('options left out', (g, f) => g.gruRollout(f.x, undefined, { wIh: f.wIh, wHh: f.wHh }, undefined as never), /^gruRollout: options \{ steps, outputProjection \} are required/),
      {
        label: 'a billion steps',
        call: (g, f) => g.gruRollout(f.x, undefined, { wIh: f.wIh, wHh: f.wHh }, { steps: 1e9, outputProjection: { weight: f.proj } }),
        error: OutOfMemoryError,
        // The one-go path (CUDA's, the CPU's) allocates the projected states first.
        message: /^gruRollout: a f32 tensor of shape \[2, 1000000000, 3\]: Out of device memory/,
        runsBackend: true,
      },
    ],
  },

  // ------------------------------------------------- memory, streams, life
  memoryStats: { call: (g) => g.memoryStats() },
  trim: { call: (g) => g.trim() },
  synchronize: { call: (g) => g.synchronize() },
  createStream: { call: (g) => g.createStream() },
  currentStream: { call: (g) => g.currentStream() },
  setStream: {
    call: (g) => g.setStream(g.currentStream()),
    bad: [
      invalid('null', (g) => g.setStream(null as never), /^setStream: stream must be a stream from createStream\(\), got null/),
      // The backend knows its streams: it refuses, before queueing anything.
      invalid('a stream it did not create', (g) => g.setStream({ id: 99 }), /^setStream: the cpu backend did not create this stream \(id 99\)/, { runsBackend: true }),
      invalid('a number', (g) => g.setStream(0 as never), /^setStream: stream must be a stream from createStream\(\), got 0/),
    ],
  },
  dispose: { call: () => undefined },
  scope: {
    call: (g) => g.scope(() => g.ones([2])).dispose(),
    bad: [
      invalid('a number for fn', (g) => g.scope(1 as never), /^scope: fn must be a function, got number/),
      invalid('an async fn', (g, f) => g.scope(async () => g.add(f.x, 1)), /^scope: fn must be synchronous \(it returned a promise\)/, { runsBackend: true }),
    ],
  },
  keep: {
    call: (g, f, arg) => {
      g.keep(arg('t', f.x));
    },
  },
  capture: {
    call: (g, f, arg) => {
      using step = g.capture((a: Tensor) => g.add(a, 1), [arg('exampleInputs[0]', f.x)]);
      step(f.y).dispose();
    },
    bad: [
      invalid('a number for fn', (g, f) => g.capture(1 as never, [f.x]), /^capture: fn must be a function, got 1/),
      invalid('a tensor for exampleInputs', (g, f) => g.capture((a: Tensor) => a, f.x as never), /^capture: exampleInputs must be an array of tensors, got Tensor\(f32 \[2, 3\]\)/),
      {
        // Where capture records (CUDA) the capture refuses it; where it runs eagerly, the first call does.
        label: 'fn returning its input',
        call: (g, f) => g.capture((a: Tensor) => a, [f.x])(f.x),
        error: CaptureError,
        message: /^capture: fn returned Tensor\(f32 \[2, 3\]\), which it did not create/,
        runsBackend: true,
      },
      {
        label: 'a call with another shape',
        call: (g, f) => {
          using step = g.capture((a: Tensor) => g.neg(a), [f.x]);
          step(f.row);
        },
        error: CaptureError,
        message: /^capture: input 0 is Tensor\(f32 \[3\]\) but was captured as f32 \[2, 3\]/,
        runsBackend: true,
      },
    ],
  },
  checkTensor: {
    op: 'myOp',
    call: (g, f, arg) => g.checkTensor('myOp', arg('t', f.x), 't'),
  },

  // ------------------------------------------------------------ tensors
  'Tensor#reshape': {
    op: 'reshape',
    receiver: 'x',
    call: (_, f, arg) => arg('x', f.x).reshape(3, 2),
    bad: [
      invalid('an extra argument', (_, f) => (f.x.reshape as (...dims: unknown[]) => Tensor)([2, 3], 5), /^reshape: takes the dims as one array or as separate numbers, not both; got \[2, 3\] and then 5/),
      invalid('the wrong size', (_, f) => f.x.reshape(4), /^reshape: cannot reshape Tensor\(f32 \[2, 3\]\) \(6 elements\) to \[4\]/),
      invalid('two -1', (_, f) => f.x.reshape(-1, -1), /^reshape: only one dim may be -1/),
      invalid('a string dim', (_, f) => f.x.reshape('6' as never), /^reshape: shape \["6"\] has an invalid dim the string "6"/),
    ],
  },
  'Tensor#toArray': { op: 'toArray', receiver: 'x', call: (_, f, arg) => arg('x', f.x).toArray() },
  'Tensor#toArraySync': { op: 'toArraySync', receiver: 'x', call: (_, f, arg) => arg('x', f.x).toArraySync() },
  'Tensor#toRawArray': { op: 'toRawArray', receiver: 'x', call: (_, f, arg) => arg('x', f.x).toRawArray() },
  'Tensor#toRawArraySync': { op: 'toRawArraySync', receiver: 'x', call: (_, f, arg) => arg('x', f.x).toRawArraySync() },
  'Tensor#assertLive': { op: 'assertLive', receiver: 'x', call: (_, f, arg) => arg('x', f.x).assertLive() },
  'Tensor#toString': { call: (_, f) => f.x.toString() },
  'Tensor#dispose': { call: () => undefined },
  ...TENSOR_UNARY_SPECS,
  ...TENSOR_BINARY_SPECS,
  'Tensor#sum': tensorReduceSpec('sum'),
  'Tensor#mean': tensorReduceSpec('mean'),
  'Tensor#max': tensorReduceSpec('max'),
  'Tensor#min': tensorReduceSpec('min'),
  'Tensor#argmax': tensorReduceSpec('argmax'),
  'Tensor#leakyRelu': {
    op: 'leakyRelu',
    receiver: 'x',
    call: (_, f, arg) => arg('x', f.x).leakyRelu(0.1),
    bad: [invalid('NaN slope', (_, f) => f.x.leakyRelu(NaN), /^leakyRelu: slope must be a finite number, got NaN/)],
  },
  'Tensor#gelu': { op: 'gelu', receiver: 'x', call: (_, f, arg) => arg('x', f.x).gelu(arg('options', {})), options: { options: GELU } },
  'Tensor#activationGrad': {
    op: 'activationGrad',
    receiver: 'x',
    call: (_, f, arg) => arg('x', f.x).activationGrad('leakyRelu', arg('dy', f.y), arg('options', { slope: 0.2 })),
    options: { options: { keys: ACTIVATION_GRAD_OPTIONS, bad: { approximate: ['tan', /did you mean 'tanh'\?/], slope: ['0.2', /slope must be a finite number, got the string "0.2"/] } } },
  },
  'Tensor#softmax': { op: 'softmax', receiver: 'x', call: (_, f, arg) => arg('x', f.x).softmax() },
  'Tensor#logSoftmax': { op: 'logSoftmax', receiver: 'x', call: (_, f, arg) => arg('x', f.x).logSoftmax() },
  'Tensor#layerNorm': {
    op: 'layerNorm',
    receiver: 'x',
    call: (_, f, arg) => arg('x', f.x).layerNorm(arg('gamma', f.row), arg('beta', f.row)),
    optional: ['gamma', 'beta'],
  },
  'Tensor#transpose': { op: 'transpose', receiver: 'x', call: (_, f, arg) => arg('x', f.x).transpose() },
  'Tensor#dropout': {
    op: 'dropout',
    receiver: 'x',
    call: (_, f, arg) => arg('x', f.x).dropout(0.5, 2),
    bad: [invalid('p = NaN', (_, f) => f.x.dropout(NaN), /^dropout: p must be in \[0, 1\], got NaN/)],
  },
  'Tensor#cast': {
    op: 'cast',
    receiver: 'x',
    call: (_, f, arg) => arg('x', f.x).cast('bf16'),
    bad: [invalid('an unknown dtype', (_, f) => f.x.cast('f64' as never), /^cast: unknown dtype f64/)],
  },
  'Tensor#clone': { op: 'copy', receiver: 'x', call: (_, f, arg) => arg('x', f.x).clone() },
  'Tensor#to': {
    op: 'to',
    receiver: 'x',
    call: (g, f, arg) => arg('x', f.x).to(g),
    bad: [
      invalid('a target that is not a GpuCompute', (_, f) => f.x.to('cuda:1' as never), /^to: target must be a GpuCompute, got the string "cuda:1"/),
      invalid('a backend for a target', (g, f) => f.x.to(g.backend as never), /^to: target must be a GpuCompute, got /),
      {
        label: 'a disposed target',
        call: async (g, f) => {
          const gone = await (g.constructor as typeof GpuCompute).create({ backend: 'cpu', logLevel: 'silent' });
          gone.dispose();
          return f.x.to(gone);
        },
        error: DisposedError,
        message: /^to: the target GpuCompute has been disposed/,
      },
    ],
  },

  // ------------------------------------------------------------ autograd
  'Tensor#backward': {
    op: 'backward',
    receiver: 'x',
    call: (_, f, arg) => {
      arg('x', f.loss).backward(arg('seed', f.one), arg('options', { retainGraph: true }));
      f.leaf.zeroGrad();
    },
    optional: ['seed'],
    options: { options: { keys: BACKWARD_OPTIONS, bad: { retainGraph: ['yes', /retainGraph must be a boolean, got the string "yes"/] } } },
    bad: [
      invalid('a root that does not require grad', (_, f) => f.x.backward(), /^backward: x Tensor\(f32 \[2, 3\]\) does not require grad/),
      invalid('a root of many elements without a seed', (g, f) => {
        using w = f.x.detach().requiresGrad_();
        using y = g.mul(w, 2);
        y.backward();
      }, /^backward: x Tensor\(f32 \[2, 3\]\) is not a scalar/, { runsBackend: true }),
      invalid('a seed of another shape', (g, f) => {
        using w = f.x.detach().requiresGrad_();
        using y = g.mul(w, 2);
        y.backward(f.row);
      }, /^backward: seed must have the shape and dtype of x Tensor\(f32 \[2, 3\]\), got Tensor\(f32 \[3\]\)/, { runsBackend: true }),
      invalid('a second backward through a released graph', (g, f) => {
        using w = f.x.detach().requiresGrad_();
        using loss = g.scope(() => g.sum(g.exp(w)));
        loss.backward();
        loss.backward();
      }, /^backward: the graph through exp was already used by a backward/, { runsBackend: true }),
    ],
  },
  'Tensor#zeroGrad': { op: 'zeroGrad', receiver: 'x', call: (_, f, arg) => arg('x', f.x).zeroGrad() },
  'Tensor#requiresGrad_': {
    op: 'requiresGrad_',
    receiver: 'x',
    call: (_, f, arg) => {
      using leaf = f.x.detach();
      arg('x', leaf).requiresGrad_();
    },
    bad: [
      invalid('an i32 tensor', (_, f) => f.xi.requiresGrad_(), /^requiresGrad_: only float tensors \(f32, f16, bf16\) have gradients/),
      invalid('a string', (_, f) => f.x.requiresGrad_('yes' as never), /^requiresGrad_: requiresGrad must be a boolean, got the string "yes"/),
      invalid('a recorded result', (g, f) => {
        using w = f.x.detach().requiresGrad_();
        using y = g.neg(w);
        y.requiresGrad_();
      }, /^requiresGrad_: Tensor\(f32 \[2, 3\]\) is the result of a recorded op, not a leaf/, { runsBackend: true }),
    ],
  },
  'Tensor#detach': { op: 'detach', receiver: 'x', call: (_, f, arg) => arg('x', f.x).detach() },
  noGrad: {
    call: (g) => g.noGrad(() => g.ones([2])).dispose(),
    bad: [
      invalid('a number for fn', (g) => g.noGrad(1 as never), /^noGrad: fn must be a function, got 1/),
      invalid('an async fn', (g) => g.noGrad(async () => undefined), /^noGrad: fn must be synchronous \(it returned a promise\)/),
    ],
  },
  grad: {
    call: (g, f, arg) => g.grad((a: Tensor) => g.sum(g.mul(a, a)), [arg('inputs[0]', f.x)]),
    bad: [
      invalid('a number for fn', (g, f) => g.grad(1 as never, [f.x]), /^grad: fn must be a function, got 1/),
      invalid('a tensor for inputs', (g, f) => g.grad((a: Tensor) => a, f.x as never), /^grad: inputs must be an array of float tensors, got Tensor\(f32 \[2, 3\]\)/),
      invalid('an i32 input', (g, f) => g.grad((a: Tensor) => a, [f.xi]), /^grad: inputs\[0\] must be a float tensor/),
      invalid('a result of many elements', (g, f) => g.grad((a: Tensor) => g.exp(a), [f.x]), /^grad: fn must return a one-element tensor/, { runsBackend: true }),
    ],
  },
  oneHot: {
    call: (g, f, arg) => g.oneHot(arg('indices', f.xi), 7, 'bf16'),
    bad: [
      invalid('float indices', (g, f) => g.oneHot(f.x as never, 3), /^oneHot: indices must be an i32 tensor of class indices, got Tensor\(f32 \[2, 3\]\)/),
      invalid('no classes', (g, f) => g.oneHot(f.xi, 0), /^oneHot: classes must be an integer in \[1, 2147483647\], got 0/),
      invalid('an i32 dtype', (g, f) => g.oneHot(f.xi, 3, 'i32'), /^oneHot: dtype must be f32, f16 or bf16, got i32/),
    ],
  },
  mseLoss: {
    call: (g, f, arg) => g.mseLoss(arg('pred', f.x), arg('target', f.y), arg('options', { reduction: 'sum' as const })),
    options: { options: { keys: LOSS_OPTIONS, bad: { reduction: ['avg', /reduction must be 'mean', 'sum' or 'none', got the string "avg"/] } } },
    bad: [
      invalid('shapes that differ', (g, f) => g.mseLoss(f.x, f.square), /^mseLoss: pred \[2, 3\] and target \[3, 3\] must have the same shape/),
      invalid('i32 targets', (g, f) => g.mseLoss(f.x, f.xi as never), /^mseLoss: target must be a float tensor/),
    ],
  },
  crossEntropy: {
    call: (g, f, arg) => g.crossEntropy(arg('logits', f.x), arg('targets', f.lengths), arg('options', { reduction: 'mean' as const })),
    options: { options: { keys: LOSS_OPTIONS, bad: { reduction: ['all', /reduction must be 'mean', 'sum' or 'none', got the string "all"/] } } },
    bad: [
      invalid('class indices of another shape', (g, f) => g.crossEntropy(f.x, f.xi), /^crossEntropy: class indices must have the shape of logits \[2, 3\] without its class axis, \[2\]; got Tensor\(i32 \[2, 3\]\)/),
      invalid('probabilities of another shape', (g, f) => g.crossEntropy(f.x, f.square), /^crossEntropy: class probabilities must have the shape of logits \[2, 3\], got Tensor\(f32 \[3, 3\]\)/),
      invalid('scalar logits', (g) => {
        using x = g.ones([]);
        using t = g.tensor(Int32Array.from([0]), []);
        return g.crossEntropy(x, t);
      }, /^crossEntropy: logits must be \[\.\.\., classes\] with at least one class, got Tensor\(f32 \[\]\)/, { runsBackend: true }),
    ],
  },
};
