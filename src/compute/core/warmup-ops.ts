/**
 * The ops a kernel warmup compiles for, by their GpuCompute method names (the warmup's `ops`
 * option and `gpucompute warmup --ops`), and `optimizerStep` for the optimizers' `step()`.
 */
import { BINARY_OP_NAMES, UNARY_OP_NAMES, type BinaryOp, type UnaryOp } from './elementwise-ops.js';

/** The GpuCompute binary ops by method name (`maximum` is the binary op `max`). */
export const BINARY_METHODS: Readonly<Record<BinaryOp, string>> = { add: 'add', sub: 'sub', mul: 'mul', div: 'div', max: 'maximum', min: 'minimum' };

/** Ops whose kernels a warmup can compile, by their GpuCompute method names (`optimizerStep`: SGD's and AdamW's step). */
export type WarmupOp =
  | UnaryOp
  | 'add'
  | 'sub'
  | 'mul'
  | 'div'
  | 'maximum'
  | 'minimum'
  | 'fill'
  | 'cast'
  | 'rand'
  | 'randn'
  | 'dropout'
  | 'activationGrad'
  | 'sum'
  | 'mean'
  | 'max'
  | 'min'
  | 'argmax'
  | 'softmax'
  | 'logSoftmax'
  | 'layerNorm'
  | 'oneHot'
  | 'transpose'
  | 'matmul'
  | 'linear'
  | 'attention'
  | 'gru'
  | 'optimizerStep';

/** Every {@link WarmupOp}: what a warmup compiles when no ops are named. */
export const WARMUP_OPS: readonly WarmupOp[] = Object.freeze([
  'fill',
  'cast',
  'rand',
  'randn',
  'dropout',
  ...UNARY_OP_NAMES,
  'activationGrad',
  ...BINARY_OP_NAMES.map((op) => BINARY_METHODS[op] as WarmupOp),
  'sum',
  'mean',
  'max',
  'min',
  'argmax',
  'softmax',
  'logSoftmax',
  'layerNorm',
  'oneHot',
  'transpose',
  'matmul',
  'linear',
  'attention',
  'gru',
  'optimizerStep',
]);

