/**
 * `gpu.gruRollout` over thread-block clusters on CUDA sm_90+ (`kernels/gru_rollout_cluster.cu`):
 * one cluster per member, whose CTAs keep the member's weights in shared memory for the whole
 * rollout and exchange h_t and y_t through distributed shared memory. Members never wait for one
 * another, so there is no grid barrier, and no cooperative launch either.
 */
import { CudaError } from '../../../driver/cuda-error.js';
import { FunctionAttribute, LaunchAttributeId } from '../../../driver/generated/enums.js';
import type { Kernel } from '../../../driver/kernel.js';
import { funcSetAttribute } from '../../../driver/raw/function.js';
import { occupancyMaxActiveClusters } from '../../../driver/raw/occupancy.js';
import { CudaResult } from '../../../driver/result-code.js';
import type { ArgType } from '../../../ffi/kernel-args.js';
import type { OpStateKey } from '../../backend/op-states.js';
import type { DType } from '../../core/dtype.js';
import type { GruRolloutParams } from '../../core/gru-params.js';
import type { TensorView } from '../../core/view.js';
import type { CudaContext } from '../cuda-context.js';
import type { RegisteredKernel } from '../kernel-registry.js';
import { gruRolloutClusterSpec } from './gru-kernels.js';
import { ROLLOUT_CLUSTER_SIZES, ROLLOUT_CLUSTER_THREADS, rolloutClusterPlans, type RolloutClusterPlan } from './gru-plan.js';

const SIGNATURE: readonly ArgType[] = [
  'ptr', 'u64', 'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'u64', 'ptr', 'u64', 'ptr', 'ptr',
  'i32', 'i32', 'i32', 'i32', 'i32', 'i32', 'i32', 'i32', 'i32', 'i32', 'i32',
];
/** Largest cluster CUDA guarantees; larger ones need the kernel's non-portable opt-in. */
const PORTABLE_CLUSTER = 8;

/** What the driver answers for a cluster size the device does not launch. */
const SIZE_REFUSED: ReadonlySet<number> = new Set([CudaResult.CUDA_ERROR_INVALID_CLUSTER_SIZE, CudaResult.CUDA_ERROR_NOT_SUPPORTED]);

/** Clusters resident at once, per kernel dtype, cluster size and shared memory: asked once per backend. */
const RESIDENT_CLUSTERS: OpStateKey<Map<string, number>, CudaContext> = { name: 'gru rollout clusters', create: () => new Map() };
/**
 * The plan 'auto' takes (null: none), per dtype and E, B, H, S, and the one it took last with its
 * kernel: a pipeline asks for the same rollout pass after pass, and a rollout's host cost is most
 * of a small one's time (the shortcut builds no key string).
 */
class AutoPlans {
  readonly byShape = new Map<string, RolloutClusterPlan | null>();
  last: { dtype: DType; E: number; B: number; H: number; S: number; plan: RolloutClusterPlan | undefined; kernel: RegisteredKernel | undefined } | undefined;
}
const AUTO_PLANS: OpStateKey<AutoPlans, CudaContext> = { name: 'gru rollout cluster plans', create: () => new AutoPlans() };

/**
 * Runs the rollout (a float dtype) over clusters where the device launches them: with `cluster`
 * CTAs per member where given (any number of waves: the tests and benchmarks), else with the
 * plan of {@link autoClusterPlan}; returns false, having queued nothing, where it does not.
 */
export function cudaGruRolloutCluster(backend: CudaContext, p: GruRolloutParams, cluster?: number): boolean {
  const { ensemble: E, batch: B, hidden: H, input: S, steps } = p;
  const dtype = p.hN.dtype;
  let plan: RolloutClusterPlan | undefined;
  let k: RegisteredKernel | undefined;
  const last = cluster === undefined ? backend.states.get(AUTO_PLANS).last : undefined;
  if (last !== undefined && last.dtype === dtype && last.E === E && last.B === B && last.H === H && last.S === S) {
    ({ plan, kernel: k } = last);
  } else {
    plan = cluster === undefined ? autoClusterPlan(backend, dtype, E, B, H, S) : pickPlan(backend, dtype, B, H, S, [cluster], 1);
    // Compiled only where a plan will launch it.
    k = plan === undefined ? undefined : clusterKernel(backend, dtype);
    if (cluster === undefined) backend.states.get(AUTO_PLANS).last = { dtype, E, B, H, S, plan, kernel: k };
  }
  if (plan === undefined || k === undefined) return false;
  const stream = backend.enqueue(p.state, p.h0, p.wIh, p.wHh, p.bIh, p.bHh, p.outWeight, p.outBias, p.states, p.hN);
  k.launch(
    { grid: E * plan.cluster, block: ROLLOUT_CLUSTER_THREADS, sharedMemBytes: plan.sharedBytes, clusterDim: [plan.cluster, 1, 1], stream },
    backend.address(p.state), p.stateShared ? 0 : B * S,
    optional(backend, p.h0), backend.address(p.wIh), backend.address(p.wHh), optional(backend, p.bIh), optional(backend, p.bHh),
    backend.address(p.outWeight), p.projectionShared ? 0 : S * H,
    optional(backend, p.outBias), p.projectionShared ? 0 : S,
    backend.address(p.states), backend.address(p.hN),
    B, steps, H, S, p.projectionShared ? 0 : 1,
    plan.units, plan.columns, plan.ldGate, plan.ldOut, plan.pad, plan.ldBatch,
  );
  return true;
}

/**
 * The cluster plan 'auto' takes for E members of B rows, H units and S features: the first of
 * {@link ROLLOUT_CLUSTER_SIZES} that fits and whose clusters for every member are resident at
 * once; undefined where none is, or the device launches no clusters. In waves the clusters may
 * lose to the cooperative kernel (H200, 7 clusters of 16 resident, 15 of 8: e16 b9 h256 s32 T3
 * 143 µs over 16 CTAs, 121 over 8, 68 cooperative; but e8 b32 h256 s128 T10 271 over 16, 368
 * cooperative).
 */
export function autoClusterPlan(backend: CudaContext, dtype: DType, E: number, B: number, H: number, S: number): RolloutClusterPlan | undefined {
  const plans = backend.states.get(AUTO_PLANS).byShape;
  const key = `${dtype}|${E}|${B}|${H}|${S}`;
  let plan = plans.get(key);
  if (plan === undefined) {
    plan = pickPlan(backend, dtype, B, H, S, ROLLOUT_CLUSTER_SIZES, E) ?? null;
    plans.set(key, plan);
  }
  return plan ?? undefined;
}

function pickPlan(backend: CudaContext, dtype: DType, B: number, H: number, S: number, sizes: readonly number[], clusters: number): RolloutClusterPlan | undefined {
  if (!backend.clusterLaunch) return undefined;
  const plans = rolloutClusterPlans(B, H, S, backend.device.sharedMemoryPerBlockOptin, sizes);
  if (plans.length === 0) return undefined;
  const kernel = clusterKernel(backend, dtype).kernel;
  return plans.find((plan) => residentClusters(backend, kernel, `${dtype}|${plan.cluster}|${plan.sharedBytes}`, plan) >= clusters);
}

function clusterKernel(backend: CudaContext, dtype: DType): RegisteredKernel {
  return backend.kernel(`gru_rollout_cluster|${dtype}`, () => gruRolloutClusterSpec(dtype), 'gru_rollout_cluster', SIGNATURE);
}

/**
 * Clusters of the plan's shape resident on the device at once (a cluster needs SMs of one GPC,
 * so the driver counts them), after the kernel's opt-ins for its shared memory and, above 8 CTAs,
 * its cluster size; 0 where the device refuses that size.
 */
function residentClusters(backend: CudaContext, kernel: Kernel, key: string, plan: RolloutClusterPlan): number {
  const known = backend.states.get(RESIDENT_CLUSTERS);
  let clusters = known.get(key);
  if (clusters === undefined) {
    if (plan.sharedBytes > kernel.attributes.maxDynamicSharedSizeBytes) kernel.setMaxDynamicSharedMemory(plan.sharedBytes);
    try {
      if (plan.cluster > PORTABLE_CLUSTER) funcSetAttribute(kernel.handle, FunctionAttribute.NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
      clusters = occupancyMaxActiveClusters(kernel.handle, {
        grid: [plan.cluster, 1, 1],
        block: [ROLLOUT_CLUSTER_THREADS, 1, 1],
        sharedMemBytes: plan.sharedBytes,
        stream: 0n,
        attributes: [{ id: LaunchAttributeId.CLUSTER_DIMENSION, value: [plan.cluster, 1, 1] }],
      });
    } catch (err) {
      // A size the device does not launch: the next size is tried.
      if (!(err instanceof CudaError) || !SIZE_REFUSED.has(err.result)) throw err;
      clusters = 0;
    }
    known.set(key, clusters);
  }
  return clusters;
}

function optional(backend: CudaContext, view: TensorView | undefined): bigint {
  return view ? backend.address(view) : 0n;
}
