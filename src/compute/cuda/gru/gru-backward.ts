/**
 * One GRU layer's backward recurrence on CUDA (`kernels/gru_backward.cu`): per step, from the
 * last, the product that sends the next step's gradient back, sent = dGh_{t+1}·W_hh + dh_{t+1}·z_{t+1}
 * (the matmul engine, batched over members, its epilogue adding the second term; TF32 where
 * allowed), then `gru_bwd_gates` for the step; a last product gives dh0. The launches of a
 * configuration are captured in a CUDA graph when it comes back (`step-graphs.ts`). Scratch:
 * the dense dGh of the current step and two [E, B, H] vectors, from the pool per call.
 */
import type { ArgType } from '../../../ffi/kernel-args.js';
import type { GruBackwardParams } from '../../core/gru-backward-params.js';
import type { MatmulParams } from '../../core/matmul-plan.js';
import type { TensorView } from '../../core/view.js';
import type { ModuleSpec } from '../../gpu/kernel-sources.js';
import type { CudaBuffer, CudaContext } from '../cuda-context.js';
import { cudaMatmul } from '../matmul/matmul.js';
import { runSteps, stepGraphsKey } from './step-graphs.js';

export const GRU_BACKWARD_SPEC: ModuleSpec = { file: 'gru_backward.cu' };
export const GRU_BACKWARD_KERNELS: readonly string[] = ['gru_bwd_gates'];

/** gx, hW, h0W, hSeq, h0, bIh, bHh, dhSeq, dhN, sent, carried, gates, dGx, dHW, dH0W, E, B, T, H, t. */
const GATES_SIG: readonly ArgType[] = [
  'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'ptr', 'i32', 'i32', 'i32', 'i32', 'i32',
];
const THREADS = 256;
const GRAPHS = stepGraphsKey('gru backward graphs');

export function cudaGruBackwardRecurrence(backend: CudaContext, p: GruBackwardParams): void {
  backend.enqueue(p.gx, p.hW, p.h0W, p.hSeq, p.h0, p.wHh, p.bIh, p.bHh, p.dhSeq, p.dhN, p.dGx, p.dHW, p.dH0W, p.dh0);
  const { ensemble: E, batch: B, hidden: H } = p;
  const scratch: CudaBuffer[] = [];
  try {
    const gates = backend.alloc(E * B * 3 * H * 4);
    scratch.push(gates);
    const sent = backend.alloc(E * B * H * 4);
    scratch.push(sent);
    const carried = backend.alloc(E * B * H * 4);
    scratch.push(carried);
    const views = { gates: dense(gates, [E, B, 3 * H]), sent: dense(sent, [E, B, H]), carried: dense(carried, [E, B, H]) };
    const key = [configKey(backend, p), ...scratch.map((b) => b.address.toString(16))].join('|');
    runSteps(backend, backend.states.get(GRAPHS), key, () => enqueueAll(backend, p, views), 'gruBackward');
  } finally {
    for (const b of scratch) backend.free(b);
  }
}

function dense(buffer: CudaBuffer, shape: number[]): TensorView {
  return { buffer, dtype: 'f32', shape, offset: 0, size: shape.reduce((a, d) => a * d, 1) };
}

/** Every step's product and gates, then dh0. */
function enqueueAll(backend: CudaContext, p: GruBackwardParams, s: { gates: TensorView; sent: TensorView; carried: TensorView }): void {
  const { ensemble: E, batch: B, steps: T, hidden: H } = p;
  const k = backend.kernel('gru_bwd_gates', () => GRU_BACKWARD_SPEC, 'gru_bwd_gates', GATES_SIG);
  const optional = (v: TensorView | undefined) => (v ? backend.address(v) : 0n);
  const total = E * B * H;
  for (let t = T - 1; t >= 0; t--) {
    if (t < T - 1) sendBack(backend, p, s, s.sent);
    k.launch(
      { grid: Math.ceil(total / THREADS), block: THREADS, stream: backend.enqueue() },
      backend.address(p.gx), backend.address(p.hW), backend.address(p.h0W), backend.address(p.hSeq), backend.address(p.h0),
      optional(p.bIh), optional(p.bHh), optional(p.dhSeq), optional(p.dhN),
      backend.address(s.sent), backend.address(s.carried), backend.address(s.gates),
      backend.address(p.dGx), backend.address(p.dHW), backend.address(p.dH0W),
      E, B, T, H, t,
    );
  }
  sendBack(backend, p, s, p.dh0);
}

/** out = gates·W_hh + carried, batched over members. */
function sendBack(backend: CudaContext, p: GruBackwardParams, s: { gates: TensorView; carried: TensorView }, out: TensorView): void {
  const { ensemble: E, batch: B, hidden: H } = p;
  const batched = (m: number, n: number) => (E === 1 ? [m, n] : [E, m, n]);
  const params: MatmulParams = {
    a: { ...s.gates, shape: batched(B, 3 * H) },
    b: { ...p.wHh, shape: batched(3 * H, H) },
    out: { ...out, shape: batched(B, H) },
    c: { ...s.carried, shape: batched(B, H) },
    m: B,
    n: H,
    k: 3 * H,
    batch: E,
    aBatchStride: B * 3 * H,
    bBatchStride: 3 * H * H,
    cBatchStride: B * H,
    transA: false,
    transB: false,
    alpha: 1,
    beta: 1,
    precision: p.precision,
    engine: 'auto',
    autotune: true,
  };
  cudaMatmul(backend, params);
}

/** Everything a captured graph bakes in: addresses, extents, options, stream. */
function configKey(backend: CudaContext, p: GruBackwardParams): string {
  const at = (v: TensorView | undefined) => (v ? backend.address(v).toString(16) : '-');
  return [
    p.precision, p.ensemble, p.batch, p.steps, p.hidden,
    at(p.gx), at(p.hW), at(p.h0W), at(p.hSeq), at(p.h0), at(p.wHh), at(p.bIh), at(p.bHh), at(p.dhSeq), at(p.dhN),
    at(p.dGx), at(p.dHW), at(p.dH0W), at(p.dh0), backend.currentStream().id,
  ].join('|');
}
