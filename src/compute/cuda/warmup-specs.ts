/**
 * Which kernel modules a warmup compiles: for each op (by its GpuCompute method name) and dtype,
 * the specialisations the CUDA backend asks for on the target device, as it picks them there.
 *
 * - Elementwise, reductions, rows, transpose, random, fill and cast: every module the op can
 *   request for the dtype (the cluster softmax too from sm_90).
 * - matmul and linear: every tile configuration the autotuner times on first use (the first
 *   use of a problem class compiles them all: most of a cold product's time), for f32 (SIMT) and
 *   tf32, f16 and bf16 (tensor cores; wgmma on sm_90), each transpose, operands 16-byte aligned.
 *   Unaligned operands select other modules, which compile on first use.
 * - attention: for each head dim, the configuration the launcher picks on the device (the Hopper
 *   kernel on sm_90 for 64 and 128, else the first tensor-core or CUDA-core tile whose shared
 *   memory fits), both row alignments; and the split-key kernel it picks for decode shapes (the
 *   tensor-core one in both alignments, or both row counts of the CUDA-core one).
 * - gru: its step, gate and persistent kernels, the one-launch sequences and rollouts, and the
 *   matmul modules of its h·W_hhᵀ products.
 *
 * Modules the NVRTC at hand cannot build (the `sm_90a` Hopper kernels before NVRTC 12) are left
 * out. Pure: the same target and selection give the same list.
 */
import type { DType } from '../core/dtype.js';
import { ACTIVATION_GRAD_OPS, BINARY_OP_NAMES, binaryTakesInt, UNARY_OP_NAMES, unaryTakesInt } from '../core/elementwise-ops.js';
import { REDUCE_OPS } from '../core/reduce-plan.js';
import { BINARY_METHODS, WARMUP_OPS, type WarmupOp } from '../core/warmup-ops.js';
import { moduleKey, type ModuleSpec } from '../gpu/kernel-sources.js';
import {
  binarySpec,
  castSpec,
  clusterSoftmaxSpec,
  FILL_SPEC,
  gradSpec,
  layerNormSpec,
  oneHotSpec,
  optimizerSpec,
  randomSpec,
  reduceSpec,
  softmaxSpec,
  transposeSpec,
  unarySpec,
} from '../gpu/kernel-specs.js';
import { attentionWgmmaEnabled } from './attention/attention.js';
import { decodeConfig, decodeSharedBytes, decodeSimtRowCounts } from './attention/attention-decode-kernels.js';
import { ATTENTION_HEAD_DIMS, attentionSharedBytes, attentionSpec, mmaCandidates, simtCandidates, WGMMA_HEAD_DIMS, wgmmaConfig } from './attention/attention-kernels.js';
import { gruFusedSpec, gruRolloutClusterSpec, gruRolloutSpec, gruSequenceSpec, gruSpec } from './gru/gru-kernels.js';
import { FUSED_COLUMNS, ROLLOUT_COLUMNS, SEQUENCE_COLUMNS } from './gru/gru-plan.js';
import { dynamicSharedBytes, kernelSource } from './matmul/matmul-kernels.js';
import { matmulFamilies, matmulVariant, tuningCandidates } from './matmul/product.js';
import type { WarmupTarget } from './warmup-target.js';

/** What to warm: ops and dtypes (each default: all of them). An op skips the dtypes it does not take. */
export interface WarmupSelection {
  readonly ops?: readonly WarmupOp[];
  readonly dtypes?: readonly DType[];
}

/** What the enumeration needs to know of the target. */
export type WarmupSpecTarget = Pick<WarmupTarget, 'deviceArch' | 'archSpecific' | 'sharedMemoryPerBlockOptin'>;

type FloatDType = Exclude<DType, 'i32'>;
/** Matmul element kinds: f32 on CUDA cores, tf32 (f32 storage on tensor cores), f16, bf16. */
type MatmulKind = FloatDType | 'tf32';

const TRANSPOSES: readonly (readonly [boolean, boolean])[] = [
  [false, false],
  [false, true],
  [true, false],
  [true, true],
];

/** The module specs a warmup of `selection` compiles for `target`, without duplicates. */
export function warmupModuleSpecs(target: WarmupSpecTarget, selection: WarmupSelection = {}): ModuleSpec[] {
  const ops = new Set<WarmupOp>(selection.ops ?? WARMUP_OPS);
  const dtypes = selection.dtypes ?? (['f32', 'f16', 'bf16', 'i32'] as const);
  const floats = dtypes.filter((d): d is FloatDType => d !== 'i32');
  const { major, minor } = computeCapability(target.deviceArch);
  const specs: ModuleSpec[] = [];
  const add = (spec: ModuleSpec) => {
    // Hopper-only modules need arch-specific targets, which this NVRTC may not build.
    if (spec.arch?.endsWith('a') && !target.archSpecific) return;
    specs.push(spec);
  };

  if (ops.has('fill')) add(FILL_SPEC);
  if (ops.has('cast')) for (const from of dtypes) for (const to of dtypes) if (from !== to) add(castSpec(from, to));
  if (ops.has('rand') || ops.has('randn') || ops.has('dropout')) floats.forEach((d) => add(randomSpec(d)));
  for (const op of UNARY_OP_NAMES) {
    if (ops.has(op)) for (const d of dtypes) if (d !== 'i32' || unaryTakesInt(op)) add(unarySpec(op, d));
  }
  if (ops.has('activationGrad')) for (const op of ACTIVATION_GRAD_OPS) floats.forEach((d) => add(gradSpec(op, d)));
  for (const op of BINARY_OP_NAMES) {
    if (ops.has(BINARY_METHODS[op] as WarmupOp)) for (const d of dtypes) if (d !== 'i32' || binaryTakesInt(op)) add(binarySpec(op, d));
  }
  for (const op of ['sum', 'mean', 'max', 'min', 'argmax'] as const) {
    // mean is a sum divided at the end: sum's module.
    if (ops.has(op)) for (const d of dtypes) if (d !== 'i32' || REDUCE_OPS[op].int) add(reduceSpec(op === 'mean' ? 'sum' : op, d));
  }
  if (ops.has('softmax') || ops.has('logSoftmax')) {
    for (const d of floats) {
      add(softmaxSpec(d));
      // Rows past 32K columns are split over thread-block clusters from sm_90.
      if (major >= 9) add(clusterSoftmaxSpec(d));
    }
  }
  if (ops.has('layerNorm')) floats.forEach((d) => add(layerNormSpec(d)));
  if (ops.has('oneHot')) floats.forEach((d) => add(oneHotSpec(d)));
  if (ops.has('optimizerStep')) floats.forEach((d) => add(optimizerSpec(d)));
  if (ops.has('transpose')) dtypes.forEach((d) => add(transposeSpec(d)));

  const matmulKinds = (dtype: FloatDType): MatmulKind[] => (dtype === 'f32' ? ['f32', 'tf32'] : [dtype]);
  if (ops.has('matmul') || ops.has('linear')) {
    for (const d of floats) for (const kind of matmulKinds(d)) matmulSpecs(target, major, minor, kind, TRANSPOSES).forEach(add);
  }
  if (ops.has('gru')) {
    for (const d of floats) {
      add(gruSpec(d));
      for (const columns of FUSED_COLUMNS) add(gruFusedSpec(d, columns));
      for (const columns of SEQUENCE_COLUMNS) add(gruSequenceSpec(d, columns));
      for (const kh of ROLLOUT_COLUMNS) for (const ks of ROLLOUT_COLUMNS) add(gruRolloutSpec(d, kh, ks));
      // The rollout over thread-block clusters from sm_90.
      if (major >= 9) add(gruRolloutClusterSpec(d));
      // The steps path's h·W_hhᵀ (and the input projection) are NT products.
      for (const kind of matmulKinds(d)) matmulSpecs(target, major, minor, kind, [[false, true]]).forEach(add);
    }
  }
  if (ops.has('attention')) for (const d of floats) attentionSpecs(target, major, minor, d).forEach(add);

  const unique = new Map<string, ModuleSpec>();
  for (const spec of specs) if (!unique.has(moduleKey(spec))) unique.set(moduleKey(spec), spec);
  return [...unique.values()];
}

/** `sm_90` → 9.0, `sm_120` → 12.0. */
function computeCapability(arch: string): { major: number; minor: number } {
  const n = Number(/^sm_(\d+)$/.exec(arch)?.[1] ?? NaN);
  return { major: Math.floor(n / 10), minor: n % 10 };
}

/** The tuning candidates of one matmul kind for aligned operands, for each transpose given. */
function matmulSpecs(target: WarmupSpecTarget, major: number, minor: number, kind: MatmulKind, transposes: readonly (readonly [boolean, boolean])[]): ModuleSpec[] {
  const dtype: FloatDType = kind === 'tf32' ? 'f32' : kind;
  const families = matmulFamilies(major, minor, kind !== 'f32', true);
  const specs: ModuleSpec[] = [];
  for (const config of tuningCandidates({ families, dtype })) {
    for (const [transA, transB] of transposes) {
      const variant = matmulVariant(config, { dtype, transA, transB, alignA: true, alignB: true, vecC: true });
      // The tuner skips configurations whose shared memory the device cannot give.
      if (dynamicSharedBytes(variant) > target.sharedMemoryPerBlockOptin) continue;
      const { file, defines, arch } = kernelSource(variant);
      specs.push({ file, defines, ...(arch === undefined ? {} : { arch }) });
    }
  }
  return specs;
}

/** The attention modules the launcher picks on the target for each head dim, as `defaultAttentionConfig` does. */
function attentionSpecs(target: WarmupSpecTarget, major: number, minor: number, dtype: FloatDType): ModuleSpec[] {
  const specs: ModuleSpec[] = [];
  const optin = target.sharedMemoryPerBlockOptin;
  for (const dp of major === 9 && minor === 0 && attentionWgmmaEnabled() ? WGMMA_HEAD_DIMS : []) {
    const hopper = wgmmaConfig(dp, dtype);
    if (hopper && attentionSharedBytes(hopper, dp) <= optin) specs.push(attentionSpec(hopper, dtype, dp, true));
  }
  for (const dp of ATTENTION_HEAD_DIMS) {
    // Rows that are not 16-byte aligned (or head dims not a multiple of 8) take the first tile that fits.
    const tensorCores = dtype !== 'f32' && major >= 8;
    const fallback = [...(tensorCores ? mmaCandidates(dp) : []), ...simtCandidates(dp)].find((c) => attentionSharedBytes(c, dp) <= optin);
    if (!fallback) continue;
    if (fallback.family === 'simt') specs.push(attentionSpec(fallback, dtype, dp, false));
    else for (const aligned of [true, false]) specs.push(attentionSpec(fallback, dtype, dp, aligned));
    // Decode shapes, as defaultAttentionConfig routes them.
    const mma = decodeConfig('mma', 1, dp);
    if (tensorCores && decodeSharedBytes(mma, dp) <= optin) {
      for (const aligned of [true, false]) specs.push(attentionSpec(mma, dtype, dp, aligned));
    } else {
      for (const rows of decodeSimtRowCounts(dp)) specs.push(attentionSpec({ family: 'decode', engine: 'simt', rows }, dtype, dp, false));
    }
  }
  return specs;
}
