/**
 * GpuCompute: tensors and ops on the best local device, with a CPU fallback.
 */
export { GpuCompute } from './gpu-compute.js';
export type {
  ActivationName,
  GeluOptions,
  GpuComputeOptions,
  RandnOptions,
  RandOptions,
  ReduceOptions,
  TensorData,
} from './gpu-compute.js';
export { Tensor } from './tensor.js';
export type { HostArray, RawHostArray } from './tensor.js';
export {
  DTYPES,
  dtypeSize,
  isDType,
  isFloatDType,
  f32ToF16Bits,
  f16BitsToF32,
  f32ToBf16Bits,
  bf16BitsToF32,
  toF16Array,
  fromF16Array,
  toBf16Array,
  fromBf16Array,
} from './core/dtype.js';
export type { DType } from './core/dtype.js';
export { BACKEND_KINDS } from './backend/backend.js';
export type { Backend, BackendKind, BackendStream, DeviceInfo, PoolStats } from './backend/backend.js';
export type { BackendBuffer, TensorView } from './core/view.js';
export type { BroadcastPlan } from './core/broadcast.js';
export type { ActivationGradOp, BinaryOp, UnaryOp } from './core/elementwise-ops.js';
export type { ReduceOp, ReducePlan } from './core/reduce-plan.js';
export type { MatmulActivation, MatmulParams } from './core/matmul-plan.js';
export { BackendUnavailableError, AUTO_ORDER } from './backend-selection.js';
export type { SkippedBackend } from './backend-selection.js';
export { selectDevice } from './select-device.js';
export type { DeviceCandidate, DeviceRequirements, DeviceSelection } from './select-device.js';
export { Logger } from './core/logger.js';
export type { LogLevel, LogLevelSetting, LoggerFunction } from './core/logger.js';
export { CpuBackend } from './cpu/cpu-backend.js';
export { philox4x32 } from './cpu/philox.js';
export { MATMUL_ACTIVATIONS } from './core/matmul-plan.js';
export type { MatmulOptions } from './matmul-op.js';
export { MAX_ATTENTION_HEAD_DIM } from './core/attention-params.js';
export type { AttentionParams } from './core/attention-params.js';
export type { AttentionOptions, AttentionResult } from './attention-op.js';
export type {
  GruCommonOptions,
  GruLayerNorm,
  GruLayerWeights,
  GruOptions,
  GruOutputProjection,
  GruResult,
  GruRolloutOptions,
  GruRolloutResult,
  GruWeights,
} from './gru-op.js';
export type { GruPath, GruRecurrenceParams } from './core/gru-params.js';
export { FULL_SVD_MAX_DIM, SVD_DEFAULTS } from './svd-op.js';
export type { SvdOptions, SvdResult } from './svd-op.js';
export { DenseLinalgError } from './backend/dense-linalg.js';
