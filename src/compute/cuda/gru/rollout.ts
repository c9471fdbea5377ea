/**
 * `gpu.gruRollout` in one launch on CUDA: every step's gates and output projection for every
 * member. It replaces three to five launches per step (the input product, the recurrence, the
 * projection and its bias), whose host cost dominates small rollouts. On sm_90+ a member that fits
 * a thread-block cluster runs on one (`rollout-cluster.ts`); else one cooperative kernel
 * (`kernels/gru_rollout.cu`) runs them all, its grid meeting at a barrier after each phase.
 */
import type { ArgType } from '../../../ffi/kernel-args.js';
import { dtypeSize } from '../../core/dtype.js';
import type { GruRolloutParams } from '../../core/gru-params.js';
import type { TensorView } from '../../core/view.js';
import type { CudaContext } from '../cuda-context.js';
import { gruRolloutSpec } from './gru-kernels.js';
import { planRollout, ROLLOUT_THREADS, type RolloutPlan } from './gru-plan.js';
import { cudaGruRolloutCluster } from './rollout-cluster.js';

const ROLLOUT_SIG: readonly ArgType[] = [
  'ptr', 'u64', 'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'u64', 'ptr', 'u64', 'ptr', 'ptr', 'ptr',
  'i32', 'i32', 'i32', 'i32', 'i32', 'i32', 'i32', 'ptr',
];
/** Shared memory a block stages batch rows in (f32 rows of x_t and h_{t−1}): within the default 48 KB, no opt-in. */
const STAGING_BYTES = 48 * 1024;

/**
 * Which kernel runs a rollout: 'auto' the cluster kernel where it applies (`autoClusterPlan`),
 * else the cooperative one; the tests and benchmarks also ask for the cooperative one alone, or
 * for clusters of one size.
 */
export type RolloutKernel = 'auto' | 'cooperative' | { cluster: number };

/**
 * Runs the rollout in one launch where it applies (the shapes of `planRollout`, either kernel);
 * returns the kernel that ran it, or undefined, having queued nothing, where none does.
 */
export function runGruRollout(backend: CudaContext, p: GruRolloutParams, kernel: RolloutKernel = 'auto'): 'cluster' | 'cooperative' | undefined {
  const plan = planRollout(p.ensemble, p.batch, p.hidden, p.input);
  if ('reason' in plan || p.hN.dtype === 'i32') return undefined;
  if (kernel !== 'cooperative' && cudaGruRolloutCluster(backend, p, kernel === 'auto' ? undefined : kernel.cluster)) return 'cluster';
  if (kernel !== 'auto' && kernel !== 'cooperative') return undefined;
  return cooperativeRollout(backend, p, plan) ? 'cooperative' : undefined;
}

/** Runs the rollout in one launch where it applies; returns false, having queued nothing, where it does not. */
export function cudaGruRollout(backend: CudaContext, p: GruRolloutParams): boolean {
  return runGruRollout(backend, p) !== undefined;
}

/** The cooperative kernel, where the device launches it with every block resident (the grid barrier). */
function cooperativeRollout(backend: CudaContext, p: GruRolloutParams, plan: RolloutPlan): boolean {
  const { ensemble: E, batch: B, hidden: H, input: S, steps } = p;
  const dtype = p.hN.dtype;
  if (!backend.device.cooperativeLaunch) return false;
  const name = 'gru_rollout';
  const k = backend.kernel(`gru_rollout|${dtype}|${plan.kh}|${plan.ks}`, () => gruRolloutSpec(dtype, plan.kh, plan.ks), name, ROLLOUT_SIG);
  // A chunk of batch rows, each [x_t | h_{t−1}] in f32, staged per block.
  const chunk = Math.min(B, Math.floor(STAGING_BYTES / (4 * (S + H))));
  const sharedMemBytes = 4 * chunk * (S + H);
  const resident = k.residentGrid(ROLLOUT_THREADS, sharedMemBytes);
  if (resident === 0) return false;
  const blocks = Math.min(resident, plan.blocks);
  const stream = backend.enqueue(p.state, p.h0, p.wIh, p.wHh, p.bIh, p.bHh, p.outWeight, p.outBias, p.states, p.hN);
  // h_t's two-slot ring; freed stream-ordered after the launch.
  const ring = backend.alloc(2 * E * B * H * dtypeSize[dtype]);
  try {
    k.launch(
      { grid: blocks, block: ROLLOUT_THREADS, sharedMemBytes, stream, cooperative: true },
      backend.address(p.state), p.stateShared ? 0 : B * S,
      optional(backend, p.h0), backend.address(p.wIh), backend.address(p.wHh), optional(backend, p.bIh), optional(backend, p.bHh),
      backend.address(p.outWeight), p.projectionShared ? 0 : S * H,
      optional(backend, p.outBias), p.projectionShared ? 0 : S,
      ring.address, backend.address(p.states), backend.address(p.hN),
      E, B, steps, H, S, p.projectionShared ? 0 : 1, chunk, backend.blockCounter(),
    );
  } finally {
    backend.free(ring);
  }
  return true;
}

function optional(backend: CudaContext, view: TensorView | undefined): bigint {
  return view ? backend.address(view) : 0n;
}
