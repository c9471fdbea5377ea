/**
 * Progress of long first-run work: compiling kernel modules (on first use, or ahead of time by a
 * warmup) and timing the matmul autotuner's candidates. One event per finished step, delivered to
 * an `onProgress` listener and, as one line, to the logger at info level.
 */

/** What kind of work a step is: a kernel module compiled, or an autotuning candidate timed. */
export type ProgressPhase = 'compile' | 'tune';

/**
 * How a step ended: `done` (compiled, or timed), `cached` (a warmup found the module in the kernel
 * cache already; compiles on first use report no cache hits), or `failed` (the compile or the
 * candidate failed; a warmup goes on with the other modules, the tuner with the other candidates).
 */
export type ProgressOutcome = 'done' | 'cached' | 'failed';

/** One finished step of long first-run work. */
export interface ProgressEvent {
  readonly phase: ProgressPhase;
  /** Steps finished so far in this piece of work, this one included (1 for the first). */
  readonly done: number;
  /**
   * Steps in all, where known ahead: a warmup's module count, or a tuning's candidates. Absent for
   * compiles on first use, which come one at a time as ops need them.
   */
  readonly total?: number;
  /**
   * What the step was: a module key for compiles (`softmax.cu?GC_DTYPE=GC_F32`; with `@sm_90a`
   * for the Hopper kernels), a problem and candidate for tuning (`matmul f16 4096x4096x4096 NT:
   * wgmma128x256s4c2`).
   */
  readonly what: string;
  readonly outcome: ProgressOutcome;
  /** Milliseconds the step took (a cache lookup for `cached`). */
  readonly ms: number;
}

/**
 * Receives each {@link ProgressEvent} as it happens, synchronously, on the thread that did the
 * step's bookkeeping (compiles on first use block the op that needs them: the listener runs
 * before the op goes on).
 */
export type ProgressListener = (event: ProgressEvent) => void;

/** The step counter of an event: `12/40`, or `#3` where the total is not known. */
export function progressCount(event: ProgressEvent): string {
  return event.total === undefined ? `#${event.done}` : `${event.done}/${event.total}`;
}

/** A duration as a progress line shows it: `812 ms`, `2.4 s`. */
export function formatDuration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/**
 * One line describing an event, as the logger prints it: `compile 12/40 softmax.cu?GC_DTYPE=GC_F32
 * in 812 ms`, `compile 3/40 fill.cu cached`, `tune 2/8 matmul … failed after 3 ms`.
 */
export function formatProgress(event: ProgressEvent): string {
  const head = `${event.phase} ${progressCount(event)} ${event.what}`;
  switch (event.outcome) {
    case 'cached':
      return `${head} cached`;
    case 'failed':
      return `${head} failed after ${formatDuration(event.ms)}`;
    default:
      return `${head} in ${formatDuration(event.ms)}`;
  }
}
