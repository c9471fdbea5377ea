/**
 * GpuCompute: tensors and ops on the best local device, with a CPU fallback.
 * @module gpucompute/compute
 */
export { GpuCompute } from './gpu-compute.js';
export { Communicator } from './communicator.js';
export type {
  AllReduceOptions,
  BroadcastOptions,
  CommunicatorOptions,
  JoinOptions,
  PeerOptions,
  Ranked,
  ReduceScatterOptions,
  ReduceToRootOptions,
} from './communicator.js';
export { DataParallel, DATA_PARALLEL_OPTIONS } from './data-parallel.js';
export type { DataParallelOptions } from './data-parallel.js';
export { COLLECTIVE_REDUCE_OPS } from './backend/collectives.js';
export type { CollectiveCall, CollectiveKind, CollectiveReduceOp, CollectiveTransport } from './backend/collectives.js';
export type { GpuComputeOptions, PlainUnaryMethods } from './gpu-compute.js';
export { Tensor } from './tensor/tensor.js';
export type { HostArray, RawHostArray, TensorOwner } from './tensor/tensor.js';
export type { PlainUnaryTensorMethods } from './tensor-methods.js';
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
export { UNARY_OPS, BINARY_OPS, ACTIVATION_GRAD } from './core/elementwise-ops.js';
export type {
  ActivationGradOp,
  ActivationName,
  BinaryOp,
  BinaryOpDefinition,
  PlainUnaryOp,
  UnaryOp,
  UnaryOpDefinition,
} from './core/elementwise-ops.js';
export { REDUCE_OPS } from './core/reduce-plan.js';
export type { ReduceOp, ReduceOpDefinition, ReducePlan } from './core/reduce-plan.js';
export type { BackendBuffer, TensorView } from './core/view.js';
export type { BroadcastPlan } from './core/broadcast.js';
export { MATMUL_ACTIVATIONS } from './core/matmul-plan.js';
export type { MatmulActivation, MatmulParams } from './core/matmul-plan.js';
export { MAX_ATTENTION_HEAD_DIM } from './core/attention-params.js';
export type { AttentionParams } from './core/attention-params.js';
export type { AttentionBackwardParams } from './core/attention-backward-params.js';
export type { GruPath, GruRecurrenceParams, GruRolloutParams } from './core/gru-params.js';
export type { GruBackwardParams } from './core/gru-backward-params.js';
export type { Backend, BackendCore, BackendStream, DeviceInfo, OptionalOp, OptionalOps, PoolStats, RecordedGraph } from './backend/backend.js';
export type { CapturedFunction, CaptureResult } from './ops/capture.js';
export type { ComposedBackend } from './backend/composed-ops.js';
export { DenseLinalgError } from './backend/dense-linalg.js';
export type { DenseLinalg, TruncatedSvdShape, TruncatedSvdViews } from './backend/dense-linalg.js';
export { BackendUnavailableError } from './backend/registration.js';
export type { BackendProbe, BackendRegistration, OpenOptions, ProbedDevice, ProbeOptions } from './backend/registration.js';
export { BACKENDS, BACKEND_KINDS } from './backends.js';
export type { CudaProbe, NcclProbe, NvrtcProbe } from './cuda/probe.js';
export type { HipProbe } from './hip/probe.js';
export type { CpuProbe } from './cpu/registration.js';
export type { WebGpuProbe } from './webgpu/registration.js';
export { WEBGPU_FEATURES, WEBGPU_LIMITS } from './webgpu/adapter.js';
export type { WebGpuAdapterEntry, WebGpuAdapterInfo, WebGpuBackendType, WebGpuFeature, WebGpuLimit } from './webgpu/adapter.js';
export type { CallProbe, LibraryProbe } from './backend/registration.js';
export type { BackendKind } from './backends.js';
export { supportTable } from './support.js';
export type { OpSupport, SupportTable } from './support.js';
export type { SkippedBackend } from './selection.js';
export { selectDevice } from './select-device.js';
export type { DeviceCandidate, DeviceRejection, DeviceRequirements, DeviceSelection } from './select-device.js';
export { Logger } from './core/logger.js';
export type { LogLevel, LogLevelSetting, LoggerFunction } from './core/logger.js';
export { formatProgress } from './core/progress.js';
export type { ProgressEvent, ProgressListener, ProgressOutcome, ProgressPhase } from './core/progress.js';
export { ProgressLine } from './progress-line.js';
export type { ProgressStream } from './progress-line.js';
export { warmupKernels } from './warmup.js';
export type { WarmupOptions } from './warmup.js';
export { WARMUP_OPS } from './core/warmup-ops.js';
export type { WarmupOp } from './core/warmup-ops.js';
export type { WarmupResult } from './cuda/warmup-pool.js';
export { WarmupError } from './cuda/warmup-error.js';
export { CpuBackend } from './cpu/cpu-backend.js';
export type { CpuBackendOptions } from './cpu/cpu-backend.js';
export type { CpuEngine } from './cpu/cpu-engine.js';
export type { SimdVariant } from './cpu/simd/wasm-module.js';
export { philox4x32 } from './cpu/philox.js';
export type { TensorData } from './ops/creation.js';
export type { ActivationGradOptions, GeluOptions } from './ops/elementwise.js';
export type { RandOptions, RandnOptions } from './ops/random.js';
export type { ReduceOptions } from './ops/reduce.js';
export type { MatmulOptions } from './ops/matmul.js';
export type { AttentionOptions, AttentionResult } from './ops/attention.js';
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
} from './ops/gru.js';
export { FULL_SVD_MAX_DIM, SVD_DEFAULTS } from './ops/svd.js';
export type { SvdOptions, SvdResult } from './ops/svd.js';
export { Optimizer } from './optim/optimizer.js';
export type { OptimizerParams, OptimizerStateDict, ParamGroup, ParamStateDict, StepEntry, ResolveOptions } from './optim/optimizer.js';
export { SGD, SGD_OPTIONS } from './optim/sgd.js';
export type { SgdOptions } from './optim/sgd.js';
export { AdamW, ADAMW_OPTIONS } from './optim/adamw.js';
export type { AdamWOptions } from './optim/adamw.js';
export type { AdamWStepParams, OptimizerStepParams, OptimizerTensor, SgdStepParams } from './core/optimizer-params.js';
export type { BackwardOptions, GradResult } from './autograd/backward.js';
export type { BackwardFn } from './autograd/record.js';
export type { LossOptions, LossReduction } from './ops/losses.js';
