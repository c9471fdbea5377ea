/**
 * The compiled specialisations of `kernels/gru.cu` (one per float dtype) and the kernels each
 * defines, for the GRU launcher and the CI compile test.
 */
import type { DType } from '../dtype.js';
import type { ModuleSpec } from './kernel-sources.js';

export const GRU_SOURCE = 'gru.cu';

/** The extern "C" kernels of gru.cu. */
export const GRU_KERNELS: readonly string[] = ['gru_persistent_tb2', 'gru_persistent_tb8', 'gru_gates'];

const DTYPE_CODE: Readonly<Record<'f32' | 'f16' | 'bf16', string>> = { f32: 'GC_F32', f16: 'GC_F16', bf16: 'GC_BF16' };

export function gruSpec(dtype: DType): ModuleSpec {
  if (dtype === 'i32') throw new TypeError('gru.cu has no i32 specialisation');
  return { file: GRU_SOURCE, defines: { GC_DTYPE: DTYPE_CODE[dtype] } };
}

/** Every specialisation the GRU can request. */
export function gruModuleSpecs(): ModuleSpec[] {
  return (['f32', 'f16', 'bf16'] as const).map(gruSpec);
}
