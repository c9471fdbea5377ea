/**
 * The ops a tensor offers as methods (`x.add(y)`, `x.exp()`, `x.sum(-1)`, ...), installed on
 * `Tensor` on top of the differentiable op front-ends (`autograd/ops/`): each runs on the tensor's
 * own GpuCompute, exactly as the GpuCompute method of the same name does (see it for the meaning).
 * The plain unary ops' methods come from the op table, so a new op gets its method without an edit
 * here. Also `backward`, and `reshape` recorded for autograd over Tensor's own storage view.
 */
import { backward, type BackwardOptions } from './autograd/backward.js';
import { activationGrad, binary, cast, copy, gelu, unary } from './autograd/ops/elementwise.js';
import { reshape, transpose } from './autograd/ops/layout.js';
import { dropout } from './autograd/ops/random.js';
import { reduce } from './autograd/ops/reduce.js';
import { layerNorm, softmax } from './autograd/ops/rows.js';
import type { DType } from './core/dtype.js';
import { PLAIN_UNARY_OPS, type ActivationName, type PlainUnaryOp } from './core/elementwise-ops.js';
import { DEFAULT_LEAKY_SLOPE, leakySlope, type ActivationGradOptions, type GeluOptions } from './ops/elementwise.js';
import type { ReduceOptions } from './ops/reduce.js';
import type { Session } from './tensor/session.js';
import { Tensor } from './tensor/tensor.js';

/** The plain unary ops as tensor methods: `x.exp()` is `gpu.exp(x)`. */
export type PlainUnaryTensorMethods<D extends DType> = { readonly [K in PlainUnaryOp]: () => Tensor<D> };

declare module './tensor/tensor.js' {
  interface Tensor<D extends DType = DType> extends PlainUnaryTensorMethods<D> {
    /** this + other, with broadcasting. */
    add(other: Tensor<D> | number): Tensor<D>;
    /** this − other, with broadcasting. */
    sub(other: Tensor<D> | number): Tensor<D>;
    /** this · other, with broadcasting. */
    mul(other: Tensor<D> | number): Tensor<D>;
    /** this / other, with broadcasting (float dtypes only). */
    div(other: Tensor<D> | number): Tensor<D>;
    /** Elementwise maximum with broadcasting; NaN propagates. */
    maximum(other: Tensor<D> | number): Tensor<D>;
    /** Elementwise minimum with broadcasting; NaN propagates. */
    minimum(other: Tensor<D> | number): Tensor<D>;
    /** x for x > 0, slope·x otherwise (default slope 0.01). */
    leakyRelu(slope?: number): Tensor<D>;
    /** x·Φ(x), or its tanh approximation with `{ approximate: 'tanh' }`. */
    gelu(options?: GeluOptions): Tensor<D>;
    /** dy · f'(this) for the activation `name`. */
    activationGrad(name: ActivationName, dy: Tensor<D>, options?: ActivationGradOptions): Tensor<D>;
    /** Softmax over the last axis. */
    softmax(): Tensor<D>;
    /** log(softmax) over the last axis. */
    logSoftmax(): Tensor<D>;
    /** Layer normalisation over the last axis. */
    layerNorm(gamma?: Tensor<D> | null, beta?: Tensor<D> | null, eps?: number): Tensor<D>;
    /** Sum over an axis, or over everything. */
    sum(axisOrOptions?: number | ReduceOptions): Tensor<D>;
    /** Mean over an axis, or over everything. */
    mean(axisOrOptions?: number | ReduceOptions): Tensor<D>;
    /** Maximum over an axis, or over everything. */
    max(axisOrOptions?: number | ReduceOptions): Tensor<D>;
    /** Minimum over an axis, or over everything. */
    min(axisOrOptions?: number | ReduceOptions): Tensor<D>;
    /** i32 index of the maximum over an axis, or over everything. */
    argmax(axisOrOptions?: number | ReduceOptions): Tensor<'i32'>;
    /** Swaps the last two dims. */
    transpose(): Tensor<D>;
    /** Seeded dropout with probability p. */
    dropout(p: number, seed?: number): Tensor<D>;
    /** Converts to another dtype. */
    cast<T extends DType>(dtype: T): Tensor<T>;
    /** A copy with its own storage. */
    clone(): Tensor<D>;
    /**
     * Accumulates the gradient of this tensor into the {@link Tensor.grad} of every leaf that
     * requires grad behind it. `seed` is the gradient of the loss with respect to this tensor
     * (default: 1, for a one-element tensor such as a loss). The tensors the graph saved are
     * released as it passes (`{ retainGraph: true }` keeps them for another backward).
     */
    backward(seed?: Tensor<D> | null, options?: BackwardOptions): void;
  }
}

/** The session a tensor belongs to (tensors are only ever made by a session). */
function sessionOf(t: Tensor): Session {
  return t.owner as Session;
}

type Method = (this: Tensor, ...args: never[]) => unknown;

const methods: Record<string, Method> = {
  add(this: Tensor, other: Tensor | number) {
    return binary(sessionOf(this), 'add', this, other, 'add');
  },
  sub(this: Tensor, other: Tensor | number) {
    return binary(sessionOf(this), 'sub', this, other, 'sub');
  },
  mul(this: Tensor, other: Tensor | number) {
    return binary(sessionOf(this), 'mul', this, other, 'mul');
  },
  div(this: Tensor, other: Tensor | number) {
    return binary(sessionOf(this), 'div', this, other, 'div');
  },
  maximum(this: Tensor, other: Tensor | number) {
    return binary(sessionOf(this), 'max', this, other, 'maximum');
  },
  minimum(this: Tensor, other: Tensor | number) {
    return binary(sessionOf(this), 'min', this, other, 'minimum');
  },
  leakyRelu(this: Tensor, slope?: number) {
    return unary(sessionOf(this), 'leakyRelu', this, leakySlope('leakyRelu', slope ?? DEFAULT_LEAKY_SLOPE));
  },
  gelu(this: Tensor, options?: GeluOptions) {
    return gelu(sessionOf(this), this, options);
  },
  activationGrad(this: Tensor, name: ActivationName, dy: Tensor, options?: ActivationGradOptions) {
    return activationGrad(sessionOf(this), name, this, dy, options);
  },
  softmax(this: Tensor) {
    return softmax(sessionOf(this), this, false);
  },
  logSoftmax(this: Tensor) {
    return softmax(sessionOf(this), this, true);
  },
  layerNorm(this: Tensor, gamma?: Tensor | null, beta?: Tensor | null, eps?: number) {
    return layerNorm(sessionOf(this), this, gamma, beta, eps);
  },
  sum(this: Tensor, axisOrOptions?: number | ReduceOptions) {
    return reduce(sessionOf(this), 'sum', this, axisOrOptions);
  },
  mean(this: Tensor, axisOrOptions?: number | ReduceOptions) {
    return reduce(sessionOf(this), 'mean', this, axisOrOptions);
  },
  max(this: Tensor, axisOrOptions?: number | ReduceOptions) {
    return reduce(sessionOf(this), 'max', this, axisOrOptions);
  },
  min(this: Tensor, axisOrOptions?: number | ReduceOptions) {
    return reduce(sessionOf(this), 'min', this, axisOrOptions);
  },
  argmax(this: Tensor, axisOrOptions?: number | ReduceOptions) {
    return reduce(sessionOf(this), 'argmax', this, axisOrOptions);
  },
  transpose(this: Tensor) {
    return transpose(sessionOf(this), this);
  },
  dropout(this: Tensor, p: number, seed?: number) {
    return dropout(sessionOf(this), this, p, seed);
  },
  cast(this: Tensor, dtype: DType) {
    return cast(sessionOf(this), this, dtype);
  },
  clone(this: Tensor) {
    return copy(sessionOf(this), this);
  },
  backward(this: Tensor, seed?: Tensor | null, options?: BackwardOptions) {
    backward(sessionOf(this), this, seed, options);
  },
};

/** Tensor's own reshape (a view of the storage), which the method below records. */
const view = Tensor.prototype.reshape;
methods.reshape = function (this: Tensor, ...shape: number[] | [readonly number[]]) {
  return reshape(sessionOf(this), this, view.apply(this, shape));
};

for (const op of PLAIN_UNARY_OPS) {
  methods[op] = function (this: Tensor) {
    return unary(sessionOf(this), op, this);
  };
}

for (const [name, value] of Object.entries(methods)) {
  Object.defineProperty(Tensor.prototype, name, { value, writable: true, configurable: true });
}
