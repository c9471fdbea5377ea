/**
 * One GRU layer's recurrence on CUDA (`kernels/gru.cu`, `kernels/gru_sequence.cu`), by one of
 * four paths:
 *
 * - sequence: one launch for all T steps (`kernels/gru_sequence.cu`). Each block runs the whole
 *   sequence of a few batch rows of one member (rows and members do not interact, so blocks never
 *   wait for one another), with W_hh on chip (8 lanes per hidden unit) and the state in shared
 *   memory, two block barriers per step. Applies for hidden sizes up to 128 without layer norm;
 *   SIMT f32 products also under 'tf32'.
 * - fused: per step one kernel that does both the product h·W_hhᵀ and the gates (one warp per
 *   hidden unit keeps its three W_hh rows in registers and walks a tile of batch rows), so T
 *   launches and no GEMM dispatch. Applies for hidden sizes up to 512 without layer norm. Its
 *   products are SIMT f32 FMAs also under 'tf32' (never less accurate than asked for).
 * - steps: per step, gh = h·W_hhᵀ through the matmul engine (cuBLAS or our kernels, TF32 when
 *   allowed) and the `gru_gates` kernel.
 * - persistent: one cooperative launch for all T steps; each block keeps its slice of W_hh in
 *   shared memory and the grid meets at a barrier between steps. Runs when asked for, where the
 *   slices fit on chip with every block resident and no layer norm is asked for.
 *
 * The fused and steps paths run a configuration's first call eagerly (which also tunes the steps
 * path's product); when the same configuration (same buffers, same shapes) comes back, its
 * launches are captured once in a CUDA graph and replayed from then on.
 *
 * `params.path` picks one; 'auto' takes the path autoPath (gru-plan.ts) picks from H200
 * measurements (bench/notes/gru.md). The sequence path is one launch: it needs no graph.
 */
import { Graph, type GraphExec } from '../../../driver/graph.js';
import { InvalidArgumentError } from '../../../errors.js';
import type { ArgType } from '../../../ffi/kernel-args.js';
import type { MatmulParams } from '../../core/matmul-plan.js';
import { dtypeSize } from '../../core/dtype.js';
import type { GruRecurrenceParams } from '../../core/gru-params.js';
import type { TensorView } from '../../core/view.js';
import type { OpStateKey } from '../../backend/op-states.js';
import type { CudaBuffer, CudaContext } from '../cuda-context.js';
import { isConfigurationFailure } from '../configuration-failure.js';
import { gruFusedSpec, gruSequenceSpec, gruSpec } from './gru-kernels.js';
import {
  autoPath,
  FUSED_UNITS,
  fusedFit,
  PERSISTENT_THREADS,
  persistentFit,
  planFused,
  planPersistent,
  planSequence,
  sequenceFit,
  type FusedPlan,
  type SequencePlan,
} from './gru-plan.js';
import { cudaMatmul } from '../matmul/matmul.js';
import type { RegisteredKernel } from '../kernel-registry.js';

const THREADS = PERSISTENT_THREADS;
/** Graphs kept per backend (a steps graph holds its gh and ping-pong buffers). */
const MAX_GRAPHS = 4;

const PERSISTENT_SIG: readonly ArgType[] = [
  'ptr', 'u64', 'u64', 'u64', 'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'u64', 'u64', 'u64', 'i32', 'ptr', 'i32', 'i32', 'i32', 'i32', 'ptr',
];
/** The fused step kernels' arguments; the sequence kernels take the same list (steps, H, rows per block last). */
const FUSED_SIG: readonly ArgType[] = [
  'ptr', 'u64', 'u64', 'u64', 'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'u64', 'u64', 'u64', 'i32', 'ptr', 'i32', 'i32', 'i32', 'i32',
];
const GATES_SIG: readonly ArgType[] = [
  'ptr', 'u64', 'u64', 'u64', 'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'u64', 'u64', 'u64', 'i32', 'ptr', 'ptr', 'i32', 'i32', 'i32', 'i32', 'i32',
  'ptr', 'ptr', 'f32',
];

interface CachedGraph {
  key: string;
  exec: GraphExec;
}

interface GruState {
  /** Configurations run once eagerly: the next call with the same key is captured. */
  seen: Set<string>;
  /** Configurations whose capture failed: always eager. */
  uncapturable: Set<string>;
  graphs: CachedGraph[];
  sharedReady: Set<string>;
  /** Destroys the cached graphs. */
  dispose(): void;
}

/** The GRU's per-backend state; its graphs are destroyed with the backend. */
const GRU_STATE: OpStateKey<GruState, CudaContext> = {
  name: 'gru graphs',
  create: () => {
    const state: GruState = {
      seen: new Set(),
      uncapturable: new Set(),
      graphs: [],
      sharedReady: new Set(),
      dispose: () => {
        for (const g of state.graphs) g.exec.dispose();
        state.graphs.length = 0;
      },
    };
    return state;
  },
};

function stateOf(backend: CudaContext): GruState {
  return backend.states.get(GRU_STATE);
}

export function cudaGruRecurrence(backend: CudaContext, p: GruRecurrenceParams): void {
  backend.enqueue(p.gx, p.wHh, p.bIh, p.bHh, p.h0, p.hSeq, p.hN, p.layerNorm?.gamma, p.layerNorm?.beta);
  const { ensemble: E, batch: B, hidden: H } = p;
  const layerNorm = p.layerNorm !== undefined;
  const fused = planFused(E, B, H, backend.multiprocessorCount);
  const sequence = planSequence(E, B, H, backend.multiprocessorCount);
  switch (p.path) {
    case 'sequence': {
      const fit = sequenceFit(layerNorm, sequence);
      if ('reason' in fit) throw notApplicable('sequence', fit.reason, p);
      runSequence(backend, p, fit.plan);
      return;
    }
    case 'persistent':
      runPersistent(backend, p);
      return;
    case 'steps':
      runRecorded(backend, p, undefined);
      return;
    case 'fused': {
      const fit = fusedFit(layerNorm, fused);
      if ('reason' in fit) throw notApplicable('fused', fit.reason, p);
      runRecorded(backend, p, fit.plan);
      return;
    }
    case 'auto': {
      const shape = { ensemble: E, batch: B, hidden: H, layerNorm, precision: p.precision, dtype: p.hN.dtype };
      const path = autoPath(shape, fused, sequence);
      if (path === 'sequence') runSequence(backend, p, sequence!);
      else runRecorded(backend, p, path === 'fused' ? fused : undefined);
      return;
    }
  }
}

function notApplicable(path: string, reason: string, p: GruRecurrenceParams): InvalidArgumentError {
  return new InvalidArgumentError(
    `gru: path '${path}' does not apply here (${reason}) for ${p.ensemble} member(s), batch ${p.batch}, hidden ${p.hidden}; use 'auto' or 'steps'`,
  );
}

function runPersistent(backend: CudaContext, p: GruRecurrenceParams): void {
  const { ensemble: E, batch: B, hidden: H } = p;
  const tb = B >= 128 ? 8 : 2;
  const name = `gru_persistent_tb${tb}`;
  const k = backend.kernel(`gru|${p.hN.dtype}|${name}`, () => gruSpec(p.hN.dtype), name, PERSISTENT_SIG);
  const limit = backend.device.sharedMemoryPerBlockOptin;
  // Raise the kernel's shared memory limit first: the occupancy query counts against it.
  allowShared(backend, k, `${p.hN.dtype}|${tb}`, limit);
  const plan = planPersistent(E, B, H, limit - k.kernel.attributes.sharedSizeBytes, (bytes) =>
    k.kernel.occupancy.maxActiveBlocksPerMultiprocessor(THREADS, bytes) * backend.multiprocessorCount,
  );
  const fit = persistentFit(p.layerNorm !== undefined, plan);
  if ('reason' in fit) throw notApplicable('persistent', fit.reason, p);
  const chosen = fit.plan;
  k.launch(
    { grid: chosen.blocks, block: THREADS, sharedMemBytes: chosen.sharedBytes, stream: backend.enqueue(), cooperative: true },
    backend.address(p.gx), ...p.gxStrides,
    backend.address(p.wHh), optional(backend, p.bIh), optional(backend, p.bHh), backend.address(p.h0),
    backend.address(p.hSeq), ...p.seqStrides, p.slots, backend.address(p.hN),
    B, p.steps, H, chosen.units, backend.blockCounter(),
  );
}

/** The sequence path: every step of the layer in one launch. */
function runSequence(backend: CudaContext, p: GruRecurrenceParams, plan: SequencePlan): void {
  const dtype = p.hN.dtype;
  const k = backend.kernel(`gru|${dtype}|${plan.kernel}`, () => gruSequenceSpec(dtype, plan.columns), plan.kernel, FUSED_SIG);
  if (plan.sharedBytes > 48 * 1024) allowShared(backend, k, `${dtype}|${plan.kernel}`, backend.device.sharedMemoryPerBlockOptin);
  k.launch(
    { grid: plan.blocks, block: plan.threads, sharedMemBytes: plan.sharedBytes, stream: backend.enqueue() },
    backend.address(p.gx), ...p.gxStrides,
    backend.address(p.wHh), optional(backend, p.bIh), optional(backend, p.bHh), backend.address(p.h0),
    backend.address(p.hSeq), ...p.seqStrides, p.slots, backend.address(p.hN),
    p.batch, p.steps, p.hidden, plan.rowsPerBlock,
  );
}

/** Raises the kernel's dynamic shared memory limit to the device's opt-in maximum, once. */
function allowShared(backend: CudaContext, k: RegisteredKernel, key: string, limit: number): void {
  const state = stateOf(backend);
  if (state.sharedReady.has(key)) return;
  k.kernel.setMaxDynamicSharedMemory(limit - k.kernel.attributes.sharedSizeBytes);
  state.sharedReady.add(key);
}

function optional(backend: CudaContext, view: TensorView | undefined): bigint {
  return view ? backend.address(view) : 0n;
}

/**
 * The fused path (with its plan) or the steps path (plan undefined): eagerly on a configuration's
 * first call, then as a captured graph. A fused single step is one launch: never captured.
 * The steps path's scratch comes from the pool on every call and goes back after it (frees are
 * stream-ordered); its addresses are part of the key, so a cached graph holds no memory and is
 * replayed only while the pool hands out the same blocks.
 */
function runRecorded(backend: CudaContext, p: GruRecurrenceParams, fused: FusedPlan | undefined): void {
  if (fused && p.steps === 1) {
    launchFused(backend, p, fused, 0);
    return;
  }
  const { ensemble: E, batch: B, hidden: H } = p;
  const bytes = dtypeSize[p.hN.dtype];
  // The steps path's scratch: gh and a dense ping-pong copy of h for the GEMM.
  const scratch: CudaBuffer[] = [];
  try {
    if (!fused) {
      scratch.push(backend.alloc(E * B * 3 * H * bytes));
      scratch.push(backend.alloc(2 * E * B * H * bytes));
    }
    recordOrReplay(backend, p, fused, scratch);
  } finally {
    for (const b of scratch) backend.free(b);
  }
}

function recordOrReplay(backend: CudaContext, p: GruRecurrenceParams, fused: FusedPlan | undefined, scratch: CudaBuffer[]): void {
  // Inside gpu.capture the steps join the enclosing graph (a capture cannot start another).
  if (backend.capturing) {
    for (let t = 0; t < p.steps; t++) {
      if (fused) launchFused(backend, p, fused, t);
      else step(backend, p, t, scratch[0]!, scratch[1]!);
    }
    return;
  }
  const state = stateOf(backend);
  const scratchKey = scratch.map((b) => b.address.toString(16)).join(',');
  const key = `${fused?.kernel ?? 'steps'}|${configKey(backend, p)}|${scratchKey}`;
  const cachedAt = state.graphs.findIndex((g) => g.key === key);
  if (cachedAt >= 0) {
    const [g] = state.graphs.splice(cachedAt, 1);
    state.graphs.push(g!);
    g!.exec.launch(backend.stream);
    return;
  }
  const enqueueAll = fused
    ? () => {
        for (let t = 0; t < p.steps; t++) launchFused(backend, p, fused, t);
      }
    : () => {
        for (let t = 0; t < p.steps; t++) step(backend, p, t, scratch[0]!, scratch[1]!);
      };
  if (state.seen.has(key) && !state.uncapturable.has(key)) {
    let exec: GraphExec | undefined;
    try {
      const graph = Graph.capture(backend.stream, enqueueAll);
      try {
        exec = graph.instantiate();
      } finally {
        graph.dispose();
      }
    } catch (err) {
      if (!isConfigurationFailure(err)) throw err;
      state.uncapturable.add(key);
      backend.logger?.debug(`gru: graph capture failed, running eagerly (${(err as Error).message})`);
    }
    if (exec) {
      if (state.graphs.length >= MAX_GRAPHS) state.graphs.shift()!.exec.dispose();
      state.graphs.push({ key, exec });
      exec.launch(backend.stream);
      return;
    }
  }
  if (state.seen.size > 256) state.seen.clear();
  state.seen.add(key);
  enqueueAll();
}

/** Step t of the fused path: product and gates in one launch. */
function launchFused(backend: CudaContext, p: GruRecurrenceParams, plan: FusedPlan, t: number): void {
  const dtype = p.hN.dtype;
  const k = backend.kernel(`gru|${dtype}|${plan.kernel}`, () => gruFusedSpec(dtype, plan.columns), plan.kernel, FUSED_SIG);
  k.launch(
    { grid: plan.blocks, block: FUSED_UNITS * 32, stream: backend.enqueue() },
    backend.address(p.gx), ...p.gxStrides,
    backend.address(p.wHh), optional(backend, p.bIh), optional(backend, p.bHh), backend.address(p.h0),
    backend.address(p.hSeq), ...p.seqStrides, p.slots, backend.address(p.hN),
    p.batch, t, p.steps, p.hidden,
  );
}

/** Step t: gh = h_{t−1}·W_hhᵀ (batched over members), then the gates. */
function step(backend: CudaContext, p: GruRecurrenceParams, t: number, gh: CudaBuffer, dense: CudaBuffer): void {
  const { ensemble: E, batch: B, hidden: H } = p;
  const dtype = p.hN.dtype;
  const denseSize = E * B * H;
  const view = (buffer: CudaBuffer, offset: number, shape: number[]): TensorView => ({
    buffer,
    dtype,
    shape,
    offset,
    size: shape.reduce((a, d) => a * d, 1),
  });
  const batched = (m: number, n: number) => (E === 1 ? [m, n] : [E, m, n]);
  const hPrev = t === 0 ? { ...p.h0, shape: batched(B, H) } : view(dense, ((t - 1) % 2) * denseSize, batched(B, H));
  const params: MatmulParams = {
    a: hPrev,
    b: { ...p.wHh, shape: batched(3 * H, H) },
    out: view(gh, 0, batched(B, 3 * H)),
    m: B,
    n: 3 * H,
    k: H,
    batch: E,
    aBatchStride: B * H,
    bBatchStride: 3 * H * H,
    cBatchStride: 0,
    transA: false,
    transB: true,
    alpha: 1,
    beta: 0,
    precision: p.precision,
    engine: 'auto',
    autotune: true,
  };
  cudaMatmul(backend, params);
  const stream = backend.enqueue();
  const k = backend.kernel(`gru|${dtype}|gru_gates`, () => gruSpec(dtype), 'gru_gates', GATES_SIG);
  const ln = p.layerNorm;
  const block = Math.min(THREADS, Math.ceil(H / 32) * 32);
  const shared = ln ? H * 4 : 0;
  if (shared > 48 * 1024) allowShared(backend, k, `${dtype}|gates`, backend.device.sharedMemoryPerBlockOptin);
  k.launch(
    { grid: E * B, block, sharedMemBytes: shared, stream },
    backend.address(p.gx), ...p.gxStrides,
    gh.address, optional(backend, p.bIh), optional(backend, p.bHh), backend.address(p.h0),
    backend.address(p.hSeq), ...p.seqStrides, p.slots, dense.address + BigInt((t % 2) * denseSize * dtypeSize[dtype]),
    backend.address(p.hN), B, t, p.steps, H, ln ? 1 : 0,
    ln?.gamma ? backend.address(ln.gamma) : 0n, ln?.beta ? backend.address(ln.beta) : 0n, ln ? ln.eps : 0,
  );
}

/** Everything a captured graph bakes in: addresses, extents, strides, options, stream. */
function configKey(backend: CudaContext, p: GruRecurrenceParams): string {
  const at = (v: TensorView | undefined) => (v ? backend.address(v).toString(16) : '-');
  return [
    p.hN.dtype, p.precision, p.ensemble, p.batch, p.steps, p.hidden, p.slots, ...p.gxStrides, ...p.seqStrides,
    at(p.gx), at(p.wHh), at(p.bIh), at(p.bHh), at(p.h0), at(p.hSeq), at(p.hN),
    at(p.layerNorm?.gamma), at(p.layerNorm?.beta), p.layerNorm?.eps ?? '-', backend.currentStream().id,
  ].join('|');
}
