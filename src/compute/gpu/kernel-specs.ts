/**
 * Which compiled specialisation of which `kernels/` source serves each op and
 * dtype: one module per (source, dtype[, op]), selected with `-D` defines
 * (GC_DTYPE, GC_OP, GC_REDUCE, GC_SRC/GC_DST). Also lists every
 * specialisation an op can ask for, which the CI compile test builds.
 */
import type { ActivationGradOp, BinaryOp, UnaryOp } from '../core/elementwise-ops.js';
import type { ReduceOp } from '../core/reduce-plan.js';
import { DTYPES, dtypeSize, type DType } from '../core/dtype.js';
import type { ModuleSpec } from './kernel-sources.js';
import { ATTENTION_ENTRY, ATTENTION_MMA_PINGPONG_SOURCE, ATTENTION_SOURCE, attentionModuleSpecs } from '../cuda/attention/attention-kernels.js';
import { GRU_SOURCE, gruKernelNames, gruModuleSpecs } from '../cuda/gru/gru-kernels.js';

/** dtype → the code `kernels/dtype.cuh` takes in GC_DTYPE. */
export const DTYPE_CODE: Readonly<Record<DType, string>> = { f32: 'GC_F32', f16: 'GC_F16', bf16: 'GC_BF16', i32: 'GC_I32' };


/** Functors of `kernels/ops.cuh`. */
export const UNARY_FUNCTOR: Readonly<Record<UnaryOp, string>> = {
  neg: 'OpNeg',
  abs: 'OpAbs',
  exp: 'OpExp',
  log: 'OpLog',
  sqrt: 'OpSqrt',
  rsqrt: 'OpRsqrt',
  relu: 'OpRelu',
  leakyRelu: 'OpLeakyRelu',
  sigmoid: 'OpSigmoid',
  tanh: 'OpTanh',
  gelu: 'OpGelu',
  geluTanh: 'OpGeluTanh',
  silu: 'OpSilu',
  softplus: 'OpSoftplus',
};

export const GRAD_FUNCTOR: Readonly<Record<ActivationGradOp, string>> = {
  reluGrad: 'OpReluGrad',
  leakyReluGrad: 'OpLeakyReluGrad',
  sigmoidGrad: 'OpSigmoidGrad',
  tanhGrad: 'OpTanhGrad',
  geluGrad: 'OpGeluGrad',
  geluTanhGrad: 'OpGeluTanhGrad',
  siluGrad: 'OpSiluGrad',
  softplusGrad: 'OpSoftplusGrad',
};

export const BINARY_FUNCTOR: Readonly<Record<BinaryOp, string>> = {
  add: 'OpAdd',
  sub: 'OpSub',
  mul: 'OpMul',
  div: 'OpDiv',
  max: 'OpMax',
  min: 'OpMin',
};

/** Reductions of `kernels/block-reduce.cuh`; mean is a sum divided at the end. */
export const REDUCE_FUNCTOR: Readonly<Record<ReduceOp, string>> = {
  sum: 'ReduceSum',
  mean: 'ReduceSum',
  max: 'ReduceMax',
  min: 'ReduceMin',
  argmax: 'ReduceArgmax',
};

/** The i32 ops the front-end allows (the kernels define only these for int). */
const INT_UNARY: readonly UnaryOp[] = ['neg', 'abs'];
const INT_BINARY: readonly BinaryOp[] = ['add', 'sub', 'mul', 'max', 'min'];
const INT_REDUCE: readonly ReduceOp[] = ['sum', 'max', 'min', 'argmax'];

export function unarySpec(op: UnaryOp, dtype: DType): ModuleSpec {
  return { file: 'unary.cu', defines: { GC_DTYPE: DTYPE_CODE[dtype], GC_OP: UNARY_FUNCTOR[op] } };
}

export function gradSpec(op: ActivationGradOp, dtype: DType): ModuleSpec {
  return { file: 'activation_grad.cu', defines: { GC_DTYPE: DTYPE_CODE[dtype], GC_OP: GRAD_FUNCTOR[op] } };
}

export function binarySpec(op: BinaryOp, dtype: DType): ModuleSpec {
  return { file: 'binary.cu', defines: { GC_DTYPE: DTYPE_CODE[dtype], GC_OP: BINARY_FUNCTOR[op] } };
}

/** fill.cu works on bit patterns by element size: one module for every dtype. */
export const FILL_SPEC: ModuleSpec = { file: 'fill.cu' };

export function castSpec(from: DType, to: DType): ModuleSpec {
  return { file: 'cast.cu', defines: { GC_SRC: DTYPE_CODE[from], GC_DST: DTYPE_CODE[to] } };
}

export function randomSpec(dtype: DType): ModuleSpec {
  return { file: 'random.cu', defines: { GC_DTYPE: DTYPE_CODE[dtype] } };
}

export function reduceSpec(op: ReduceOp, dtype: DType): ModuleSpec {
  return { file: 'reduce.cu', defines: { GC_DTYPE: DTYPE_CODE[dtype], GC_REDUCE: REDUCE_FUNCTOR[op] } };
}

export function softmaxSpec(dtype: DType): ModuleSpec {
  return { file: 'softmax.cu', defines: { GC_DTYPE: DTYPE_CODE[dtype] } };
}

/** softmax_cluster.cu (thread-block clusters): only for sm_90 and later, so not in {@link allModuleSpecs}. */
export function clusterSoftmaxSpec(dtype: DType): ModuleSpec {
  return { file: 'softmax_cluster.cu', defines: { GC_DTYPE: DTYPE_CODE[dtype] } };
}

/** The specialisations that need sm_90 (clusters), compiled only on such devices. */
export function clusterModuleSpecs(): ModuleSpec[] {
  return (['f32', 'f16', 'bf16'] as const).map(clusterSoftmaxSpec);
}

export function layerNormSpec(dtype: DType): ModuleSpec {
  return { file: 'layernorm.cu', defines: { GC_DTYPE: DTYPE_CODE[dtype] } };
}

/** transpose.cu moves bits: one module per element size (f32 serves i32, f16 serves bf16). */
export function transposeSpec(dtype: DType): ModuleSpec {
  return { file: 'transpose.cu', defines: { GC_DTYPE: dtypeSize[dtype] === 4 ? 'GC_F32' : 'GC_F16' } };
}

/** Every specialisation the CUDA backend can request, without duplicates. */
export function allModuleSpecs(): ModuleSpec[] {
  const specs: ModuleSpec[] = [FILL_SPEC];
  for (const dtype of DTYPES) {
    const isFloat = dtype !== 'i32';
    for (const op of Object.keys(UNARY_FUNCTOR) as UnaryOp[]) if (isFloat || INT_UNARY.includes(op)) specs.push(unarySpec(op, dtype));
    for (const op of Object.keys(BINARY_FUNCTOR) as BinaryOp[]) if (isFloat || INT_BINARY.includes(op)) specs.push(binarySpec(op, dtype));
    for (const op of ['sum', 'max', 'min', 'argmax'] as const) if (isFloat || INT_REDUCE.includes(op)) specs.push(reduceSpec(op, dtype));
    for (const to of DTYPES) if (to !== dtype) specs.push(castSpec(dtype, to));
    if (isFloat) {
      for (const op of Object.keys(GRAD_FUNCTOR) as ActivationGradOp[]) specs.push(gradSpec(op, dtype));
      specs.push(randomSpec(dtype), softmaxSpec(dtype), layerNormSpec(dtype));
    }
  }
  specs.push(transposeSpec('f32'), transposeSpec('f16'));
  specs.push(...attentionModuleSpecs());
  specs.push(...gruModuleSpecs());
  return specs;
}


/** The cached row kernels `kernels/row.cuh` instantiates for `prefix` (see GC_ROW_KERNELS). */
export function rowKernelNames(prefix: string, dtype: DType): string[] {
  const names: string[] = [];
  const vecChunks = dtypeSize[dtype] === 4 ? [1, 2, 4, 8] : [1, 2, 4];
  for (const team of ['warp', 'block']) {
    for (const c of team === 'warp' ? [1, 2, 4, 8, 16, 32] : [1, 2, 4, 8, 16]) names.push(`${prefix}_${team}_scalar_${c}`);
    for (const c of vecChunks) names.push(`${prefix}_${team}_vec_${c}`);
  }
  names.push(`${prefix}_looped`);
  return names;
}

/** The kernels (extern "C" names) a specialisation defines; the backend launches only these. */
export function kernelNames(spec: ModuleSpec): string[] {
  const dtypeOf = (code: string | number | undefined): DType => (Object.keys(DTYPE_CODE) as DType[]).find((d) => DTYPE_CODE[d] === code) ?? 'f32';
  const both = (name: string) => [`${name}_vec`, `${name}_scalar`];
  switch (spec.file) {
    case 'unary.cu':
      return both('unary');
    case 'activation_grad.cu':
      return both('grad');
    case 'binary.cu':
      return [
        ...both('binary_same'),
        ...both('binary_scalar_a'),
        ...both('binary_scalar_b'),
        ...both('binary_row_a'),
        ...both('binary_row_b'),
        'binary_general32',
        'binary_general64',
      ];
    case 'fill.cu':
      return [...both('fill32'), ...both('fill16')];
    case 'cast.cu':
      return both('cast');
    case 'random.cu':
      return ['random_uniform', 'random_normal', 'dropout'];
    case 'reduce.cu':
      return [
        'reduce_rows_warp',
        ...both('reduce_rows_block'),
        'reduce_cols',
        'reduce_cols_split',
        ...both('reduce_partial'),
        ...both('reduce_full'),
        'reduce_finish',
      ];
    case 'softmax.cu': {
      const dtype = dtypeOf(spec.defines?.GC_DTYPE);
      // 16-bit rows are staged only at 32K columns, which fill their blocks.
      const staged = dtype === 'f32' ? ['softmax_staged_full_8', 'softmax_staged_edge_8', 'softmax_split_3_5'] : ['softmax_staged_full_4'];
      return [...rowKernelNames('softmax', dtype), ...staged];
    }
    case 'softmax_cluster.cu':
      return ['softmax_cluster'];
    case 'layernorm.cu':
      return rowKernelNames('layernorm', dtypeOf(spec.defines?.GC_DTYPE));
    case ATTENTION_SOURCE.simt:
      return [ATTENTION_ENTRY.simt];
    case ATTENTION_SOURCE.mma:
    case ATTENTION_MMA_PINGPONG_SOURCE:
      return [ATTENTION_ENTRY.mma];
    case 'transpose.cu':
      return ['transpose_tiled'];
    case GRU_SOURCE:
      return gruKernelNames(spec);
    default:
      return [];
  }
}
