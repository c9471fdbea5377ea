/**
 * The elementwise ops, defined once. Everything else derives from these tables: the front-end's
 * dtype checks, the `GpuCompute` and `Tensor` methods of the plain unary ops, `activationGrad`'s
 * names, the kernel specialisations CI compiles, the conformance suite's cases and the README's
 * op list. A CUDA/HIP kernel functor is named `Op` + the op's name in PascalCase
 * (`kernels/ops.cuh`: `exp` → `OpExp`, `reluGrad` → `OpReluGrad`); the CPU backend keeps a scalar
 * function per op (`cpu/unary-math.ts`).
 *
 * Adding a unary op: an entry here, its functor in `kernels/ops.cuh`, its function in
 * `cpu/unary-math.ts`.
 */

/** How one unary op is offered. */
export interface UnaryOpDefinition {
  /** What it computes, one line (the generated methods' documentation and the README). */
  readonly doc: string;
  /** i32 tensors take it too (float dtypes always do). */
  readonly int?: boolean;
  /** Its derivative op (`activationGrad`); present for the activations. */
  readonly grad?: ActivationGradOp;
  /** GpuCompute declares this op's method by hand, because it takes a parameter (leakyRelu's slope, gelu's form). */
  readonly ownMethod?: boolean;
}

/** The unary ops. */
export const UNARY_OPS = {
  neg: { doc: '−x', int: true },
  abs: { doc: '|x|', int: true },
  exp: { doc: 'eˣ' },
  log: { doc: 'natural logarithm' },
  sqrt: { doc: '√x' },
  rsqrt: { doc: '1/√x' },
  relu: { doc: 'max(x, 0) (NaN stays NaN)', grad: 'reluGrad' },
  leakyRelu: { doc: 'x for x > 0, slope·x otherwise', grad: 'leakyReluGrad', ownMethod: true },
  sigmoid: { doc: '1/(1 + e⁻ˣ)', grad: 'sigmoidGrad' },
  tanh: { doc: 'hyperbolic tangent', grad: 'tanhGrad' },
  gelu: { doc: 'x·Φ(x) (exact, with erf)', grad: 'geluGrad', ownMethod: true },
  geluTanh: { doc: "GELU's tanh approximation", grad: 'geluTanhGrad', ownMethod: true },
  silu: { doc: 'x·sigmoid(x)', grad: 'siluGrad' },
  softplus: { doc: 'log(1 + eˣ)', grad: 'softplusGrad' },
} as const satisfies Record<string, UnaryOpDefinition>;

/** A unary op's name. */
export type UnaryOp = keyof typeof UNARY_OPS;

/** The unary ops that take nothing but their input: `gpu.exp(x)`, `x.exp()`. */
export type PlainUnaryOp = { [K in UnaryOp]: (typeof UNARY_OPS)[K] extends { ownMethod: true } ? never : K }[UnaryOp];

/** Every unary op, in table order. */
export const UNARY_OP_NAMES = Object.keys(UNARY_OPS) as UnaryOp[];

/** The plain unary ops, in table order. */
export const PLAIN_UNARY_OPS = UNARY_OP_NAMES.filter((op) => !(UNARY_OPS[op] as UnaryOpDefinition).ownMethod) as PlainUnaryOp[];

/** Backward of an activation: out = dy · f'(x). */
export type ActivationGradOp =
  | 'reluGrad'
  | 'leakyReluGrad'
  | 'sigmoidGrad'
  | 'tanhGrad'
  | 'geluGrad'
  | 'geluTanhGrad'
  | 'siluGrad'
  | 'softplusGrad';

/** The activations: the unary ops that have a derivative op. */
export type ActivationName = { [K in UnaryOp]: (typeof UNARY_OPS)[K] extends { grad: ActivationGradOp } ? K : never }[UnaryOp];

/** Each activation's derivative op. */
export const ACTIVATION_GRAD = Object.fromEntries(
  UNARY_OP_NAMES.flatMap((op) => {
    const grad = (UNARY_OPS[op] as UnaryOpDefinition).grad;
    return grad ? [[op, grad]] : [];
  }),
) as Record<ActivationName, ActivationGradOp>;

/** Every derivative op. */
export const ACTIVATION_GRAD_OPS = Object.values(ACTIVATION_GRAD) as ActivationGradOp[];

/** How one binary op is offered. */
export interface BinaryOpDefinition {
  /** What it computes, one line. */
  readonly doc: string;
  /** i32 tensors take it too (wrapping modulo 2^32). */
  readonly int: boolean;
}

/** The broadcasting binary ops. */
export const BINARY_OPS = {
  add: { doc: 'a + b', int: true },
  sub: { doc: 'a − b', int: true },
  mul: { doc: 'a · b', int: true },
  div: { doc: 'a / b', int: false },
  max: { doc: 'elementwise maximum (NaN propagates)', int: true },
  min: { doc: 'elementwise minimum (NaN propagates)', int: true },
} as const satisfies Record<string, BinaryOpDefinition>;

/** A binary op's name. */
export type BinaryOp = keyof typeof BINARY_OPS;

/** Every binary op, in table order. */
export const BINARY_OP_NAMES = Object.keys(BINARY_OPS) as BinaryOp[];

/** Whether i32 tensors take a unary op. */
export function unaryTakesInt(op: UnaryOp): boolean {
  return (UNARY_OPS[op] as UnaryOpDefinition).int === true;
}

/** Whether i32 tensors take a binary op. */
export function binaryTakesInt(op: BinaryOp): boolean {
  return BINARY_OPS[op].int;
}

/** The kernel functor of an op (`kernels/ops.cuh`): `Op` + its name in PascalCase. */
export function functorName(op: UnaryOp | ActivationGradOp | BinaryOp): string {
  return `Op${op[0]!.toUpperCase()}${op.slice(1)}`;
}
