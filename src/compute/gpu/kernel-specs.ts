/**
 * Which compiled specialisation of which portable `kernels/` source serves each op and dtype: one
 * module per (source, dtype[, op]), selected with `-D` defines (GC_DTYPE, GC_OP, GC_REDUCE,
 * GC_SRC/GC_DST), or one per kernel of it for the sources of {@link ONE_KERNEL_FILES}. The op functors follow from the op tables (`core/elementwise-ops.ts`), so a new
 * op needs no entry here. Also lists every portable specialisation and the kernels each defines,
 * which the CI compile tests build with NVRTC and hiprtc.
 */
import { DTYPES, dtypeSize, type DType } from '../core/dtype.js';
import {
  ACTIVATION_GRAD_OPS,
  BINARY_OP_NAMES,
  binaryTakesInt,
  functorName,
  UNARY_OP_NAMES,
  unaryTakesInt,
  type ActivationGradOp,
  type BinaryOp,
  type UnaryOp,
} from '../core/elementwise-ops.js';
import { REDUCE_OPS, type ReduceOp } from '../core/reduce-plan.js';
import type { ModuleSpec } from './kernel-sources.js';

/** dtype → the code `kernels/dtype.cuh` takes in GC_DTYPE. */
export const DTYPE_CODE: Readonly<Record<DType, string>> = { f32: 'GC_F32', f16: 'GC_F16', bf16: 'GC_BF16', i32: 'GC_I32' };

/** Reductions of `kernels/block-reduce.cuh`; mean is a sum divided at the end. */
const REDUCE_FUNCTOR: Readonly<Record<ReduceOp, string>> = {
  sum: 'ReduceSum',
  mean: 'ReduceSum',
  max: 'ReduceMax',
  min: 'ReduceMin',
  argmax: 'ReduceArgmax',
};

export function unarySpec(op: UnaryOp, dtype: DType): ModuleSpec {
  return { file: 'unary.cu', defines: { GC_DTYPE: DTYPE_CODE[dtype], GC_OP: functorName(op) } };
}

export function gradSpec(op: ActivationGradOp, dtype: DType): ModuleSpec {
  return { file: 'activation_grad.cu', defines: { GC_DTYPE: DTYPE_CODE[dtype], GC_OP: functorName(op) } };
}

export function binarySpec(op: BinaryOp, dtype: DType): ModuleSpec {
  return { file: 'binary.cu', defines: { GC_DTYPE: DTYPE_CODE[dtype], GC_OP: functorName(op) } };
}

/** fill.cu works on bit patterns by element size: one module for every dtype. */
export const FILL_SPEC: ModuleSpec = { file: 'fill.cu' };

export function castSpec(from: DType, to: DType): ModuleSpec {
  return { file: 'cast.cu', defines: { GC_SRC: DTYPE_CODE[from], GC_DST: DTYPE_CODE[to] } };
}

export function randomSpec(dtype: DType): ModuleSpec {
  return { file: 'random.cu', defines: { GC_DTYPE: DTYPE_CODE[dtype] } };
}

/**
 * Sources whose kernels build one at a time (`kernels/kernel_select.cuh`): an op's first use
 * compiles only the kernel it launches (H200, NVRTC 13.0: one softmax kernel 0.12-0.18 s against
 * 1.9-2.6 s for softmax.cu's 24; unary.cu's two gelu kernels 0.39 s together). A warmup still compiles the whole
 * source (cheaper for all of them), and the backends take a kernel from that module where
 * they have it (see {@link wholeSourceSpec}).
 */
export const ONE_KERNEL_FILES: ReadonlySet<string> = new Set(['softmax.cu', 'layernorm.cu', 'reduce.cu', 'binary.cu', 'unary.cu', 'activation_grad.cu', 'random.cu', 'transpose.cu']);

/** `spec` narrowed to its kernel `name` (a source of {@link ONE_KERNEL_FILES}). */
export function oneKernelSpec(spec: ModuleSpec, name: string): ModuleSpec {
  return { ...spec, defines: { ...spec.defines, GC_ONE_KERNEL: 1, [`GC_KERNEL_${name}`]: 1 } };
}

/** The kernel a {@link oneKernelSpec} narrows to; undefined for a whole source. */
function onlyKernel(spec: ModuleSpec): string | undefined {
  if (spec.defines?.GC_ONE_KERNEL === undefined) return undefined;
  return Object.keys(spec.defines).find((d) => d.startsWith('GC_KERNEL_'))?.slice('GC_KERNEL_'.length);
}

/** The whole source a {@link oneKernelSpec} was narrowed from (its module holds the kernel too); undefined for any other spec. */
export function wholeSourceSpec(spec: ModuleSpec): ModuleSpec | undefined {
  const only = onlyKernel(spec);
  if (only === undefined) return undefined;
  const { GC_ONE_KERNEL: _one, [`GC_KERNEL_${only}`]: _kernel, ...defines } = spec.defines!;
  return { ...spec, defines };
}

export function reduceSpec(op: ReduceOp, dtype: DType): ModuleSpec {
  return { file: 'reduce.cu', defines: { GC_DTYPE: DTYPE_CODE[dtype], GC_REDUCE: REDUCE_FUNCTOR[op] } };
}

export function softmaxSpec(dtype: DType): ModuleSpec {
  return { file: 'softmax.cu', defines: { GC_DTYPE: DTYPE_CODE[dtype] } };
}

/** softmax_cluster.cu (thread-block clusters): only for sm_90 and later, so not in {@link portableModuleSpecs}. */
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

export function oneHotSpec(dtype: DType): ModuleSpec {
  return { file: 'one_hot.cu', defines: { GC_DTYPE: DTYPE_CODE[dtype] } };
}

/** optimizer.cu: SGD and AdamW steps for parameters of one float dtype (f32 state). */
export function optimizerSpec(dtype: DType): ModuleSpec {
  return { file: 'optimizer.cu', defines: { GC_DTYPE: DTYPE_CODE[dtype] } };
}

/** transpose.cu moves bits: one module per element size (f32 serves i32, f16 serves bf16). */
export function transposeSpec(dtype: DType): ModuleSpec {
  return { file: 'transpose.cu', defines: { GC_DTYPE: dtypeSize[dtype] === 4 ? 'GC_F32' : 'GC_F16' } };
}

/** Every portable specialisation an op can request, without duplicates (CUDA and HIP compile all of them). */
export function portableModuleSpecs(): ModuleSpec[] {
  const specs: ModuleSpec[] = [FILL_SPEC];
  for (const dtype of DTYPES) {
    const isFloat = dtype !== 'i32';
    for (const op of UNARY_OP_NAMES) if (isFloat || unaryTakesInt(op)) specs.push(unarySpec(op, dtype));
    for (const op of BINARY_OP_NAMES) if (isFloat || binaryTakesInt(op)) specs.push(binarySpec(op, dtype));
    // mean shares sum's module.
    for (const op of ['sum', 'max', 'min', 'argmax'] as const) if (isFloat || REDUCE_OPS[op].int) specs.push(reduceSpec(op, dtype));
    for (const to of DTYPES) if (to !== dtype) specs.push(castSpec(dtype, to));
    if (isFloat) {
      for (const op of ACTIVATION_GRAD_OPS) specs.push(gradSpec(op, dtype));
      specs.push(randomSpec(dtype), softmaxSpec(dtype), layerNormSpec(dtype), oneHotSpec(dtype), optimizerSpec(dtype));
    }
  }
  specs.push(transposeSpec('f32'), transposeSpec('f16'));
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

/** The kernels (extern "C" names) a portable specialisation defines (none for another source); the backends launch only these. */
export function portableKernelNames(spec: ModuleSpec): string[] {
  const only = onlyKernel(spec);
  if (only !== undefined) return [only];
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
        ...both('binary_imm_a'),
        ...both('binary_imm_b'),
        ...both('binary_row_a'),
        ...both('binary_row_b'),
        'binary_row_a_wrap',
        'binary_row_b_wrap',
        'binary_general32',
        'binary_general64',
        'binary_general_rows32',
        'binary_general_rows64',
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
        'reduce_short',
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
      return [...rowKernelNames('softmax', dtype), 'softmax_thread', ...staged];
    }
    case 'softmax_cluster.cu':
      return ['softmax_cluster'];
    case 'layernorm.cu':
      return rowKernelNames('layernorm', dtypeOf(spec.defines?.GC_DTYPE));
    case 'transpose.cu':
      return ['transpose_tiled', ...['cols', 'rows'].flatMap((long) => [`transpose_narrow_${long}_vec`, `transpose_narrow_${long}_scalar`])];
    case 'one_hot.cu':
      return ['one_hot'];
    case 'optimizer.cu':
      return ['sgd_step', 'adamw_step'];
    default:
      return [];
  }
}
