/**
 * The control block the calling thread and the workers share (one SharedArrayBuffer): an
 * in-order queue of jobs, like a GPU stream. Jobs are numbered from 1; the calling thread
 * publishes job s by writing ring slot s mod RING and then `submitted` = s, and the thread
 * that finishes the last part of job s sets `completed` = s. A job is one kernel with one
 * argument list per part; its parts are claimed one at a time by whichever thread comes
 * (workers, and the calling thread while it waits), and no part of job s starts before job
 * s − 1 has completed, so every job sees the results of the ones before it.
 *
 * Claims are compare-and-swaps on a word holding the job number's low 16 bits and the next
 * part, so a thread that is late for a job cannot take a part of the later job reusing its slot.
 * The first failure (a trap, a worker that exited) is recorded with its message; later jobs are
 * counted as done without running, and the calling thread reports the failure at its next wait.
 * Everything is read and written with Atomics, so no message passing is involved.
 */
import type { WasmMemory, WasmModule } from './wasm-api.js';

/** Most numeric arguments one kernel call takes (the thread's scratch address included). */
export const MAX_KERNEL_ARGS = 12;
/** Jobs the queue holds before the calling thread waits for room. */
export const RING = 64;
/** UTF-8 bytes kept of a failure's message. */
export const ERROR_MESSAGE_BYTES = 480;

/** Int32 indices of the header. */
export const HEADER = {
  /** Number of the last job published. */
  submitted: 0,
  /** Number of the last job completed (every part run, or skipped after a failure). */
  completed: 1,
  /** Number of the first job that failed, 0 while none has. */
  failed: 2,
  /** Which thread failed it: 0 the calling thread, w + 1 worker w. */
  failedThread: 3,
  /** Kernel index of the failed job. */
  failedKernel: 4,
  errorLength: 5,
  /** Set to 1 + w by worker w's exit (or the pool's exit listener); the queue is broken. */
  dead: 6,
  /** Set by the calling thread to stop every worker (they return and their threads end). */
  stop: 7,
  /** The job a blocked calling thread waits for (0: none); its completion bumps `wake`. */
  awaited: 8,
  /** Where a blocked calling thread sleeps: woken for its job only, not for every one before it. */
  wake: 9,
} as const;

const HEADER_BYTES = 64;
const WORKER_BYTES = 16;

/** Int32 fields of a worker's record, relative to {@link workerInt}. */
export const WORKER = {
  /** Set once its module is instantiated: 1 ready, -1 failed (message in the header's area). */
  ready: 0,
  /** 1 while it sleeps in Atomics.wait (the calling thread notifies only sleepers). */
  sleeping: 1,
} as const;

/** Int32 fields of a job slot, relative to {@link jobInt}. */
export const JOB = {
  /** Index of the kernel in the kernel list. */
  kernel: 0,
  parts: 1,
  argCount: 2,
  /** 1: each call gets the running thread's scratch address as its last argument. */
  scratch: 3,
  /** (job number & 0xffff) << 16 | next part to claim. */
  claim: 4,
  /** Parts finished. */
  done: 5,
} as const;

const JOB_HEADER_BYTES = 32;

/** The block's layout for a pool of `workers` workers and jobs of up to `maxParts` parts. */
export class PoolLayout {
  readonly workers: number;
  readonly maxParts: number;
  readonly bytes: number;
  private readonly jobBytes: number;
  private readonly jobsAt: number;

  constructor(workers: number, maxParts: number) {
    this.workers = workers;
    this.maxParts = maxParts;
    this.jobBytes = JOB_HEADER_BYTES + maxParts * MAX_KERNEL_ARGS * 8;
    this.jobsAt = HEADER_BYTES + ERROR_MESSAGE_BYTES + Math.ceil((workers * WORKER_BYTES) / 8) * 8;
    this.bytes = this.jobsAt + RING * this.jobBytes;
  }

  /** Int32 index of field 0 of worker w's record (w counts from 0). */
  workerInt(w: number): number {
    return (HEADER_BYTES + ERROR_MESSAGE_BYTES + w * WORKER_BYTES) / 4;
  }

  /** Int32 index of field 0 of job s's slot. */
  jobInt(s: number): number {
    return (this.jobsAt + (s % RING) * this.jobBytes) / 4;
  }

  /** Float64 index of part p's first argument in job s's slot. */
  jobArgs(s: number, p: number): number {
    return (this.jobsAt + (s % RING) * this.jobBytes + JOB_HEADER_BYTES) / 8 + p * MAX_KERNEL_ARGS;
  }
}

/** The claim word of job s before any part is taken. */
export function claimTag(s: number): number {
  return ((s & 0xffff) << 16) | 0;
}

/**
 * Runs the parts of job s the calling thread can claim, each through `call(kernel, args)`
 * (the arguments with `scratch` appended when the job asks for it), skipping them once a job
 * has failed; the thread that finishes the last part completes the job. `thread` is 0 for the
 * calling thread, w + 1 for worker w. Returns when no part is left to claim.
 */
export function workOn(
  ctl: Int32Array,
  args: Float64Array,
  layout: PoolLayout,
  s: number,
  thread: number,
  scratch: number,
  call: (kernel: number, values: number[]) => void,
  fail: (message: string) => void,
): void {
  const at = layout.jobInt(s);
  const tag = s & 0xffff;
  for (;;) {
    const word = Atomics.load(ctl, at + JOB.claim);
    if (word >>> 16 !== tag) return;
    const part = word & 0xffff;
    const parts = Atomics.load(ctl, at + JOB.parts);
    if (part >= parts) return;
    if (Atomics.compareExchange(ctl, at + JOB.claim, word, word + 1) !== word) continue;
    if (Atomics.load(ctl, HEADER.failed) === 0) {
      const kernel = Atomics.load(ctl, at + JOB.kernel);
      const count = Atomics.load(ctl, at + JOB.argCount);
      const withScratch = Atomics.load(ctl, at + JOB.scratch) === 1;
      const values = new Array<number>(count + (withScratch ? 1 : 0));
      const base = layout.jobArgs(s, part);
      for (let i = 0; i < count; i++) values[i] = args[base + i]!;
      if (withScratch) values[count] = scratch;
      try {
        call(kernel, values);
      } catch (error) {
        if (Atomics.compareExchange(ctl, HEADER.failed, 0, s) === 0) {
          Atomics.store(ctl, HEADER.failedThread, thread);
          Atomics.store(ctl, HEADER.failedKernel, kernel);
          fail(error instanceof Error ? error.message : String(error));
        }
      }
    }
    if (Atomics.add(ctl, at + JOB.done, 1) === parts - 1) {
      Atomics.store(ctl, HEADER.completed, s);
      Atomics.notify(ctl, HEADER.completed);
      const awaited = Atomics.load(ctl, HEADER.awaited);
      if (awaited !== 0 && s >= awaited) wakeCaller(ctl);
    }
  }
}

/** Wakes a calling thread blocked in a wait (its job completed, or the queue broke). */
export function wakeCaller(ctl: Int32Array): void {
  Atomics.add(ctl, HEADER.wake, 1);
  Atomics.notify(ctl, HEADER.wake);
}

/** Writes `text` as the failure's message (truncated to fit). */
export function writeMessage(control: SharedArrayBuffer, text: string): void {
  const bytes = new TextEncoder().encode(text).subarray(0, ERROR_MESSAGE_BYTES);
  new Uint8Array(control, HEADER_BYTES, ERROR_MESSAGE_BYTES).set(bytes);
  Atomics.store(new Int32Array(control), HEADER.errorLength, bytes.length);
}

/** Reads the failure's message. */
export function readMessage(control: SharedArrayBuffer): string {
  const length = Atomics.load(new Int32Array(control), HEADER.errorLength);
  // Copied out: TextDecoder refuses views of shared memory.
  return new TextDecoder().decode(new Uint8Array(control, HEADER_BYTES, length).slice());
}

/** What a worker is started with (structured-cloned: the module and the shared buffers are shared, not copied). */
export interface WorkerData {
  module: WasmModule;
  memory: WasmMemory;
  control: SharedArrayBuffer;
  workers: number;
  maxParts: number;
  /** This worker's record (0-based). */
  index: number;
  /** Top of this worker's stack in the linear memory. */
  stackTop: number;
  /** Its scratch in the linear memory. */
  scratch: number;
  /** Export names in kernel-index order. */
  kernels: readonly string[];
  /** How long an idle worker spins before it sleeps. */
  spinMicroseconds: number;
  /** The first job it waits for (the one after the last completed when the pool started). */
  firstJob: number;
}
