/**
 * Properties of every op, written once for any backend: random shapes (empty dims included),
 * dtypes, broadcast patterns, scalars, special values and option combinations, each with the
 * op run on a GpuCompute and a float64 reference of the same outputs (rounded to the output
 * dtype, as the library stores them). The CPU backend is held to the reference
 * (`properties.test.ts`); every other backend to the CPU backend (`test/gpu/hardening`).
 *
 * Outputs that no two correct implementations need to share bit for bit (the signs of singular
 * vectors, say) are compared through what they determine (the reconstruction, UᵀU).
 */
import fc from 'fast-check';
import { bf16BitsToF32, f16BitsToF32, f32ToBf16Bits, f32ToF16Bits, type DType } from '../../../src/compute/core/dtype.js';
import { PLAIN_UNARY_OPS, type ActivationName } from '../../../src/compute/core/elementwise-ops.js';
import { MATMUL_ACTIVATIONS, type MatmulActivation } from '../../../src/compute/core/matmul-plan.js';
import type { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { GruLayerWeights } from '../../../src/compute/ops/gru.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { referenceAttention } from '../attention/reference.js';
import { referenceErf, referenceErfc } from '../compute/helpers.js';
import { broadcastRef, reduceRef, rowsRef } from '../compute/reference.js';
import { ULP_BOUND } from '../cpu-simd/ulp-bounds.js';
import { refCell, type RefLayer } from '../gru/reference.js';
import { referenceProduct } from '../matmul/reference.js';
import { knownMatrix } from '../svd/known-spectrum.js';
import { read, type Output } from './fuzz.js';

/** Services a reference may use that are part of the contract, not of the op: the uniform stream dropout draws from. */
export interface RefTools {
  /** The first `n` uniforms in [0, 1) of the Philox stream keyed by `seed` (as `gpu.rand` gives them). */
  uniform(seed: number, n: number): ArrayLike<number>;
  /** The first `n` standard normals of the stream keyed by `seed` (as `gpu.randn` gives them in f32). */
  normal(seed: number, n: number): ArrayLike<number>;
}

/** {@link RefTools} from `g`'s random ops (the CPU backend's, whose streams every backend matches). */
export function refTools(g: GpuCompute): RefTools {
  return {
    uniform: (seed, n) => {
      using u = g.rand([n], { seed });
      return u.toArraySync();
    },
    normal: (seed, n) => {
      using z = g.randn([n], { seed });
      return z.toArraySync();
    },
  };
}

/** What an op's outputs may differ by: relative (norm-wise) and absolute. */
export interface Tolerance {
  relative: number;
  absolute?: number;
  /**
   * Partial sums may overflow f32 in one order of summation and not another, so where either
   * side is ±Infinity or NaN the two need not agree (the finite elements still must).
   */
  overflow?: boolean;
}

export interface OpProperty<C> {
  /** Names the property in reports. */
  name: string;
  /** The public GpuCompute methods it exercises. */
  ops: readonly string[];
  arbitrary: fc.Arbitrary<C>;
  /** Runs the op on `g`; its inputs and results are disposed before it returns. */
  run(g: GpuCompute, c: C): Record<string, Output>;
  /** The float64 reference of the same outputs. */
  reference(c: C, tools: RefTools): Record<string, Output>;
  /** The error allowed on output `name`: against the reference (the CPU) or against the CPU backend (any other). */
  tolerance(c: C, name: string, against: 'reference' | 'cpu'): Tolerance;
}

// ------------------------------------------------------------------ values

export const FLOAT_DTYPES = ['f32', 'f16', 'bf16'] as const;
export type FloatDType = (typeof FLOAT_DTYPES)[number];

/** Unit roundoff of each dtype (half its ulp at 1). */
export const UNIT_ROUNDOFF: Record<FloatDType, number> = { f32: 2 ** -24, f16: 2 ** -11, bf16: 2 ** -8 };
/** Norm-wise bound of a backend's elementwise result against the CPU's (f32 arithmetic on the device). */
const DEVICE_ELEMENTWISE: Record<FloatDType, number> = { f32: 1e-5, f16: 1e-3, bf16: 8e-3 };
/** The largest finite f32. */
const F32_MAX = (2 - 2 ** -23) * 2 ** 127;
/** Smallest normal of each dtype: a device may flush what is below it to zero. */
export const SMALLEST_NORMAL: Record<FloatDType, number> = { f32: 2 ** -126, f16: 2 ** -14, bf16: 2 ** -126 };
/**
 * Smallest subnormal of each dtype: its spacing below the normals, where a result computed in f32
 * and one rounded from float64 may land a step apart (f32 rounding first can make a tie).
 */
const SMALLEST_SUBNORMAL: Record<FloatDType, number> = { f32: 2 ** -149, f16: 2 ** -24, bf16: 2 ** -133 };

/** How a value is stored in `dtype` (f32 rounding first, as every conversion does). */
export function roundTo(dtype: DType): (v: number) => number {
  switch (dtype) {
    case 'f16':
      return (v) => f16BitsToF32(f32ToF16Bits(v));
    case 'bf16':
      return (v) => bf16BitsToF32(f32ToBf16Bits(v));
    case 'f32':
      return Math.fround;
    case 'i32':
      return (v) => v | 0;
  }
}

/** A tensor's contents as a case holds them: values already representable in the dtype. */
export interface TensorSpec {
  shape: number[];
  dtype: DType;
  values: number[];
}

function isTensorSpec(v: unknown): v is TensorSpec {
  return typeof v === 'object' && v !== null && Array.isArray((v as TensorSpec).values) && Array.isArray((v as TensorSpec).shape) && typeof (v as TensorSpec).dtype === 'string';
}

/**
 * `c` with every subnormal input element flushed to a zero of its sign, as a device that flushes
 * subnormals reads them; `c` itself when it has none.
 */
export function flushSubnormalInputs<C>(c: C): C {
  let changed = false;
  const visit = (v: unknown): unknown => {
    if (isTensorSpec(v)) {
      if (v.dtype === 'i32') return v;
      const tiny = SMALLEST_NORMAL[v.dtype];
      const values = v.values.map((x) => (x !== 0 && Math.abs(x) < tiny ? ((changed = true), x < 0 ? -0 : 0) : x));
      return { ...v, values };
    }
    if (Array.isArray(v)) return v.map(visit);
    if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, visit(x)]));
    return v;
  };
  const flushed = visit(c) as C;
  return changed ? flushed : c;
}

export function make(g: GpuCompute, t: TensorSpec): Tensor {
  return g.tensor(t.dtype === 'i32' ? Int32Array.from(t.values) : Float32Array.from(t.values), t.shape, t.dtype);
}

const size = (shape: readonly number[]) => shape.reduce((p, d) => p * d, 1);

/** An Output of reference values, rounded to `dtype`. */
function out(values: ArrayLike<number>, shape: readonly number[], dtype: DType): Output {
  const r = roundTo(dtype);
  return { values: Array.from(values, (v) => r(v)), shape: [...shape], dtype };
}

/** Runs `fn` with tensors made from `specs`, reads what it returns, and disposes everything. */
function withTensors<T extends Record<string, TensorSpec | undefined>>(
  g: GpuCompute,
  specs: T,
  fn: (t: { [K in keyof T]: T[K] extends TensorSpec ? Tensor : Tensor | undefined }) => Record<string, Tensor>,
): Record<string, Output> {
  const made: Record<string, Tensor | undefined> = {};
  try {
    for (const [k, s] of Object.entries(specs)) made[k] = s ? make(g, s) : undefined;
    const results = fn(made as never);
    try {
      return Object.fromEntries(Object.entries(results).map(([k, t]) => [k, read(t)]));
    } finally {
      for (const t of new Set(Object.values(results))) t.dispose();
    }
  } finally {
    for (const t of Object.values(made)) t?.dispose();
  }
}

/** Finite values of moderate size. */
const moderate = (bound = 4) => fc.double({ min: -bound, max: bound, noNaN: true });
/** Moderate values, now and then a special one: signed zeros, NaN, infinities, tiny and huge. */
const anyFloat = fc.oneof(
  { weight: 12, arbitrary: moderate() },
  { weight: 1, arbitrary: fc.constantFrom(0, -0, NaN, Infinity, -Infinity, 1e-30, -1e-30, 3e38, -3e38, 1e-6, 7e4, -7e4) },
);
const anyInt = fc.oneof({ weight: 4, arbitrary: fc.integer({ min: -100, max: 100 }) }, { weight: 1, arbitrary: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }) });

/**
 * A dim: mostly 1..max, sometimes 0, and, when `large` is given, now and then max+1..large (past
 * the tile and block sizes of the device kernels: 16, 32, 64, 128, 256).
 */
function dim(max = 4, large = 0): fc.Arbitrary<number> {
  const small = [{ weight: 12, arbitrary: fc.integer({ min: 1, max }) }, { weight: 1, arbitrary: fc.constant(0) }];
  return large > max ? fc.oneof(...small, { weight: 3, arbitrary: fc.integer({ min: max + 1, max: large }) }) : fc.oneof(...small);
}

function shapeArb(minRank: number, maxRank: number, maxDim = 4, maxSize = 1200, large = 300): fc.Arbitrary<number[]> {
  return fc.array(dim(maxDim, large), { minLength: minRank, maxLength: maxRank }).filter((s) => size(s) <= maxSize);
}

function valuesArb(n: number, dtype: DType, element: fc.Arbitrary<number>): fc.Arbitrary<number[]> {
  const r = roundTo(dtype);
  return fc.array(element, { minLength: n, maxLength: n }).map((v) => v.map(r));
}

function tensorArb(shape: number[], dtype: DType, element: fc.Arbitrary<number> = dtype === 'i32' ? anyInt : anyFloat): fc.Arbitrary<TensorSpec> {
  return valuesArb(size(shape), dtype, element).map((values) => ({ shape, dtype, values }));
}

/** The NumPy broadcast of two shapes (already known to broadcast). */
function broadcastShape(a: readonly number[], b: readonly number[]): number[] {
  const rank = Math.max(a.length, b.length);
  return Array.from({ length: rank }, (_, i) => {
    const x = a[a.length - rank + i] ?? 1;
    const y = b[b.length - rank + i] ?? 1;
    return x === 1 ? y : x;
  });
}

/** Whether the op runs as a GpuCompute method or as the tensor's own method. */
const via = fc.constantFrom('gpu', 'tensor');

function elementwiseTolerance(dtype: DType, n: number, against: 'reference' | 'cpu'): Tolerance {
  if (dtype === 'i32') return { relative: 0 };
  if (against === 'reference') return { relative: 2 * UNIT_ROUNDOFF[dtype], absolute: Math.sqrt(n) * SMALLEST_SUBNORMAL[dtype] };
  return { relative: DEVICE_ELEMENTWISE[dtype], absolute: Math.sqrt(n) * SMALLEST_NORMAL[dtype] };
}

// ------------------------------------------------------------- references

const sigmoidRef = (x: number) => (x >= 0 ? 1 / (1 + Math.exp(-x)) : Math.exp(x) / (1 + Math.exp(x)));
const GELU_K = Math.sqrt(2 / Math.PI);
const phi = (x: number) => Math.exp(-0.5 * x * x) / Math.sqrt(2 * Math.PI);
/** Φ(x), from erfc on the left so small values keep their digits. */
const cdf = (x: number) => (x < 0 ? 0.5 * referenceErfc(-x / Math.SQRT2) : 0.5 * (1 + referenceErf(x / Math.SQRT2)));

/** f(x) of every unary op (leakyRelu with `slope`; geluTanh is gelu's tanh form). */
const UNARY_REF: Record<string, (x: number, slope: number) => number> = {
  neg: (x) => -x,
  abs: Math.abs,
  exp: Math.exp,
  log: Math.log,
  sqrt: Math.sqrt,
  rsqrt: (x) => 1 / Math.sqrt(x),
  relu: (x) => (Number.isNaN(x) ? x : x > 0 ? x : 0),
  // The slope is used in f32 (leakySlope), so one that rounds to 0 is 0 (and 0·−∞ is NaN).
  leakyRelu: (x, slope) => (x > 0 ? x : Math.fround(slope) * x),
  sigmoid: sigmoidRef,
  tanh: Math.tanh,
  gelu: (x) => x * cdf(x),
  // 0.5·x·(1 + tanh u) as x·σ(2u): 1 + tanh u cancels on the left tail, even in float64.
  geluTanh: (x) => x * sigmoidRef(2 * GELU_K * (x + 0.044715 * x ** 3)),
  silu: (x) => x * sigmoidRef(x),
  softplus: (x) => (x > 0 ? x + Math.log1p(Math.exp(-x)) : Math.log1p(Math.exp(x))),
};

/** f'(x) of every activation, written from the calculus. */
const DERIVATIVE_REF: Record<ActivationName | 'geluTanh', (x: number, slope: number) => number> = {
  relu: (x) => (Number.isNaN(x) ? x : x > 0 ? 1 : 0),
  leakyRelu: (x, slope) => (Number.isNaN(x) ? x : x > 0 ? 1 : Math.fround(slope)),
  sigmoid: (x) => sigmoidRef(x) * (1 - sigmoidRef(x)),
  tanh: (x) => 1 - Math.tanh(x) ** 2,
  gelu: (x) => cdf(x) + x * phi(x),
  // σ(v) + x·σ(v)σ(−v)·dv/dx with v = 2u: the same derivative without 1 + tanh u and 1 − tanh²u.
  geluTanh: (x) => {
    const v = 2 * GELU_K * (x + 0.044715 * x ** 3);
    return sigmoidRef(v) + x * sigmoidRef(v) * sigmoidRef(-v) * 2 * GELU_K * (1 + 3 * 0.044715 * x * x);
  },
  silu: (x) => sigmoidRef(x) * (1 + x * (1 - sigmoidRef(x))),
  softplus: sigmoidRef,
};

// ------------------------------------------------------------------ unary

interface UnaryCase {
  op: (typeof PLAIN_UNARY_OPS)[number] | 'leakyRelu' | 'gelu' | 'geluTanh';
  x: TensorSpec;
  slope: number;
  via: 'gpu' | 'tensor';
}

const unaryProperty: OpProperty<UnaryCase> = {
  name: 'unary ops',
  ops: [...PLAIN_UNARY_OPS, 'leakyRelu', 'gelu'],
  arbitrary: fc
    .record({ op: fc.constantFrom(...PLAIN_UNARY_OPS, 'leakyRelu' as const, 'gelu' as const, 'geluTanh' as const), shape: shapeArb(0, 3), float: fc.constantFrom(...FLOAT_DTYPES), int: fc.boolean() })
    .chain(({ op, shape, float, int }) =>
      fc.record({
        op: fc.constant(op),
        x: tensorArb(shape, int && (op === 'neg' || op === 'abs') ? 'i32' : float),
        slope: moderate(1),
        via,
      }),
    ),
  run(g, c) {
    return withTensors(g, { x: c.x }, ({ x }) => {
      if (c.op === 'leakyRelu') return { y: c.via === 'gpu' ? g.leakyRelu(x, c.slope) : x.leakyRelu(c.slope) };
      if (c.op === 'gelu' || c.op === 'geluTanh') {
        const options = { approximate: c.op === 'gelu' ? ('none' as const) : ('tanh' as const) };
        return { y: c.via === 'gpu' ? g.gelu(x, options) : x.gelu(options) };
      }
      return { y: c.via === 'gpu' ? g[c.op](x) : x[c.op]() };
    });
  },
  reference(c): Record<string, Output> {
    const f = UNARY_REF[c.op]!;
    return { y: out(c.x.values.map((v) => f(v, c.slope)), c.x.shape, c.x.dtype) };
  },
  tolerance: (c, _name, against) => kernelTolerance(c.x.dtype, c.x.values.length, against, ULP_BOUND[c.op] + 0.5),
};

/**
 * An elementwise tolerance that allows f32 results against float64 the kernels' documented
 * accuracy, `ulps` (each rounding in a 16-bit dtype is coarser than a few f32 ulps).
 */
function kernelTolerance(dtype: DType, n: number, against: 'reference' | 'cpu', ulps: number): Tolerance {
  const base = elementwiseTolerance(dtype, n, against);
  if (dtype !== 'f32' || against !== 'reference') return base;
  return { relative: Math.max(base.relative, ulps * 2 ** -23), absolute: Math.ceil(ulps) * (base.absolute ?? 0) };
}

// -------------------------------------------------------- activation grads

interface GradCase {
  name: ActivationName;
  tanh: boolean;
  x: TensorSpec;
  dy: TensorSpec;
  slope: number;
}

const gradProperty: OpProperty<GradCase> = {
  name: 'activationGrad',
  ops: ['activationGrad'],
  arbitrary: fc
    .record({ shape: shapeArb(0, 3), dtype: fc.constantFrom(...FLOAT_DTYPES) })
    .chain(({ shape, dtype }) =>
      fc.record({
        name: fc.constantFrom(...(Object.keys(DERIVATIVE_REF).filter((n) => n !== 'geluTanh') as ActivationName[])),
        tanh: fc.boolean(),
        x: tensorArb(shape, dtype),
        dy: tensorArb(shape, dtype, moderate()),
        slope: moderate(1),
      }),
    ),
  run(g, c) {
    return withTensors(g, { x: c.x, dy: c.dy }, ({ x, dy }) => ({ dx: g.activationGrad(c.name, x, dy, { slope: c.slope, approximate: c.tanh ? 'tanh' : 'none' }) }));
  },
  reference(c): Record<string, Output> {
    const f = DERIVATIVE_REF[c.name === 'gelu' && c.tanh ? 'geluTanh' : c.name];
    return { dx: out(c.x.values.map((v, i) => c.dy.values[i]! * f(v, c.slope)), c.x.shape, c.x.dtype) };
  },
  tolerance(c, _name, against) {
    const op = `${c.name === 'gelu' && c.tanh ? 'geluTanh' : c.name}Grad` as const;
    // f'(x) within its ulp bound, then one rounding of the product with dy.
    return kernelTolerance(c.x.dtype, c.x.values.length, against, ULP_BOUND[op] + 1);
  },
};

// ----------------------------------------------------------------- binary

const BINARY = ['add', 'sub', 'mul', 'div', 'maximum', 'minimum'] as const;
type BinaryName = (typeof BINARY)[number];

interface BinaryCase {
  op: BinaryName | 'vectorAdd';
  a: TensorSpec | number;
  b: TensorSpec | number;
  outShape: number[];
  dtype: DType;
  via: 'gpu' | 'tensor';
}

/** A shape that broadcasts to `outShape`: its trailing dims, each kept or 1. */
function broadcastable(outShape: number[]): fc.Arbitrary<number[]> {
  return fc
    .record({ drop: fc.integer({ min: 0, max: outShape.length }), ones: fc.array(fc.boolean(), { minLength: outShape.length, maxLength: outShape.length }) })
    .map(({ drop, ones }) => outShape.slice(drop).map((d, i) => (ones[i + drop] ? 1 : d)));
}

const BINARY_REF: Record<BinaryName, { float: (a: number, b: number) => number; int: (a: number, b: number) => number }> = {
  add: { float: (a, b) => a + b, int: (a, b) => (a + b) | 0 },
  sub: { float: (a, b) => a - b, int: (a, b) => (a - b) | 0 },
  mul: { float: (a, b) => a * b, int: Math.imul },
  div: { float: (a, b) => a / b, int: () => NaN },
  maximum: { float: (a, b) => (Number.isNaN(a) || Number.isNaN(b) ? NaN : Math.max(a, b)), int: Math.max },
  minimum: { float: (a, b) => (Number.isNaN(a) || Number.isNaN(b) ? NaN : Math.min(a, b)), int: Math.min },
};

const binaryProperty: OpProperty<BinaryCase> = {
  name: 'binary ops with broadcasting',
  ops: [...BINARY, 'vectorAdd'],
  arbitrary: fc
    .record({
      op: fc.constantFrom(...BINARY, 'vectorAdd' as const),
      outShape: shapeArb(0, 4, 3),
      dtype: fc.constantFrom<DType>(...FLOAT_DTYPES, 'i32'),
      scalar: fc.constantFrom('none', 'left', 'right'),
    })
    .filter(({ op, dtype }) => !(op === 'div' && dtype === 'i32'))
    .chain(({ op, outShape, dtype, scalar }) => {
      const element = dtype === 'i32' ? anyInt : anyFloat;
      const operand = (isScalar: boolean) =>
        isScalar ? element.map((v) => (dtype === 'i32' ? v | 0 : v)) : op === 'vectorAdd' ? tensorArb(outShape, dtype) : broadcastable(outShape).chain((s) => tensorArb(s, dtype));
      return fc.record({
        op: fc.constant(op),
        a: operand(op !== 'vectorAdd' && scalar === 'left'),
        b: operand(op !== 'vectorAdd' && scalar === 'right'),
        outShape: fc.constant(outShape),
        dtype: fc.constant(dtype),
        via,
      });
    }),
  run(g, c) {
    const specs = { a: typeof c.a === 'number' ? undefined : c.a, b: typeof c.b === 'number' ? undefined : c.b };
    return withTensors(g, specs, ({ a, b }) => {
      const left = a ?? (c.a as number);
      const right = b ?? (c.b as number);
      if (c.op === 'vectorAdd') return { y: g.vectorAdd(a!, b!) };
      if (c.via === 'tensor' && a) return { y: a[c.op](right) };
      return { y: g[c.op](left, right) };
    });
  },
  reference(c): Record<string, Output> {
    const f = BINARY_REF[c.op === 'vectorAdd' ? 'add' : c.op][c.dtype === 'i32' ? 'int' : 'float'];
    const r = roundTo(c.dtype);
    // A JS number operand stands for a tensor of the other's dtype: it is stored (rounded) first.
    const side = (x: TensorSpec | number) => (typeof x === 'number' ? { shape: [] as number[], values: [r(x)] } : x);
    const a = side(c.a);
    const b = side(c.b);
    const shape = broadcastShape(a.shape, b.shape);
    return { y: out(broadcastRef(a.shape, a.values, b.shape, b.values, shape, f), shape, c.dtype) };
  },
  tolerance: (c, _name, against) => elementwiseTolerance(c.dtype, size(c.outShape), against),
};


// ------------------------------------------------------------- reductions

const REDUCTIONS = ['sum', 'mean', 'max', 'min', 'argmax'] as const;
type ReductionName = (typeof REDUCTIONS)[number];

interface ReduceCase {
  op: ReductionName;
  x: TensorSpec;
  axis: number | undefined;
  keepDims: boolean;
  form: 'number' | 'options';
  via: 'gpu' | 'tensor';
}

const REDUCE_REF: Record<ReductionName, (slice: number[], int: boolean) => number> = {
  sum: (s, int) => s.reduce((a, v) => (int ? (a + v) | 0 : a + v), 0),
  mean: (s) => s.reduce((a, v) => a + v, 0) / s.length,
  max: (s) => (s.some(Number.isNaN) ? NaN : Math.max(...s)),
  min: (s) => (s.some(Number.isNaN) ? NaN : Math.min(...s)),
  argmax: (s) => {
    const nan = s.findIndex(Number.isNaN);
    return nan >= 0 ? nan : s.indexOf(Math.max(...s));
  },
};

const reduceProperty: OpProperty<ReduceCase> = {
  name: 'reductions',
  ops: [...REDUCTIONS],
  arbitrary: fc
    .record({ op: fc.constantFrom(...REDUCTIONS), shape: shapeArb(0, 3), int: fc.boolean(), float: fc.constantFrom(...FLOAT_DTYPES) })
    .chain(({ op, shape, int, float }) =>
      fc.record({
        op: fc.constant(op),
        x: tensorArb(shape, int && op !== 'mean' ? 'i32' : float),
        axis: shape.length === 0 ? fc.constant(undefined) : fc.option(fc.integer({ min: -shape.length, max: shape.length - 1 }), { nil: undefined }),
        keepDims: fc.boolean(),
        form: fc.constantFrom('number', 'options'),
        via,
      }),
    )
    // max, min and argmax refuse an empty axis (no identity); that refusal is the refusal table's.
    .filter((c) => {
      if (c.op === 'sum' || c.op === 'mean') return true;
      if (c.axis === undefined) return size(c.x.shape) > 0;
      return c.x.shape.at(c.axis)! > 0 || size(c.x.shape.filter((_, i) => i !== (c.axis! + c.x.shape.length) % c.x.shape.length)) === 0;
    }),
  run(g, c) {
    return withTensors(g, { x: c.x }, ({ x }) => {
      const arg = c.form === 'number' && !c.keepDims && c.axis !== undefined ? c.axis : { ...(c.axis === undefined ? {} : { axis: c.axis }), keepDims: c.keepDims };
      return { y: c.via === 'gpu' ? g[c.op](x, arg) : x[c.op](arg) };
    });
  },
  reference(c): Record<string, Output> {
    const { shape } = c.x;
    const axis = c.axis === undefined ? undefined : (c.axis + shape.length) % shape.length;
    const outShape = axis === undefined ? (c.keepDims ? shape.map(() => 1) : []) : c.keepDims ? shape.map((d, i) => (i === axis ? 1 : d)) : shape.filter((_, i) => i !== axis);
    const int = c.x.dtype === 'i32';
    const values = size(outShape) === 0 ? [] : reduceRef(shape, c.x.values, axis, (s) => REDUCE_REF[c.op](s, int));
    return { y: out(values, outShape, c.op === 'argmax' ? 'i32' : c.x.dtype) };
  },
  tolerance(c, _name, against) {
    const dtype = c.op === 'argmax' ? 'i32' : c.x.dtype;
    if (dtype === 'i32' || c.op === 'max' || c.op === 'min') return elementwiseTolerance(dtype, 1, against);
    const n = c.axis === undefined ? size(c.x.shape) : c.x.shape.at(c.axis)!;
    const sumAbs = c.x.values.reduce((a, v) => a + (Number.isFinite(v) ? Math.abs(v) : 0), 0);
    // The CPU and the reference both sum in f64, in different orders: where terms cancel, each
    // may lose up to n·2^-53·Σ|x| (a large pair cancelling can hide a small term from one only).
    if (against === 'reference') {
      const { relative, absolute = 0 } = elementwiseTolerance(dtype, 1, against);
      return { relative, absolute: absolute + 2 * n * 2 ** -53 * sumAbs };
    }
    // A device sums in f32 (a tree): n·u·Σ|x| at worst, relative to |Σx|.
    return {
      relative: DEVICE_ELEMENTWISE[dtype],
      absolute: 2 * n * 2 ** -24 * sumAbs + Math.sqrt(c.x.values.length) * SMALLEST_NORMAL[dtype],
      overflow: sumAbs >= F32_MAX,
    };
  },
};

// ---------------------------------------------------------------- rows

interface RowsCase {
  op: 'softmax' | 'logSoftmax' | 'layerNorm';
  x: TensorSpec;
  gamma: TensorSpec | undefined;
  beta: TensorSpec | undefined;
  eps: number;
  via: 'gpu' | 'tensor';
}

const rowsProperty: OpProperty<RowsCase> = {
  name: 'row ops (softmax, logSoftmax, layerNorm)',
  ops: ['softmax', 'logSoftmax', 'layerNorm'],
  arbitrary: fc
    .record({ op: fc.constantFrom('softmax' as const, 'logSoftmax' as const, 'layerNorm' as const), shape: shapeArb(0, 3, 6, 1500), dtype: fc.constantFrom(...FLOAT_DTYPES) })
    .chain(({ op, shape, dtype }) => {
      const cols = shape.length === 0 ? 1 : shape.at(-1)!;
      const param = fc.option(tensorArb([cols], dtype, moderate(2)), { nil: undefined });
      return fc.record({
        op: fc.constant(op),
        x: tensorArb(shape, dtype, moderate(8)),
        gamma: op === 'layerNorm' ? param : fc.constant(undefined),
        beta: op === 'layerNorm' ? param : fc.constant(undefined),
        eps: fc.constantFrom(1e-5, 1e-3, 0.1),
        via,
      });
    }),
  run(g, c) {
    return withTensors(g, { x: c.x, gamma: c.gamma, beta: c.beta }, ({ x, gamma, beta }) => {
      if (c.op === 'layerNorm') return { y: c.via === 'gpu' ? g.layerNorm(x, gamma, beta, c.eps) : x.layerNorm(gamma, beta, c.eps) };
      return { y: c.via === 'gpu' ? g[c.op](x) : x[c.op]() };
    });
  },
  reference(c): Record<string, Output> {
    const cols = c.x.shape.length === 0 ? 1 : c.x.shape.at(-1)!;
    const f = (row: number[]): number[] => {
      if (c.op === 'layerNorm') {
        const mean = row.reduce((a, v) => a + v, 0) / cols;
        const variance = row.reduce((a, v) => a + (v - mean) ** 2, 0) / cols;
        return row.map((v, j) => ((v - mean) / Math.sqrt(variance + c.eps)) * (c.gamma?.values[j] ?? 1) + (c.beta?.values[j] ?? 0));
      }
      const max = Math.max(...row);
      const sum = row.reduce((a, v) => a + Math.exp(v - max), 0);
      return row.map((v) => (c.op === 'softmax' ? Math.exp(v - max) / sum : v - max - Math.log(sum)));
    };
    return { y: out(cols === 0 ? [] : rowsRef(c.x.values, cols, f), c.x.shape, c.x.dtype) };
  },
  tolerance(c, _name, against) {
    const dtype = c.x.dtype as FloatDType;
    // f32 statistics over a row: a few roundings per element, more for the log-sum-exp.
    return against === 'reference'
      ? { relative: 4 * UNIT_ROUNDOFF[dtype], absolute: 1e-6 * Math.sqrt(c.x.values.length) }
      : { relative: 4 * DEVICE_ELEMENTWISE[dtype], absolute: 1e-5 * Math.sqrt(c.x.values.length) };
  },
};

// --------------------------------------------------- layout and creation

interface LayoutCase {
  op: 'transpose' | 'copy' | 'cast' | 'tensor' | 'zeros' | 'ones' | 'full' | 'empty';
  x: TensorSpec;
  target: DType;
  value: number;
  data: 'numbers' | 'Float64Array' | 'Float32Array' | 'Int16Array';
}

const CAST_INT = (v: number) => (Number.isNaN(v) ? 0 : v >= 2 ** 31 ? 2 ** 31 - 1 : v <= -(2 ** 31) ? -(2 ** 31) : Math.trunc(v));

const layoutProperty: OpProperty<LayoutCase> = {
  name: 'layout and creation (transpose, copy, cast, tensor, zeros, ones, full, empty)',
  ops: ['transpose', 'copy', 'cast', 'tensor', 'zeros', 'ones', 'full', 'empty'],
  arbitrary: fc
    .record({
      op: fc.constantFrom('transpose' as const, 'copy' as const, 'cast' as const, 'tensor' as const, 'zeros' as const, 'ones' as const, 'full' as const, 'empty' as const),
      dtype: fc.constantFrom<DType>(...FLOAT_DTYPES, 'i32'),
    })
    .chain(({ op, dtype }) =>
      fc.record({
        op: fc.constant(op),
        x: shapeArb(op === 'transpose' ? 2 : 0, 4, 4, 1200, 100).chain((s) => tensorArb(s, dtype)),
        target: fc.constantFrom<DType>(...FLOAT_DTYPES, 'i32'),
        value: dtype === 'i32' ? anyInt : anyFloat,
        data: fc.constantFrom('numbers' as const, 'Float64Array' as const, 'Float32Array' as const, 'Int16Array' as const),
      }),
    ),
  run(g, c) {
    const { shape, dtype, values } = c.x;
    switch (c.op) {
      case 'tensor': {
        // Int16Array holds integers only: used for i32 data within its range.
        const ints = dtype === 'i32' && c.data === 'Int16Array' && values.every((v) => v >= -32768 && v < 32768);
        const data = ints ? Int16Array.from(values) : c.data === 'Float64Array' ? Float64Array.from(values) : c.data === 'Float32Array' && dtype !== 'i32' ? Float32Array.from(values) : values;
        return withTensors(g, {}, () => ({ y: g.tensor(data, shape, dtype) }));
      }
      case 'zeros':
        return withTensors(g, {}, () => ({ y: g.zeros(shape, dtype) }));
      case 'ones':
        return withTensors(g, {}, () => ({ y: g.ones(shape, dtype) }));
      case 'full':
        return withTensors(g, {}, () => ({ y: g.full(shape, c.value, dtype) }));
      case 'empty': {
        using t = g.empty(shape, dtype);
        // Its contents are unspecified: only the shape, dtype and size are.
        return { y: { values: new Array<number>(t.size).fill(0), shape: [...t.shape], dtype: t.dtype } };
      }
      case 'transpose':
        return withTensors(g, { x: c.x }, ({ x }) => ({ y: g.transpose(x) }));
      case 'copy':
        return withTensors(g, { x: c.x }, ({ x }) => ({ y: g.copy(x) }));
      case 'cast':
        return withTensors(g, { x: c.x }, ({ x }) => ({ y: g.cast(x, c.target) }));
    }
  },
  reference(c): Record<string, Output> {
    const { shape, dtype, values } = c.x;
    switch (c.op) {
      case 'tensor':
      case 'copy':
        return { y: out(values, shape, dtype) };
      case 'zeros':
      case 'empty':
        return { y: out(new Array<number>(size(shape)).fill(0), shape, dtype) };
      case 'ones':
        return { y: out(new Array<number>(size(shape)).fill(1), shape, dtype) };
      case 'full':
        return { y: out(new Array<number>(size(shape)).fill(c.value), shape, dtype) };
      case 'transpose': {
        const [rows, cols] = shape.slice(-2) as [number, number];
        const batch = size(shape.slice(0, -2));
        const t: number[] = [];
        for (let b = 0; b < batch; b++) for (let j = 0; j < cols; j++) for (let i = 0; i < rows; i++) t.push(values[(b * rows + i) * cols + j]!);
        return { y: out(t, [...shape.slice(0, -2), cols, rows], dtype) };
      }
      case 'cast':
        // Float → i32 truncates toward zero, saturates, NaN → 0; everything else rounds (through f32).
        return { y: out(c.target === 'i32' && dtype !== 'i32' ? values.map(CAST_INT) : values, shape, c.target) };
    }
  },
  tolerance: () => ({ relative: 0 }),
};

// --------------------------------------------------------------- random

interface RandomCase {
  op: 'rand' | 'randn' | 'dropout';
  shape: number[];
  dtype: FloatDType;
  seed: number;
  a: number;
  b: number;
  x: TensorSpec;
  p: number;
}

const randomProperty: OpProperty<RandomCase> = {
  name: 'random ops (rand, randn, dropout) from the Philox uniform stream',
  ops: ['rand', 'randn', 'dropout'],
  arbitrary: fc
    .record({ op: fc.constantFrom('rand' as const, 'randn' as const, 'dropout' as const), shape: shapeArb(0, 3, 8, 4000, 1000), dtype: fc.constantFrom(...FLOAT_DTYPES) })
    .chain(({ op, shape, dtype }) =>
      fc.record({
        op: fc.constant(op),
        shape: fc.constant(shape),
        dtype: fc.constant(dtype),
        seed: fc.oneof(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER })),
        a: moderate(10),
        b: fc.double({ min: 0.01, max: 10, noNaN: true }),
        x: tensorArb(shape, dtype, moderate()),
        p: fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom(0, 1, 0.5)),
      }),
    ),
  run(g, c) {
    const uniform = () => g.rand(c.shape, { seed: c.seed, dtype: c.dtype, low: c.a, high: c.a + c.b });
    switch (c.op) {
      case 'rand':
        // Twice: the same seed gives the same values.
        return withTensors(g, {}, () => ({ y: uniform(), again: uniform() }));
      case 'randn':
        return withTensors(g, {}, () => ({ y: g.randn(c.shape, { seed: c.seed, dtype: c.dtype, mean: c.a, std: c.b }), unit: g.randn(c.shape, { seed: c.seed }) }));
      case 'dropout':
        return withTensors(g, { x: c.x }, ({ x }) => ({ y: g.dropout(x, c.p, c.seed) }));
    }
  },
  reference(c, tools): Record<string, Output> {
    const n = size(c.shape);
    switch (c.op) {
      case 'rand': {
        // The contract: a + (b − a)·u in f32 without contraction, u the stream's uniforms.
        const u = tools.uniform(c.seed, n);
        const low = Math.fround(c.a);
        const span = Math.fround(Math.fround(c.a + c.b) - low);
        const values = Array.from(u, (v) => Math.fround(low + Math.fround(span * v)));
        return { y: out(values, c.shape, c.dtype), again: out(values, c.shape, c.dtype) };
      }
      case 'randn': {
        // mean + std·z, z the same stream's standard normals (read back in f32: one rounding apart).
        const z = tools.normal(c.seed, n);
        return { y: out(Array.from(z, (v) => c.a + c.b * v), c.shape, c.dtype), unit: out(z, c.shape, 'f32') };
      }
      case 'dropout': {
        // Kept where u ≥ f32(p), scaled by f32(1/(1 − p)); p = 0 copies, p = 1 zeroes.
        const u = tools.uniform(c.seed, n);
        const threshold = Math.fround(c.p);
        const scale = Math.fround(1 / (1 - c.p));
        const values = c.x.values.map((v, i) => (c.p === 0 ? v : c.p === 1 ? 0 : u[i]! >= threshold ? v * scale : 0));
        return { y: out(values, c.shape, c.dtype) };
      }
    }
  },
  tolerance(c, name, against) {
    const n = size(c.shape);
    // The uniforms, and so rand and dropout, match bit for bit on every backend (the contract).
    if (c.op !== 'randn') return { relative: 0 };
    // Normals come from log, sqrt and cos: a device computes them in f32.
    if (against === 'cpu') return { relative: 4 * DEVICE_ELEMENTWISE[name === 'unit' ? 'f32' : c.dtype], absolute: 1e-5 * Math.sqrt(n) };
    return name === 'y' ? { relative: 2 * UNIT_ROUNDOFF[c.dtype] + 2 ** -23, absolute: 1e-6 * Math.sqrt(n) } : { relative: 0 };
  },
};

// -------------------------------------------------------------- products

interface MatmulCase {
  op: 'matmul' | 'linear';
  dtype: FloatDType;
  a: TensorSpec;
  b: TensorSpec;
  transA: boolean;
  transB: boolean;
  alpha: number;
  beta: number;
  c: TensorSpec | undefined;
  bias: TensorSpec | undefined;
  activation: MatmulActivation | undefined;
}

const matmulProperty: OpProperty<MatmulCase> = {
  name: 'matmul and linear (batch broadcasting, transposes, alpha, beta·c, bias, activations)',
  ops: ['matmul', 'linear'],
  arbitrary: fc
    .record({
      op: fc.constantFrom('matmul' as const, 'linear' as const),
      dtype: fc.constantFrom(...FLOAT_DTYPES),
      m: dim(5, 70),
      n: dim(5, 70),
      k: dim(6, 70),
      outBatch: shapeArb(0, 2, 3, 9, 0),
      transA: fc.boolean(),
      transB: fc.boolean(),
      withC: fc.boolean(),
      withBias: fc.boolean(),
      activation: fc.option(fc.constantFrom(...MATMUL_ACTIVATIONS), { nil: undefined }),
    })
    .chain((p) => {
      const el = moderate(2);
      if (p.op === 'linear') {
        return fc.record({
          op: fc.constant(p.op),
          dtype: fc.constant(p.dtype),
          a: tensorArb([...p.outBatch, p.m, p.k], p.dtype, el),
          b: tensorArb([p.n, p.k], p.dtype, el),
          transA: fc.constant(false),
          transB: fc.constant(true),
          alpha: fc.constant(1),
          beta: fc.constant(0),
          c: fc.constant(undefined),
          bias: p.withBias ? tensorArb([p.n], p.dtype, el) : fc.constant(undefined),
          activation: fc.constant(p.activation),
        });
      }
      const matrix = (rows: number, cols: number, trans: boolean) => (trans ? [cols, rows] : [rows, cols]);
      // c broadcasts to the product's batch dims: those of a and b together.
      return fc.record({ aBatch: broadcastable(p.outBatch), bBatch: broadcastable(p.outBatch) }).chain(({ aBatch, bBatch }) =>
        fc.record({
          op: fc.constant(p.op),
          dtype: fc.constant(p.dtype),
          a: tensorArb([...aBatch, ...matrix(p.m, p.k, p.transA)], p.dtype, el),
          b: tensorArb([...bBatch, ...matrix(p.k, p.n, p.transB)], p.dtype, el),
          transA: fc.constant(p.transA),
          transB: fc.constant(p.transB),
          alpha: fc.oneof(fc.constant(1), moderate(2)),
          beta: p.withC ? fc.oneof(fc.constant(1), moderate(2)) : fc.constant(0),
          c: p.withC ? broadcastable(broadcastShape(aBatch, bBatch)).chain((batch) => tensorArb([...batch, p.m, p.n], p.dtype, el)) : fc.constant(undefined),
          bias: p.withBias ? tensorArb([p.n], p.dtype, el) : fc.constant(undefined),
          activation: fc.constant(p.activation),
        }),
      );
    }),
  run(g, c) {
    return withTensors(g, { a: c.a, b: c.b, c: c.c, bias: c.bias }, ({ a, b, c: cc, bias }) => {
      if (c.op === 'linear') return { y: g.linear(a, b, bias, c.activation) };
      return {
        y: g.matmul(a, b, {
          transA: c.transA,
          transB: c.transB,
          alpha: c.alpha,
          ...(cc ? { c: cc, beta: c.beta } : {}),
          ...(bias ? { bias } : {}),
          ...(c.activation ? { activation: c.activation } : {}),
        }),
      };
    });
  },
  reference(c): Record<string, Output> {
    const shape2d = c.op === 'linear' ? [size(c.a.shape.slice(0, -1)), c.a.shape.at(-1)!] : c.a.shape;
    const ref = referenceProduct({ values: c.a.values, shape: shape2d }, { values: c.b.values, shape: c.b.shape }, {
      transA: c.transA,
      transB: c.transB,
      alpha: c.alpha,
      beta: c.beta,
      ...(c.c ? { c: { values: c.c.values, shape: c.c.shape } } : {}),
      ...(c.bias ? { bias: c.bias.values } : {}),
      ...(c.activation ? { activation: c.activation } : {}),
    });
    // The batch dims broadcast as NumPy's (1 against 0 gives 0, which the float64 helper does not handle).
    const batch = broadcastShape(c.a.shape.slice(0, -2), c.b.shape.slice(0, -2));
    const shape = c.op === 'linear' ? [...c.a.shape.slice(0, -1), c.b.shape[0]!] : [...batch, ...ref.shape.slice(-2)];
    return { y: out(size(shape) === 0 ? [] : ref.values, shape, c.dtype) };
  },
  tolerance(c, _name, against) {
    // f32 accumulation: |error| ≤ γ_k·(|alpha|·|A||B| + |beta|·|C| + |bias|), bounded here by its norm.
    const k = c.op === 'linear' ? c.a.shape.at(-1)! : c.transA ? c.a.shape.at(-2)! : c.a.shape.at(-1)!;
    const absA = { values: c.a.values.map(Math.abs), shape: c.op === 'linear' ? [size(c.a.shape.slice(0, -1)), k] : c.a.shape };
    const absB = { values: c.b.values.map(Math.abs), shape: c.b.shape };
    const bound = referenceProduct(absA, absB, {
      transA: c.transA,
      transB: c.transB,
      alpha: Math.abs(c.alpha),
      beta: Math.abs(c.beta),
      ...(c.c ? { c: { values: c.c.values.map(Math.abs), shape: c.c.shape } } : {}),
      ...(c.bias ? { bias: c.bias.values.map(Math.abs) } : {}),
    }).values;
    // (The float64 helper reads past an empty batch: an empty output has nothing to bound.)
    const scale = Math.sqrt(bound.reduce((s, v) => s + (Number.isFinite(v) ? v * v : 0), 0));
    const accumulation = (k + 3) * 2 ** -24 * scale;
    const factor = against === 'reference' ? 2 : 8;
    // Plus one subnormal step per element, norm-wise: an output at a rounding midpoint of the
    // dtype's subnormals (a pre-activation of 2^-24 in f16 through geluTanh) may round either way.
    return { relative: factor * UNIT_ROUNDOFF[c.dtype], absolute: factor * accumulation + Math.sqrt(bound.length) * SMALLEST_SUBNORMAL[c.dtype] };
  },
};

// -------------------------------------------------------------- attention

interface AttentionCase {
  dtype: FloatDType;
  batch: number;
  kvHeads: number;
  group: number;
  seqQ: number;
  seqK: number;
  headDim: number;
  causal: boolean;
  scale: number | undefined;
  lengths: { form: 'array' | 'tensor'; values: number[] } | undefined;
  lse: boolean;
  q: TensorSpec;
  k: TensorSpec;
  v: TensorSpec;
}

const attentionProperty: OpProperty<AttentionCase> = {
  name: 'attention (grouped heads, causal, scale, key lengths, log-sum-exp)',
  ops: ['attention'],
  arbitrary: fc
    .record({
      dtype: fc.constantFrom(...FLOAT_DTYPES),
      batch: fc.integer({ min: 1, max: 2 }),
      kvHeads: fc.integer({ min: 1, max: 2 }),
      group: fc.integer({ min: 1, max: 3 }),
      seqQ: dim(6, 80),
      seqK: dim(7, 80),
      headDim: fc.constantFrom(1, 3, 8, 16, 32, 64, 80, 128),
      causal: fc.boolean(),
      scale: fc.option(fc.double({ min: 0.05, max: 2, noNaN: true }), { nil: undefined }),
      lengthsForm: fc.option(fc.constantFrom('array' as const, 'tensor' as const), { nil: undefined }),
      lse: fc.boolean(),
    })
    .chain((p) => {
      const heads = p.kvHeads * p.group;
      const el = moderate(2);
      // A tensor's lengths are clamped on the device: let them stray out of [0, seqK].
      const lengthValue = p.lengthsForm === 'tensor' ? fc.integer({ min: -2, max: p.seqK + 2 }) : fc.integer({ min: 0, max: p.seqK });
      return fc.record({
        dtype: fc.constant(p.dtype),
        batch: fc.constant(p.batch),
        kvHeads: fc.constant(p.kvHeads),
        group: fc.constant(p.group),
        seqQ: fc.constant(p.seqQ),
        seqK: fc.constant(p.seqK),
        headDim: fc.constant(p.headDim),
        causal: fc.constant(p.causal),
        scale: fc.constant(p.scale),
        lengths: p.lengthsForm ? fc.array(lengthValue, { minLength: p.batch, maxLength: p.batch }).map((values) => ({ form: p.lengthsForm!, values })) : fc.constant(undefined),
        lse: fc.constant(p.lse),
        q: tensorArb([p.batch, heads, p.seqQ, p.headDim], p.dtype, el),
        k: tensorArb([p.batch, p.kvHeads, p.seqK, p.headDim], p.dtype, el),
        v: tensorArb([p.batch, p.kvHeads, p.seqK, p.headDim], p.dtype, el),
      });
    }),
  run(g, c) {
    const lengths = c.lengths?.form === 'tensor' ? { shape: [c.batch], dtype: 'i32' as const, values: c.lengths.values } : undefined;
    return withTensors(g, { q: c.q, k: c.k, v: c.v, lengths }, ({ q, k, v, lengths: lt }): Record<string, Tensor> => {
      const keyLengths = c.lengths?.form === 'array' ? c.lengths.values : (lt as Tensor<'i32'> | undefined);
      const options = { causal: c.causal, ...(c.scale === undefined ? {} : { scale: c.scale }), ...(keyLengths ? { keyLengths } : {}) };
      if (!c.lse) return { out: g.attention(q, k, v, options) };
      const r = g.attention(q, k, v, { ...options, returnLogSumExp: true });
      return { out: r.out, lse: r.lse };
    });
  },
  reference(c): Record<string, Output> {
    const heads = c.kvHeads * c.group;
    const ref = referenceAttention({
      batch: c.batch,
      heads,
      kvHeads: c.kvHeads,
      seqQ: c.seqQ,
      seqK: c.seqK,
      headDim: c.headDim,
      q: c.q.values,
      k: c.k.values,
      v: c.v.values,
      scale: c.scale ?? 1 / Math.sqrt(c.headDim),
      causal: c.causal,
      ...(c.lengths ? { keyLengths: c.lengths.values } : {}),
    });
    const outputs: Record<string, Output> = { out: out(ref.out, c.q.shape, c.dtype) };
    if (c.lse) outputs.lse = out(ref.lse, c.q.shape.slice(0, 3), 'f32');
    return outputs;
  },
  tolerance(c, name, against) {
    const dtype = name === 'lse' ? 'f32' : c.dtype;
    return { relative: (against === 'reference' ? 1 : 2) * DEVICE_ELEMENTWISE[dtype], absolute: 1e-6 * Math.sqrt(c.q.values.length) };
  },
};

// -------------------------------------------------------------------- SVD

interface SvdCase {
  m: number;
  n: number;
  singularValues: number[];
  seed: number;
  full: boolean;
  rank: number;
  oversample: number;
  powerIterations: number;
}

/** Row-major product x (r×s) · y (s×t), in float64. */
function product(x: ArrayLike<number>, y: ArrayLike<number>, r: number, s: number, t: number, transX = false): number[] {
  const z = new Array<number>(r * t).fill(0);
  for (let i = 0; i < r; i++) for (let p = 0; p < s; p++) {
    const xv = transX ? x[p * r + i]! : x[i * s + p]!;
    for (let j = 0; j < t; j++) z[i * t + j]! += xv * y[p * t + j]!;
  }
  return z;
}

const svdProperty: OpProperty<SvdCase> = {
  name: 'svd of known spectra (full and truncated): singular values, reconstruction, orthonormality',
  ops: ['svd'],
  arbitrary: fc
    .record({ m: dim(12, 40).map((d) => Math.max(d, 1)), n: dim(12, 40).map((d) => Math.max(d, 1)), full: fc.boolean(), seed: fc.integer({ min: 1, max: 1e6 }) })
    .chain((p) => {
      const smaller = Math.min(p.m, p.n);
      return fc.integer({ min: 1, max: smaller }).chain((r) =>
        fc.record({
          m: fc.constant(p.m),
          n: fc.constant(p.n),
          seed: fc.constant(p.seed),
          full: fc.constant(p.full),
          // A spectrum with a gap, exactly rank r: a truncated SVD of rank ≥ r recovers it.
          singularValues: fc.array(fc.double({ min: 0.1, max: 10, noNaN: true }), { minLength: r, maxLength: r }),
          rank: fc.integer({ min: p.full ? 1 : r, max: smaller }),
          oversample: fc.integer({ min: 0, max: 6 }),
          powerIterations: fc.integer({ min: 0, max: 3 }),
        }),
      );
    }),
  run(g, c) {
    const km = knownMatrix(c.m, c.n, c.singularValues, c.seed);
    using a = g.tensor(Float32Array.from(km.a), [c.m, c.n]) as Tensor<'f32'>;
    const r = g.svd(a, c.full ? { full: true, rank: c.rank } : { rank: c.rank, oversample: c.oversample, powerIterations: c.powerIterations, seed: c.seed });
    try {
      const k = c.rank;
      const u = Array.from(r.u.toArraySync());
      const s = Array.from(r.s.toArraySync());
      const v = Array.from(r.v.toArraySync());
      const us = u.map((x, i) => x * s[i % k]!);
      return {
        s: { values: s, shape: [...r.s.shape], dtype: 'f32' },
        reconstruction: { values: product(us, v, c.m, k, c.n), shape: [c.m, c.n], dtype: 'f32' },
        uTu: { values: product(u, u, k, c.m, k, true), shape: [k, k], dtype: 'f32' },
        vvT: { values: product(v, transposeOf(v, k, c.n), k, c.n, k), shape: [k, k], dtype: 'f32' },
      };
    } finally {
      for (const t of [r.u, r.s, r.v]) t.dispose();
    }
  },
  reference(c): Record<string, Output> {
    const k = c.rank;
    const km = knownMatrix(c.m, c.n, c.singularValues, c.seed);
    const sigma = [...km.singularValues, ...new Array<number>(k).fill(0)].slice(0, k);
    const eye = Array.from({ length: k * k }, (_, i) => (i % (k + 1) === 0 ? 1 : 0));
    // Stored in f32 by the tensor, so the rank-k reconstruction (k ≥ the true rank) is that of f32(a).
    const outputs: Record<string, Output> = {
      uTu: { values: eye, shape: [k, k], dtype: 'f32' },
      vvT: { values: eye, shape: [k, k], dtype: 'f32' },
    };
    // s where the method promises it (see reconstructs; a sketch exactly as wide as the true rank
    // can lose the small directions: σ = 8.7e-4 for 0.1). Below the true rank the best rank-k
    // approximation is not a; then only s and orthonormality are checked.
    if (reconstructs(c)) outputs.s = { values: sigma, shape: [k], dtype: 'f32' };
    if (k >= c.singularValues.length && reconstructs(c)) outputs.reconstruction = { values: Array.from(km.a, Math.fround), shape: [c.m, c.n], dtype: 'f32' };
    return outputs;
  },
  tolerance(c, name) {
    const sigma1 = Math.max(...c.singularValues);
    const n = c.m * c.n;
    switch (name) {
      case 's':
        // Perturbation of a by its f32 rounding moves each σ by at most ‖Δa‖₂ ≤ √(mn)·u·max|a|.
        return { relative: 0, absolute: 4e-5 * sigma1 * Math.sqrt(n) };
      case 'reconstruction':
        return { relative: 2e-5 * Math.sqrt(Math.min(c.m, c.n)), absolute: 1e-5 * sigma1 };
      default:
        return { relative: 0, absolute: 2e-5 * c.rank };
    }
  },
};

/**
 * Whether the randomized SVD promises a to f32 accuracy at a rank ≥ its true rank r: a full SVD;
 * a sketch spanning a whole side (q = min(m, n)); at least 2 sketch columns beyond r
 * (Halko–Martinsson–Tropp's bound needs oversampling p ≥ 2); or a power iteration. With q = r
 * and none, the sketch's f32 rounding tilts the basis by ~u·cond(Ω's r×r projection), which
 * is unbounded (0.25–0.5% of such cases miss the tolerance).
 */
function reconstructs(c: SvdCase): boolean {
  const q = Math.min(c.rank + c.oversample, c.m, c.n);
  return c.full || q === Math.min(c.m, c.n) || q - c.singularValues.length >= 2 || c.powerIterations > 0;
}

function transposeOf(x: ArrayLike<number>, rows: number, cols: number): number[] {
  const t = new Array<number>(rows * cols);
  for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) t[j * rows + i] = x[i * cols + j]!;
  return t;
}

// -------------------------------------------------------------------- GRU

interface GruCase {
  kind: 'gru' | 'gruCell' | 'gruRollout';
  dtype: FloatDType;
  layers: number;
  ensemble: number | undefined;
  perMember: boolean;
  batch: number;
  steps: number;
  input: number;
  hidden: number;
  biases: boolean;
  layerNorm: boolean;
  withH0: boolean;
  returnSequences: boolean;
  dropout: number;
  seed: number;
  sharedProjection: boolean;
  projectionBias: boolean;
  values: number[];
}

/** The case's tensors, cut from one stream of values in a fixed order. */
function gruTensors(c: GruCase) {
  const r = roundTo(c.dtype);
  let next = 0;
  const take = (shape: number[], scale = 1): TensorSpec => {
    const n = size(shape);
    const values: number[] = [];
    for (let i = 0; i < n; i++) values.push(r(scale * c.values[next++ % c.values.length]!));
    return { shape, dtype: c.dtype, values };
  };
  const { ensemble: E, batch: B, steps: T, input: I, hidden: H } = c;
  const lead = E === undefined ? [] : [E];
  const w = 1 / Math.sqrt(H);
  const layers = Array.from({ length: c.layers }, (_, l) => ({
    wIh: take([...lead, 3 * H, l === 0 ? I : H], w),
    wHh: take([...lead, 3 * H, H], w),
    bIh: c.biases ? take([...lead, 3 * H], w) : undefined,
    bHh: c.biases ? take([...lead, 3 * H], w) : undefined,
    gamma: c.layerNorm ? take([...lead, H], 0.2) : undefined,
    beta: c.layerNorm ? take([...lead, H], 0.2) : undefined,
  }));
  for (const l of layers) if (l.gamma) l.gamma.values = l.gamma.values.map((v) => r(1 + v));
  const members = E ?? 1;
  const xLead = c.perMember ? [members] : [];
  const x =
    c.kind === 'gru' ? take([...xLead, B, T, I]) : take([...xLead, B, I]);
  const hLead = [...(c.layers > 1 ? [c.layers] : []), ...lead];
  const h0 = c.withH0 || c.kind === 'gruCell' ? take([...hLead, B, H], 0.5) : undefined;
  const projection = c.kind === 'gruRollout' ? { weight: take(c.sharedProjection ? [I, H] : [...lead, I, H], w), bias: c.projectionBias ? take(c.sharedProjection ? [I] : [...lead, I], w) : undefined } : undefined;
  return { layers, x, h0, projection };
}

/** The largest layer-norm gain the reference met in each case (see `refCell`). */
const gruLayerNormGain = new WeakMap<GruCase, number>();

const gruProperty: OpProperty<GruCase> = {
  name: 'gru, gruCell, gruRollout (stacks, ensembles, biases, layer norm, dropout)',
  ops: ['gru', 'gruCell', 'gruRollout'],
  arbitrary: fc
    .record({
      kind: fc.constantFrom('gru' as const, 'gruCell' as const, 'gruRollout' as const),
      dtype: fc.constantFrom(...FLOAT_DTYPES),
      layers: fc.integer({ min: 1, max: 2 }),
      ensemble: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
      perMember: fc.boolean(),
      batch: fc.integer({ min: 1, max: 3 }),
      steps: fc.integer({ min: 1, max: 4 }),
      input: fc.oneof(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 5, max: 20 })),
      hidden: fc.oneof(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 6, max: 40 })),
      biases: fc.boolean(),
      layerNorm: fc.boolean(),
      withH0: fc.boolean(),
      returnSequences: fc.boolean(),
      dropout: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.double({ min: 0.05, max: 0.9, noNaN: true }) }),
      seed: fc.integer({ min: 0, max: 1000 }),
      sharedProjection: fc.boolean(),
      projectionBias: fc.boolean(),
      values: fc.array(moderate(1), { minLength: 64, maxLength: 64 }),
    })
    .map((c) => ({
      ...c,
      // A cell is one layer; a per-member input needs an ensemble.
      layers: c.kind === 'gruCell' ? 1 : c.layers,
      perMember: c.perMember && c.ensemble !== undefined,
      // A shared projection maps onto every member's input; a rollout's states must fit its input.
      sharedProjection: c.sharedProjection || c.ensemble === undefined,
    })),
  run(g, c) {
    const t = gruTensors(c);
    const specs: Record<string, TensorSpec | undefined> = { x: t.x, h0: t.h0, pw: t.projection?.weight, pb: t.projection?.bias };
    t.layers.forEach((l, i) => Object.assign(specs, { [`wIh${i}`]: l.wIh, [`wHh${i}`]: l.wHh, [`bIh${i}`]: l.bIh, [`bHh${i}`]: l.bHh, [`g${i}`]: l.gamma, [`b${i}`]: l.beta }));
    return withTensors(g, specs, (m): Record<string, Tensor> => {
      const weights = t.layers.map((_, i): GruLayerWeights => {
        const w: GruLayerWeights = { wIh: m[`wIh${i}`]!, wHh: m[`wHh${i}`]! };
        if (m[`bIh${i}`]) w.bIh = m[`bIh${i}`]!;
        if (m[`bHh${i}`]) w.bHh = m[`bHh${i}`]!;
        if (m[`g${i}`]) w.layerNorm = { weight: m[`g${i}`]!, bias: m[`b${i}`]!, eps: 1e-5 };
        return w;
      });
      const stack = weights.length === 1 ? weights[0]! : weights;
      if (c.kind === 'gruCell') return { h: g.gruCell(m.x!, m.h0!, weights[0]!) };
      if (c.kind === 'gruRollout') {
        const r = g.gruRollout(m.x!, m.h0, stack, { steps: c.steps, outputProjection: { weight: m.pw!, ...(m.pb ? { bias: m.pb } : {}) } });
        return { states: r.states, hidden: r.hidden };
      }
      const r = g.gru(m.x!, m.h0, stack, { returnSequences: c.returnSequences, ...(c.dropout > 0 ? { dropout: { p: c.dropout, seed: c.seed } } : {}) });
      return { output: r.output, hidden: r.hidden };
    });
  },
  reference(c, tools): Record<string, Output> {
    const t = gruTensors(c);
    const { ensemble: E, batch: B, steps: T, input: I, hidden: H } = c;
    const members = E ?? 1;
    const L = c.layers;
    // f32 results are compared unrounded (the CPU's f64 recurrence rounds only what it stores).
    const round = c.dtype === 'f32' ? (v: number) => v : roundTo(c.dtype);
    const slice = (spec: TensorSpec | undefined, e: number, n: number) => spec?.values.slice(e * n, (e + 1) * n);
    const refLayers = (e: number): RefLayer[] =>
      t.layers.map((l, i) => {
        const input = i === 0 ? I : H;
        const layer: RefLayer = { wIh: slice(l.wIh, e, 3 * H * input)!, wHh: slice(l.wHh, e, 3 * H * H)!, input, hidden: H };
        if (l.bIh) layer.bIh = slice(l.bIh, e, 3 * H)!;
        if (l.bHh) layer.bHh = slice(l.bHh, e, 3 * H)!;
        if (l.gamma) layer.layerNorm = { gamma: slice(l.gamma, e, H)!, beta: slice(l.beta, e, H)!, eps: 1e-5 };
        return layer;
      });
    // h0 per (layer, member, row); zeros when absent. Layout [L?, E?, B, H].
    const h0 = (l: number, e: number, b: number) => (t.h0 ? t.h0.values.slice(((l * members + e) * B + b) * H, ((l * members + e) * B + b + 1) * H) : new Array<number>(H).fill(0));
    const xRow = (e: number, b: number, step: number) => {
      const perStep = c.kind === 'gru' ? T : 1;
      const base = ((c.perMember ? e * B : 0) + b) * perStep + step;
      return t.x.values.slice(base * I, (base + 1) * I);
    };
    const lead = E === undefined ? [] : [E];
    const hiddenShape = [...(L > 1 ? [L] : []), ...lead, B, H];
    const finals: number[][][] = Array.from({ length: L }, () => Array.from({ length: members }, () => [] as number[]));
    let gain = 1;
    const cell = (layer: RefLayer, x: readonly number[], h: readonly number[], r: (v: number) => number) => refCell(layer, x, h, r, (g) => (gain = Math.max(gain, g)));
    if (c.kind === 'gruRollout') {
      const projected: number[][][] = Array.from({ length: members }, () => []);
      for (let e = 0; e < members; e++) {
        const layers = refLayers(e);
        const pw = c.sharedProjection ? t.projection!.weight.values : slice(t.projection!.weight, e, I * H)!;
        const pb = t.projection!.bias ? (c.sharedProjection ? t.projection!.bias.values : slice(t.projection!.bias, e, I)!) : undefined;
        const project = (h: number[]) => Array.from({ length: I }, (_, s) => round(h.reduce((acc, v, j) => acc + v * pw[s * H + j]!, 0) + (pb?.[s] ?? 0)));
        for (let b = 0; b < B; b++) {
          const hs = Array.from({ length: L }, (_, l) => h0(l, e, b));
          let input = xRow(e, b, 0);
          const rowStates: number[] = [];
          for (let step = 0; step < c.steps; step++) {
            for (let l = 0; l < L; l++) {
              hs[l] = cell(layers[l]!, input, hs[l]!, round);
              input = hs[l]!;
            }
            const y = project(hs[L - 1]!);
            rowStates.push(...y);
            input = y;
          }
          projected[e]!.push(rowStates);
          for (let l = 0; l < L; l++) finals[l]![e]!.push(...hs[l]!);
        }
      }
      gruLayerNormGain.set(c, gain);
      return {
        states: out(projected.flat(2), [...lead, B, c.steps, I], c.dtype),
        hidden: out(finals.flat(2), hiddenShape, c.dtype),
      };
    }
    const steps = c.kind === 'gru' ? T : 1;
    const outputs: number[][][] = Array.from({ length: members }, () => []);
    for (let e = 0; e < members; e++) {
      const layers = refLayers(e);
      // Each layer over every row; dropout (seed + l) on what a layer emits, as gpu.dropout over [E?, B, T, H].
      let seqs = Array.from({ length: B }, (_, b) => Array.from({ length: steps }, (_, s) => xRow(e, b, s)));
      for (let l = 0; l < L; l++) {
        seqs = seqs.map((rows, b) => {
          let h = h0(l, e, b);
          const emitted = rows.map((x) => (h = cell(layers[l]!, x, h, round)));
          finals[l]![e]!.push(...h);
          return emitted;
        });
        const last = l === L - 1;
        if (c.kind === 'gru' && c.dropout > 0) {
          const keptSteps = last && !c.returnSequences ? 1 : steps;
          const u = tools.uniform(c.seed + l, members * B * keptSteps * H);
          const threshold = Math.fround(c.dropout);
          const scale = Math.fround(1 / (1 - c.dropout));
          seqs = seqs.map((rows, b) =>
            rows.map((h, s) => {
              if (keptSteps === 1 && s !== steps - 1) return h;
              const base = ((e * B + b) * keptSteps + (keptSteps === 1 ? 0 : s)) * H;
              return h.map((v, j) => (u[base + j]! >= threshold ? roundTo(c.dtype)(v * scale) : 0));
            }),
          );
        }
      }
      outputs[e] = seqs.map((rows) => (c.kind === 'gru' && c.returnSequences ? rows.flat() : rows[steps - 1]!));
    }
    gruLayerNormGain.set(c, gain);
    if (c.kind === 'gruCell') return { h: out(outputs.flat(2), t.h0!.shape, c.dtype) };
    return {
      output: out(outputs.flat(2), [...lead, B, ...(c.returnSequences ? [T] : []), H], c.dtype),
      hidden: out(finals.flat(2), hiddenShape, c.dtype),
    };
  },
  tolerance(c, _name, against) {
    const f = c.dtype === 'f32' ? (against === 'reference' ? 2e-6 : 2e-5) : 4 * DEVICE_ELEMENTWISE[c.dtype];
    // Rounding compounds over the steps and through each stacked layer (a cell is one of each),
    // and a layer norm over a state of near-equal values magnifies it (the gain the reference
    // measured: the GPU tests run it too).
    const gain = Math.max(1, gruLayerNormGain.get(c) ?? 1);
    return { relative: f * gain * (c.kind === 'gruCell' ? 1 : c.steps * c.layers), absolute: 1e-6 };
  },
};

/** Every property. */
// ------------------------------------------------------ capture and scope

interface RecordedCase {
  via: 'capture' | 'scope';
  dtype: FloatDType;
  /** The example input (capture) or the input (scope). */
  x: TensorSpec;
  /** The input a capture is called with after recording `x`. */
  next: TensorSpec;
  scale: number;
}

/** y = max(x·scale, −x) and z = x + 1 as one function of ops, recorded (capture) or scoped; the result is f(next) for capture, f(x) for scope. */
const recordedProperty: OpProperty<RecordedCase> = {
  name: 'capture (replayed with new inputs) and scope',
  ops: ['capture', 'scope'],
  arbitrary: fc
    .record({ via: fc.constantFrom('capture' as const, 'scope' as const), dtype: fc.constantFrom(...FLOAT_DTYPES), shape: shapeArb(1, 3, 5) })
    .chain(({ via, dtype, shape }) =>
      fc.record({
        via: fc.constant(via),
        dtype: fc.constant(dtype),
        x: tensorArb(shape, dtype),
        next: tensorArb(shape, dtype),
        scale: moderate(),
      }),
    ),
  run(g, c) {
    return withTensors(g, { x: c.x, next: c.next }, ({ x, next }) => {
      const f = (t: Tensor) => ({ y: g.maximum(g.mul(t, c.scale), g.neg(t)), z: g.add(t, 1) });
      if (c.via === 'scope') return g.scope(() => f(x));
      using step = g.capture(f, [x]);
      return step(next);
    });
  },
  reference(c) {
    const r = roundTo(c.dtype);
    const input = c.via === 'capture' ? c.next : c.x;
    const scale = r(c.scale);
    const y = input.values.map((v) => BINARY_REF.maximum.float(r(v * scale), -v));
    return { y: out(y, input.shape, c.dtype), z: out(input.values.map((v) => v + 1), input.shape, c.dtype) };
  },
  tolerance: (c, _name, against) => elementwiseTolerance(c.dtype, size(c.x.shape), against),
};

// ---------------------------------------------------------------- training

interface OneHotCase {
  indices: TensorSpec;
  classes: number;
  dtype: FloatDType;
}

/** oneHot: exact, an index outside [0, classes) giving a row of zeros. */
const oneHotProperty: OpProperty<OneHotCase> = {
  name: 'oneHot',
  ops: ['oneHot'],
  arbitrary: fc
    .record({ shape: shapeArb(0, 3, 5, 400), classes: fc.integer({ min: 1, max: 9 }), dtype: fc.constantFrom(...FLOAT_DTYPES) })
    .chain(({ shape, classes, dtype }) =>
      fc.record({ indices: tensorArb(shape, 'i32', fc.integer({ min: -3, max: classes + 2 })), classes: fc.constant(classes), dtype: fc.constant(dtype) }),
    ),
  run(g, c) {
    return withTensors(g, { indices: c.indices }, ({ indices }) => ({ y: g.oneHot(indices as Tensor<'i32'>, c.classes, c.dtype) }));
  },
  reference(c) {
    const values = c.indices.values.flatMap((index) => Array.from({ length: c.classes }, (_, k) => (k === index ? 1 : 0)));
    return { y: out(values, [...c.indices.shape, c.classes], c.dtype) };
  },
  tolerance: () => ({ relative: 0 }),
};

interface LossCase {
  op: 'mseLoss' | 'crossEntropy';
  reduction: 'mean' | 'sum' | 'none';
  a: TensorSpec;
  /** mseLoss: the target; crossEntropy: class indices (i32) or probabilities. */
  b: TensorSpec;
}

function lossReduce(values: number[], reduction: LossCase['reduction'], count = values.length): number[] {
  if (reduction === 'none') return values;
  const sum = values.reduce((a, v) => a + v, 0);
  return [reduction === 'sum' ? sum : sum / count];
}

/** mseLoss and crossEntropy (class indices, some ignored, or probabilities) under each reduction. */
const lossProperty: OpProperty<LossCase> = {
  name: 'losses (mseLoss, crossEntropy)',
  ops: ['mseLoss', 'crossEntropy'],
  arbitrary: fc
    .record({
      op: fc.constantFrom('mseLoss' as const, 'crossEntropy' as const),
      reduction: fc.constantFrom('mean' as const, 'sum' as const, 'none' as const),
      shape: shapeArb(1, 3, 6, 600).filter((s) => s.at(-1) !== 0),
      dtype: fc.constantFrom(...FLOAT_DTYPES),
      indices: fc.boolean(),
    })
    .chain(({ op, reduction, shape, dtype, indices }) => {
      const classes = shape.at(-1)!;
      const b =
        op === 'mseLoss'
          ? tensorArb(shape, dtype, moderate())
          : indices
            ? tensorArb(shape.slice(0, -1), 'i32', fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 0, max: classes - 1 }) }, { weight: 1, arbitrary: fc.constant(-100) }))
            : tensorArb(shape, dtype, fc.double({ min: 0, max: 1, noNaN: true }));
      return fc.record({ op: fc.constant(op), reduction: fc.constant(reduction), a: tensorArb(shape, dtype, moderate()), b });
    }),
  run(g, c) {
    return withTensors(g, { a: c.a, b: c.b }, ({ a, b }) => ({ y: c.op === 'mseLoss' ? g.mseLoss(a, b, { reduction: c.reduction }) : g.crossEntropy(a, b, { reduction: c.reduction }) }));
  },
  reference(c) {
    const rowShape = c.a.shape.slice(0, -1);
    const outShape = c.reduction === 'none' ? (c.op === 'mseLoss' ? c.a.shape : rowShape) : [];
    if (c.op === 'mseLoss') return { y: out(lossReduce(c.a.values.map((v, i) => (v - c.b.values[i]!) ** 2), c.reduction), outShape, c.a.dtype) };
    const classes = c.a.shape.at(-1)!;
    const losses: number[] = [];
    let valid = 0;
    for (let r = 0; r < c.a.values.length / classes; r++) {
      const row = c.a.values.slice(r * classes, (r + 1) * classes);
      const max = Math.max(...row);
      const lse = max + Math.log(row.reduce((a, v) => a + Math.exp(v - max), 0));
      if (c.b.dtype === 'i32') {
        const k = c.b.values[r]!;
        const ok = k >= 0 && k < classes;
        valid += ok ? 1 : 0;
        losses.push(ok ? lse - row[k]! : 0);
      } else {
        valid++;
        losses.push(row.reduce((a, v, k) => a - c.b.values[r * classes + k]! * (v - lse), 0));
      }
    }
    return { y: out(lossReduce(losses, c.reduction, valid), outShape, c.a.dtype) };
  },
  tolerance(c, _name, against) {
    const dtype = c.a.dtype as FloatDType;
    // mseLoss: a subtraction and a square in the dtype, then a sum; crossEntropy: f32 inside, one rounding at the end.
    return against === 'reference'
      ? { relative: 6 * UNIT_ROUNDOFF[dtype], absolute: 1e-6 * Math.sqrt(c.a.values.length) }
      : { relative: 4 * DEVICE_ELEMENTWISE[dtype], absolute: 1e-5 * Math.sqrt(c.a.values.length) };
  },
};

interface AutogradCase {
  x: TensorSpec;
  w: TensorSpec;
}

/**
 * gpu.grad of sum(tanh(x·w)) (w broadcast over the rows of x) against the analytic float64
 * gradients, and gpu.noGrad around an op of tensors that require grad (its values unchanged).
 */
const autogradProperty: OpProperty<AutogradCase> = {
  name: 'autograd (grad, noGrad)',
  ops: ['grad', 'noGrad'],
  arbitrary: fc
    .record({ shape: shapeArb(1, 3, 6, 600), dtype: fc.constantFrom(...FLOAT_DTYPES) })
    .chain(({ shape, dtype }) => fc.record({ x: tensorArb(shape, dtype, moderate(2)), w: tensorArb(shape.slice(-1), dtype, moderate(2)) })),
  run(g, c) {
    return withTensors(g, { x: c.x, w: c.w }, ({ x, w }) => {
      const { value, grads } = g.grad((a: Tensor, b: Tensor) => g.sum(g.tanh(g.mul(a, b))), [x, w]);
      using leaf = x.detach().requiresGrad_();
      const plain = g.noGrad(() => g.mul(leaf, w));
      return { value, dx: grads[0]!, dw: grads[1]!, plain };
    });
  },
  reference(c) {
    const cols = c.w.values.length;
    const r = roundTo(c.x.dtype);
    const products = c.x.values.map((v, i) => r(v * c.w.values[i % cols]!));
    const slopes = products.map((p) => 1 - Math.tanh(p) ** 2);
    const dw = new Array<number>(cols).fill(0);
    slopes.forEach((s, i) => (dw[i % cols]! += s * c.x.values[i]!));
    return {
      value: out([products.reduce((a, p) => a + Math.tanh(p), 0)], [], c.x.dtype),
      dx: out(slopes.map((s, i) => s * c.w.values[i % cols]!), c.x.shape, c.x.dtype),
      dw: out(dw, c.w.shape, c.x.dtype),
      plain: out(products, c.x.shape, c.x.dtype),
    };
  },
  tolerance(c, name, against) {
    const dtype = c.x.dtype as FloatDType;
    if (name === 'plain') return elementwiseTolerance(dtype, size(c.x.shape), against);
    // tanh and its slope are rounded to the dtype term by term, and the sums over the rows may
    // cancel: the error is bounded by the unit times the norm of the sums of |term| (|slope| ≤ 1).
    const cols = c.w.values.length;
    const magnitude =
      name === 'value'
        ? c.x.values.reduce((a, v, i) => a + Math.abs(Math.tanh(v * c.w.values[i % cols]!)), 0)
        : name === 'dx'
          ? Math.sqrt(c.x.values.reduce((a, _, i) => a + c.w.values[i % cols]! ** 2, 0))
          : Math.hypot(...c.w.values.map((_, j) => c.x.values.reduce((a, v, i) => a + (i % cols === j ? Math.abs(v) : 0), 0)));
    const unit = against === 'reference' ? 16 * UNIT_ROUNDOFF[dtype] : 4 * DEVICE_ELEMENTWISE[dtype];
    return { relative: unit, absolute: unit * magnitude + (against === 'reference' ? 1e-6 : 1e-5) * Math.sqrt(c.x.values.length) };
  },
};

export const OP_PROPERTIES: readonly OpProperty<never>[] = [
  unaryProperty,
  gradProperty,
  binaryProperty,
  reduceProperty,
  rowsProperty,
  layoutProperty,
  randomProperty,
  matmulProperty,
  attentionProperty,
  svdProperty,
  gruProperty,
  recordedProperty,
  oneHotProperty,
  lossProperty,
  autogradProperty,
] as unknown as readonly OpProperty<never>[];
