/**
 * The compiled specialisations of `kernels/gru.cu` and the kernels each defines, for the GRU
 * launcher and the CI compile test: per float dtype, one module of the persistent and gates
 * kernels, and one module of fused step kernels per column count (GRU_FUSED_COLUMNS); of
 * `kernels/gru_sequence.cu`, one module per column count (GRU_SEQ_COLUMNS); and of
 * `kernels/gru_rollout.cu`, one module per pair of column counts (ROLL_KH, ROLL_KS); of
 * `kernels/gru_rollout_cluster.cu` (sm_90+), one module.
 */
import type { DType } from '../../core/dtype.js';
import { FUSED_COLUMNS, fusedKernelNames, ROLLOUT_COLUMNS, SEQUENCE_COLUMNS, sequenceKernelNames } from './gru-plan.js';
import type { ModuleSpec } from '../../gpu/kernel-sources.js';
import { DTYPE_CODE } from '../../gpu/kernel-specs.js';

export const GRU_SOURCE = 'gru.cu';
export const GRU_ROLLOUT_SOURCE = 'gru_rollout.cu';
export const GRU_ROLLOUT_CLUSTER_SOURCE = 'gru_rollout_cluster.cu';
export const GRU_SEQUENCE_SOURCE = 'gru_sequence.cu';

/** The extern "C" kernels of gru.cu built without GRU_FUSED_COLUMNS. */
export const GRU_KERNELS: readonly string[] = ['gru_persistent_tb2', 'gru_persistent_tb8', 'gru_gates'];

function dtypeCode(dtype: DType): string {
  if (dtype === 'i32') throw new TypeError('gru.cu has no i32 specialisation');
  return DTYPE_CODE[dtype];
}

/** The persistent and gates kernels for a dtype. */
export function gruSpec(dtype: DType): ModuleSpec {
  return { file: GRU_SOURCE, defines: { GC_DTYPE: dtypeCode(dtype) } };
}

/** The fused step kernels with `columns` of h per lane, for a dtype. */
export function gruFusedSpec(dtype: DType, columns: number): ModuleSpec {
  return { file: GRU_SOURCE, defines: { GC_DTYPE: dtypeCode(dtype), GRU_FUSED_COLUMNS: columns } };
}

/** The one-launch sequence kernels with `columns` of h per lane, for a dtype. */
export function gruSequenceSpec(dtype: DType, columns: number): ModuleSpec {
  return { file: GRU_SEQUENCE_SOURCE, defines: { GC_DTYPE: dtypeCode(dtype), GRU_SEQ_COLUMNS: columns } };
}

/** The one-launch rollout kernel with `kh` columns of h and `ks` of the state per lane, for a dtype. */
export function gruRolloutSpec(dtype: DType, kh: number, ks: number): ModuleSpec {
  return { file: GRU_ROLLOUT_SOURCE, defines: { GC_DTYPE: dtypeCode(dtype), ROLL_KH: kh, ROLL_KS: ks } };
}

/** The rollout kernel over thread-block clusters (sm_90+), for a dtype. */
export function gruRolloutClusterSpec(dtype: DType): ModuleSpec {
  return { file: GRU_ROLLOUT_CLUSTER_SOURCE, defines: { GC_DTYPE: dtypeCode(dtype) } };
}

/** The kernels a gru.cu, gru_sequence.cu, gru_rollout.cu or gru_rollout_cluster.cu specialisation defines. */
export function gruKernelNames(spec: ModuleSpec): string[] {
  if (spec.file === GRU_ROLLOUT_SOURCE) return ['gru_rollout'];
  if (spec.file === GRU_ROLLOUT_CLUSTER_SOURCE) return ['gru_rollout_cluster'];
  if (spec.file === GRU_SEQUENCE_SOURCE) return sequenceKernelNames(Number(spec.defines?.GRU_SEQ_COLUMNS));
  const columns = spec.defines?.GRU_FUSED_COLUMNS;
  return columns === undefined ? [...GRU_KERNELS] : fusedKernelNames(Number(columns));
}

/** Every specialisation the GRU can request (the cluster rollout on sm_90+ only). */
export function gruModuleSpecs(): ModuleSpec[] {
  return (['f32', 'f16', 'bf16'] as const).flatMap((dtype) => [
    gruSpec(dtype),
    ...FUSED_COLUMNS.map((c) => gruFusedSpec(dtype, c)),
    ...SEQUENCE_COLUMNS.map((c) => gruSequenceSpec(dtype, c)),
    ...ROLLOUT_COLUMNS.flatMap((kh) => ROLLOUT_COLUMNS.map((ks) => gruRolloutSpec(dtype, kh, ks))),
    gruRolloutClusterSpec(dtype),
  ]);
}
