/**
 * The tasks of a GRU rollout (see gru-rollout.ts) and the loop that runs them, on the calling
 * thread and on the workers alike (a host kernel: see host-kernels.ts). The plan lives in the
 * linear memory: a header the caller writes, per (phase, member) counters of tasks done, a claim
 * flag per task and a progress counter.
 *
 * Each step t has two phases of tasks, member by member:
 * - A(t, e, c): for the units of chunk c, gx = x_t·W_ihᵀ and gh = h_{t-1}·W_hhᵀ (the rows of the
 *   three gates that belong to those units), then those units' gates (`gru_gates_f32`). Ready once
 *   B(t-1, e, ·) has written x_t.
 * - B(t, e, c): columns of chunk c of y_t = h_t·W_outᵀ + b_out, stored as states[e, ·, t] (and
 *   read back as x_{t+1}). Ready once A(t, e, ·) has written h_t.
 * Every thread taking part claims the first ready task in the order (step, phase, member, chunk),
 * or (member, step, phase, chunk) on one thread ({@link memberMajorOrder}), and runs it; a started
 * task never waits, so the tasks complete with any number of threads
 * taking part, one included. The members' chains are independent, so a thread whose next task in
 * order is not ready takes another member's instead of waiting (which matters on a shared VM,
 * where the other thread may be descheduled for milliseconds); it sleeps only when nothing is
 * ready. A failing task sets the plan's abort flag, which stops the other threads.
 *
 * Products go through the BLAS (single-threaded calls, run concurrently; the caller sets the
 * library's thread count to 1 around the run) or the SIMD sgemm, one matrix of one member each:
 * h·W_hhᵀ of an ensemble is E independent products, here shared out across threads rather than
 * each split across them (at M = 32 a BLAS call gains little from a second thread).
 */
import { performance } from 'node:perf_hooks';
import { sgemm as blasSgemm } from '../../../blas/sgemm.js';
import { DTYPE_CODE } from './codes.js';
import type { WasmMemory } from './wasm-api.js';

/** Int32 fields of a plan's header. */
export const PLAN = {
  /** {@link PLAN_FLAGS}. */
  flags: 0,
  ensemble: 1,
  batch: 2,
  steps: 3,
  hidden: 4,
  input: 5,
  /** Unit chunks of an A task, state-column chunks of a B task. */
  unitChunks: 6,
  stateChunks: 7,
  // Byte addresses (0: absent).
  state: 8,
  h0: 9,
  wIh: 10,
  wHh: 11,
  bIh: 12,
  bHh: 13,
  outWeight: 14,
  outBias: 15,
  states: 16,
  hN: 17,
  /** f32 [E, B, 3H] each: this step's x·W_ihᵀ and h·W_hhᵀ. */
  gx: 18,
  gh: 19,
  /** f32 [2, E, B, H]: h_t in slot t mod 2. */
  ring: 20,
  /** Tasks completed so far: what a thread with nothing ready sleeps on. */
  progress: 21,
  /** 1 once a task has failed. */
  abort: 22,
  /** K above which the SIMD sgemm keeps partial sums in its output. */
  blockDepth: 23,
  /** 1: claim the tasks member by member (see {@link memberMajorOrder}). */
  memberMajor: 24,
  /** Tasks done per (phase, member): 2T·E counters, then a claim flag per task. */
  done: 25,
} as const;

export const PLAN_FLAGS = { blas: 1, stateShared: 2, projectionShared: 4 } as const;

/** Bytes of each part's area after the counters: a gemm_params (sgemm.c) and a gru_params (gru.c). */
export const PART_AREA_BYTES = 256;
const GATES_AT = 128;

/**
 * Whether the tasks are claimed member by member: on one thread. There each member's steps run back
 * to back, so the products reuse that member's weights from the core's cache (1.3 MB at S 128,
 * H 256, about a core's L2 on this VM) instead of cycling all five members' (6.5 MB) through it at
 * each step. numpy's OpenBLAS on one thread does the hybrid-trainer rollout's products 12% faster
 * in that order; this rollout on one thread took 0.91x the time step by step (median of 7
 * alternating runs, 0.73-1.32x on the noisy VM). With more threads, whole chains leave the last
 * member alone on one thread where the members do not divide evenly among them, and runs of a few
 * steps a member (E 5 on 2 threads: two runs of 5 steps each) lost to step by step (medians of
 * 32 passes 20.0-23.8 ms against 15.7-20.7 ms), so there the order stays step by step.
 */
export function memberMajorOrder(threads: number): boolean {
  return threads === 1;
}

/** Tasks of a rollout: per step and member, one per unit chunk and one per state chunk. */
export function rolloutTasks(steps: number, ensemble: number, unitChunks: number, stateChunks: number): number {
  return steps * ensemble * (unitChunks + stateChunks);
}

/** Bytes of a plan's header, counters and claim flags (the part areas follow, 16-byte aligned). */
export function planHeaderBytes(steps: number, ensemble: number, tasks: number): number {
  return Math.ceil(((PLAN.done + 2 * steps * ensemble + tasks) * 4) / 16) * 16;
}

/** What a thread runs the tasks with: the memory and the kernels instantiated on it there. */
export interface RolloutContext {
  memory: WasmMemory;
  sgemm: (...args: number[]) => void;
  gruGates: (...args: number[]) => void;
}

/** One product of a task: out[m × n] = A[m × k]·B[n × k]ᵀ (+ bias), addresses in bytes, strides in elements. */
interface Product {
  a: number;
  lda: number;
  b: number;
  ldb: number;
  out: number;
  ldo: number;
  bias: number;
  m: number;
  n: number;
  k: number;
}

/** How long a thread with no ready task spins before it sleeps. */
const SPIN_MS = 0.02;
/** How often a sleeping waiter looks at the abort flag. */
const ABORT_CHECK_MS = 1;

/** Splits [0, total) into `chunks` ranges with inner boundaries on multiples of 4. */
function chunkRange(total: number, chunks: number, c: number): [number, number] {
  const bound = (i: number) => (i === chunks ? total : Math.min(total, Math.ceil((total * i) / chunks / 4) * 4));
  return [bound(c), bound(c + 1)];
}

/**
 * Runs tasks of the plan at `plan` until none is left to claim; `part` picks this thread's area
 * of the plan, `scratch` is its scratch (sgemm's packing, the gates' rows).
 */
export function runRolloutTasks(ctx: RolloutContext, plan: number, part: number, scratch: number): void {
  const buffer = ctx.memory.buffer as SharedArrayBuffer;
  const i32 = new Int32Array(buffer);
  const f32 = new Float32Array(buffer);
  const h = plan / 4;
  const field = (name: keyof typeof PLAN) => i32[h + PLAN[name]]!;
  const flags = field('flags');
  const [E, B, T, H, S] = [field('ensemble'), field('batch'), field('steps'), field('hidden'), field('input')];
  const [unitChunks, stateChunks] = [field('unitChunks'), field('stateChunks')];
  const [state, h0, wIh, wHh, outWeight, outBias, states, hN, gx, gh, ring] = [
    field('state'),
    field('h0'),
    field('wIh'),
    field('wHh'),
    field('outWeight'),
    field('outBias'),
    field('states'),
    field('hN'),
    field('gx'),
    field('gh'),
    field('ring'),
  ];
  const useBlas = (flags & PLAN_FLAGS.blas) !== 0;
  const stateShared = (flags & PLAN_FLAGS.stateShared) !== 0;
  const projectionShared = (flags & PLAN_FLAGS.projectionShared) !== 0;
  const blockDepth = field('blockDepth');
  const memberMajor = field('memberMajor') === 1;
  const G = 3 * H;
  const perMemberStep = unitChunks + stateChunks;
  const perStep = E * perMemberStep;
  const total = rolloutTasks(T, E, unitChunks, stateChunks);
  const area = plan + planHeaderBytes(T, E, total) + part * PART_AREA_BYTES;
  const slot = (t: number) => ring + (t % 2) * E * B * H * 4;

  const product = (p: Product): void => {
    if (useBlas) {
      blasSgemm({ transB: true, m: p.m, n: p.n, k: p.k, a: f32, aOffset: p.a / 4, lda: p.lda, b: f32, bOffset: p.b / 4, ldb: p.ldb, c: f32, cOffset: p.out / 4, ldc: p.ldo });
      // The bias by the sgemm's epilogue alone (no depth): out = 0 + 1·out + bias.
      if (p.bias !== 0) simdGemm({ ...p, k: 0 }, { c: p.out, beta: 1 });
    } else {
      simdGemm(p, { c: 0, beta: 0 });
    }
  };
  const simdGemm = (p: Product, c: { c: number; beta: number }): void => {
    const f = DTYPE_CODE.f32;
    // gemm_params (sgemm.c): one matrix, B transposed; C, when given, is the output itself (ldc = ldo)
    // and depth beyond one packed slice keeps its partial sums there too.
    const fields = [p.a, p.b, c.c, p.bias, p.out, p.k > blockDepth ? p.out : 0, f, f, f, f, f, p.m, p.n, p.k, p.lda, p.ldb, p.ldo, p.ldo, p.ldo, 0, 1, 0, 0, 0, 0, 0];
    const w = area / 4;
    for (let i = 0; i < fields.length; i++) i32[w + i] = fields[i]!;
    f32[w + fields.length] = 1; // alpha
    f32[w + fields.length + 1] = c.beta;
    i32[w + fields.length + 2] = 0; // no activation
    ctx.sgemm(area, 0, 1, 0, p.m, 0, p.n, scratch);
  };

  /** A(t, e, c): the gate inputs of chunk c's units, then their gates. */
  const unitTask = (t: number, e: number, c: number): void => {
    const [j0, j1] = chunkRange(H, unitChunks, c);
    const x = t === 0 ? { at: state + (stateShared ? 0 : e * B * S * 4), ld: S } : { at: states + (e * B * T + t - 1) * S * 4, ld: T * S };
    const before = t === 0 ? h0 : slot(t - 1);
    const prev = before + e * B * H * 4;
    // The three gates' rows of these units; one product when the chunk is every unit.
    const blocks = unitChunks === 1 ? [[0, G]] : [0, 1, 2].map((g) => [g * H + j0, g * H + j1]);
    for (const [r0, r1] of blocks) {
      const rows = { out: (e * B * G + r0!) * 4, ldo: G, m: B, n: r1! - r0!, bias: 0 };
      product({ ...rows, a: x.at, lda: x.ld, b: wIh + (e * G + r0!) * S * 4, ldb: S, out: gx + rows.out, k: S });
      product({ ...rows, a: prev, lda: H, b: wHh + (e * G + r0!) * H * 4, ldb: H, out: gh + rows.out, k: H });
    }
    const g = (area + GATES_AT) / 4;
    // gru_params (gru.c): this step's inputs and states, no layer norm.
    const gates = [gx, gh, field('bIh'), field('bHh'), before, slot(t), t === T - 1 ? hN : 0, 0, 0, B * G, G, B * H, H, B * H, H, DTYPE_CODE.f32, B, H, 0];
    for (let i = 0; i < gates.length; i++) i32[g + i] = gates[i]!;
    f32[g + gates.length] = 0; // eps
    ctx.gruGates(area + GATES_AT, e * B, (e + 1) * B, j0, j1, scratch);
  };

  /** B(t, e, c): columns of chunk c of y_t into states[e, ·, t]. */
  const stateTask = (t: number, e: number, c: number): void => {
    const [s0, s1] = chunkRange(S, stateChunks, c);
    const row = (projectionShared ? 0 : e * S) + s0;
    product({
      a: slot(t) + e * B * H * 4,
      lda: H,
      b: outWeight + row * H * 4,
      ldb: H,
      out: states + ((e * B * T + t) * S + s0) * 4,
      ldo: T * S,
      bias: outBias === 0 ? 0 : outBias + row * 4,
      m: B,
      n: s1 - s0,
      k: H,
    });
  };

  const abort = h + PLAN.abort;
  const progress = h + PLAN.progress;
  const done = (phase: number, e: number) => h + PLAN.done + phase * E + e;
  const claims = h + PLAN.done + 2 * T * E;
  /** Task i as [step, member, chunk, unit task?]. */
  const decode = (i: number): [number, number, number, boolean] => {
    if (memberMajor) {
      const k = i % perMemberStep;
      const [t, e] = [Math.floor(i / perMemberStep) % T, Math.floor(i / (T * perMemberStep))];
      return k < unitChunks ? [t, e, k, true] : [t, e, k - unitChunks, false];
    }
    const t = Math.floor(i / perStep);
    const r = i % perStep;
    if (r < E * unitChunks) return [t, Math.floor(r / unitChunks), r % unitChunks, true];
    const s = r - E * unitChunks;
    return [t, Math.floor(s / stateChunks), s % stateChunks, false];
  };
  const ready = (t: number, e: number, unit: boolean): boolean =>
    unit ? t === 0 || Atomics.load(i32, done(2 * t - 1, e)) === stateChunks : Atomics.load(i32, done(2 * t, e)) === unitChunks;
  /**
   * Waits until some task completes after `seen` (or the run aborts), spinning a little, then
   * sleeping: on a shared VM a spinning waiter takes time from the thread it waits for.
   */
  const awaitProgress = (seen: number): void => {
    const deadline = performance.now() + SPIN_MS;
    for (let i = 0; Atomics.load(i32, progress) === seen && Atomics.load(i32, abort) === 0; i++) {
      if ((i & 255) === 255 && performance.now() > deadline) Atomics.wait(i32, progress, seen, ABORT_CHECK_MS);
    }
  };

  try {
    // Every task before `low` is claimed.
    let low = 0;
    for (;;) {
      if (Atomics.load(i32, abort) !== 0) return;
      const seen = Atomics.load(i32, progress);
      let open = false;
      let ran = false;
      for (let i = low; i < total && !ran; i++) {
        if (Atomics.load(i32, claims + i) !== 0) {
          if (i === low) low++;
          continue;
        }
        open = true;
        const [t, e, c, unit] = decode(i);
        if (!ready(t, e, unit) || Atomics.compareExchange(i32, claims + i, 0, 1) !== 0) continue;
        if (unit) unitTask(t, e, c);
        else stateTask(t, e, c);
        Atomics.add(i32, done(unit ? 2 * t : 2 * t + 1, e), 1);
        Atomics.add(i32, progress, 1);
        Atomics.notify(i32, progress);
        ran = true;
      }
      if (!open) return;
      if (!ran) awaitProgress(seen);
    }
  } catch (error) {
    Atomics.store(i32, abort, 1);
    Atomics.notify(i32, progress);
    throw error;
  }
}
