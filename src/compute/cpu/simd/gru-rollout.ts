/**
 * A whole rollout of a one-layer GRU with its output projection (the semantics of
 * `core/gru-params.ts`'s GruRolloutParams) in one job: its tasks (gru-rollout-tasks.ts) shared out
 * among the threads, member by member (and, where members are fewer than threads, by ranges of
 * units and of state columns within a member), each thread running its products single-threaded. f32 only: 16-bit states round where
 * the step-by-step path stores, which this path does not repeat.
 *
 * Step by step, the rollout was a host round trip per op, each product split across the BLAS's
 * threads (at M = 32 a second thread gains little: OpenBLAS 0.3.21 on 2 vCPUs, 5 × [32, 256]·
 * [256, 768] in 0.55-1.1 ms with two threads against 0.8-0.95 ms with one), the gates on one thread,
 * and the projection of every step done twice (fed back, then all steps at the end).
 */
import { PART_AREA_BYTES, PLAN, PLAN_FLAGS, planHeaderBytes, memberMajorOrder, rolloutTasks } from './gru-rollout-tasks.js';
import type { SimdRuntime } from './runtime.js';

/** A rollout; addresses are byte offsets of f32 data in the runtime's memory (0: absent). */
export interface SimdGruRollout {
  /** x_0: [E, B, S], or [B, S] with `stateShared`. */
  state: number;
  stateShared: boolean;
  /** Dense [E, B, H], or 0 for zeros. */
  h0: number;
  /** [E, 3H, S] and [E, 3H, H]. */
  wIh: number;
  wHh: number;
  /** [E, 3H] each, or 0. */
  bIh: number;
  bHh: number;
  /** [E, S, H], or [S, H] with `projectionShared`. */
  outWeight: number;
  /** [E, S] or [S] (as the weight), or 0. */
  outBias: number;
  projectionShared: boolean;
  /** Out: [E, B, steps, S]. */
  states: number;
  /** Out: dense [E, B, H]. */
  hN: number;
  ensemble: number;
  batch: number;
  steps: number;
  hidden: number;
  input: number;
}

/** Least units (state columns) a chunk of a task takes: smaller ones cost more in calls than they balance. */
const MIN_CHUNK = 32;

/**
 * Whether the rollout's kernels serve a hidden size of `hidden` (the gates' rows must fit a thread's
 * scratch: up to about 140 thousand units).
 */
export function rolloutFits(rt: SimdRuntime, hidden: number): boolean {
  return rt.kernels.gru_scratch_bytes(hidden) <= rt.scratchBytes;
}

/**
 * Runs the rollout and waits for it (its products go through `blas` when given: the caller has
 * set that library to one thread); the queue is idle when it returns.
 * @throws RangeError when the hidden size does not fit ({@link rolloutFits}); SimdKernelError for a task that failed.
 */
export function gruRollout(rt: SimdRuntime, p: SimdGruRollout, blas: boolean): void {
  const { ensemble: E, batch: B, steps: T, hidden: H, input: S } = p;
  if (!rolloutFits(rt, H)) throw new RangeError(`gruRollout: hidden size ${H} does not fit a thread's scratch`);
  // The plan is written from here: every job that may use its block has to be done first.
  rt.settle();
  const parts = rt.threads;
  // Whole members where there are enough of them to keep every thread busy: split tasks ran
  // slower (E 5, H 256 on 2 vCPUs, a neighbour busy: 62-65 ms against 30-44 ms whole, medians).
  const chunks = (n: number) => Math.max(1, Math.min(Math.ceil(parts / E), Math.floor(n / MIN_CHUNK)));
  const [unitChunks, stateChunks] = [chunks(H), chunks(S)];
  const tasks = rolloutTasks(T, E, unitChunks, stateChunks);
  const header = planHeaderBytes(T, E, tasks);
  const gx = header + parts * PART_AREA_BYTES;
  const gh = gx + E * B * 3 * H * 4;
  const ring = gh + E * B * 3 * H * 4;
  // Zero initial states, where none are given, after the ring.
  const zeros = ring + 2 * E * B * H * 4;
  const block = rt.temp(zeros + (p.h0 === 0 ? E * B * H * 4 : 0));
  try {
    const plan = Number(block.address);
    const i32 = rt.i32;
    const fields: Record<keyof typeof PLAN, number> = {
      flags: (blas ? PLAN_FLAGS.blas : 0) | (p.stateShared ? PLAN_FLAGS.stateShared : 0) | (p.projectionShared ? PLAN_FLAGS.projectionShared : 0),
      ensemble: E,
      batch: B,
      steps: T,
      hidden: H,
      input: S,
      unitChunks,
      stateChunks,
      state: p.state,
      h0: p.h0 === 0 ? plan + zeros : p.h0,
      wIh: p.wIh,
      wHh: p.wHh,
      bIh: p.bIh,
      bHh: p.bHh,
      outWeight: p.outWeight,
      outBias: p.outBias,
      states: p.states,
      hN: p.hN,
      gx: plan + gx,
      gh: plan + gh,
      ring: plan + ring,
      progress: 0,
      abort: 0,
      blockDepth: rt.gemmBlockDepth,
      memberMajor: memberMajorOrder(parts) ? 1 : 0,
      done: 0,
    };
    for (const [name, value] of Object.entries(fields)) i32[plan / 4 + PLAN[name as keyof typeof PLAN]] = value;
    if (p.h0 === 0) rt.f32.fill(0, (plan + zeros) / 4, (plan + zeros) / 4 + E * B * H);
    i32.fill(0, plan / 4 + PLAN.done, plan / 4 + PLAN.done + 2 * T * E + tasks);
    // Cost 0: the calling thread takes a part at once and returns when all are done, so one
    // worker joins it on two cores and the other sleeps (a third thread would only compete).
    rt.run(
      'gru_rollout',
      Array.from({ length: parts }, (_, part) => [plan, part]),
      true,
      0,
    );
    rt.settle();
  } finally {
    rt.freeTemp(block);
  }
}
