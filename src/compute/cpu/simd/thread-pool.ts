/**
 * The calling thread's side of the SIMD worker pool. `run` posts one kernel call to each of the
 * first n workers, runs its own share meanwhile, then runs itself every posted call no worker has
 * claimed yet, and returns when all are done: the caller blocks, so an op is complete when its
 * call returns. Workers start on the first run that needs them; a run never waits for workers it
 * does not use.
 *
 * Waiting costs: a worker that is still spinning claims a job in well under a microsecond; one
 * asleep in Atomics.wait needs a futex wake (tens of microseconds, see bench/cpu-simd.ts). Since
 * the caller takes back unclaimed parts, a late worker makes an op no slower than running it on
 * one thread (plus the notify), so the size thresholds (thresholds.ts) can follow the warm case.
 */
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { SimdKernelError } from './errors.js';
import {
  JOB_CALLER,
  JOB_POSTED,
  MAX_KERNEL_ARGS,
  PENDING,
  SLOT,
  STATUS_FAILED,
  controlBytes,
  readMessage,
  slotArgs,
  slotInt,
  type WorkerData,
} from './pool-protocol.js';
import type { WasmMemory, WasmModule } from './wasm-api.js';

/** One kernel call: its index in the kernel list and its numeric arguments. */
export interface KernelCall {
  kernel: number;
  args: readonly number[];
}

/** What the pool needs to start workers. */
export interface ThreadPoolConfig {
  module: WasmModule;
  memory: WasmMemory;
  /** Export names in kernel-index order. */
  kernels: readonly string[];
  /** Stack top of each worker (their count is the pool's size). */
  stackTops: readonly number[];
  spinMicroseconds: number;
  /** How long to wait for a starting worker before giving up. */
  startTimeoutMs?: number;
}

export class ThreadPool {
  readonly size: number;
  private readonly config: ThreadPoolConfig;
  private readonly control: SharedArrayBuffer;
  private readonly ctl: Int32Array;
  private readonly args: Float64Array;
  private workers: Worker[] = [];
  private generations: number[];

  constructor(config: ThreadPoolConfig) {
    this.config = config;
    this.size = config.stackTops.length;
    this.control = new SharedArrayBuffer(controlBytes(this.size));
    this.ctl = new Int32Array(this.control);
    this.args = new Float64Array(this.control);
    this.generations = new Array<number>(this.size).fill(0);
  }

  /** Whether the workers have been started. */
  get started(): boolean {
    return this.workers.length > 0;
  }

  /** Whether every worker is running or spinning (none asleep, none unstarted). */
  get awake(): boolean {
    if (this.workers.length === 0) return false;
    for (let w = 0; w < this.size; w++) if (Atomics.load(this.ctl, slotInt(w) + SLOT.sleeping) === 1) return false;
    return true;
  }

  /**
   * Runs `calls[0]` through `own` on this thread and `calls[i]` on worker i, returning when all
   * have finished.
   * @throws SimdKernelError for the first call that failed (this thread's first), after every
   *   call has finished, so the pool is idle and usable again.
   */
  run(calls: readonly KernelCall[], own: (call: KernelCall) => void, names: readonly string[]): void {
    const used = calls.length - 1;
    if (used > this.size) throw new RangeError(`thread pool: ${calls.length} calls for ${this.size + 1} threads`);
    this.start();
    Atomics.store(this.ctl, PENDING, used);
    for (let w = 0; w < used; w++) {
      const call = calls[w + 1]!;
      if (call.args.length > MAX_KERNEL_ARGS) throw new RangeError(`thread pool: ${call.args.length} arguments (at most ${MAX_KERNEL_ARGS})`);
      const slot = slotInt(w);
      const at = slotArgs(w);
      for (let i = 0; i < call.args.length; i++) this.args[at + i] = call.args[i]!;
      Atomics.store(this.ctl, slot + SLOT.kernel, call.kernel);
      Atomics.store(this.ctl, slot + SLOT.argCount, call.args.length);
      Atomics.store(this.ctl, slot + SLOT.status, 0);
      Atomics.store(this.ctl, slot + SLOT.job, JOB_POSTED);
      this.generations[w] = (this.generations[w]! + 1) | 0;
      Atomics.store(this.ctl, slot + SLOT.generation, this.generations[w]!);
      // A futex wake costs this thread microseconds; a spinning worker needs none.
      if (Atomics.load(this.ctl, slot + SLOT.sleeping) === 1) Atomics.notify(this.ctl, slot + SLOT.generation);
    }
    let ownError: unknown;
    try {
      own(calls[0]!);
    } catch (error) {
      ownError = error;
    }
    // Parts no worker has started yet are run here rather than waited for.
    for (let w = 0; w < used; w++) {
      if (Atomics.compareExchange(this.ctl, slotInt(w) + SLOT.job, JOB_POSTED, JOB_CALLER) !== JOB_POSTED) continue;
      try {
        own(calls[w + 1]!);
      } catch (error) {
        ownError ??= error;
      }
      Atomics.sub(this.ctl, PENDING, 1);
    }
    this.waitIdle();
    if (ownError !== undefined) {
      throw ownError instanceof SimdKernelError ? ownError : new SimdKernelError(names[calls[0]!.kernel]!, 0, describe(ownError), { cause: ownError });
    }
    for (let w = 0; w < used; w++) {
      if (Atomics.load(this.ctl, slotInt(w) + SLOT.status) === STATUS_FAILED) {
        throw new SimdKernelError(names[calls[w + 1]!.kernel]!, w + 1, readMessage(this.control, w));
      }
    }
  }

  /** Stops the workers (they start again on the next run that needs them). */
  async terminate(): Promise<void> {
    const workers = this.workers;
    this.workers = [];
    this.generations.fill(0);
    new Int32Array(this.control).fill(0);
    await Promise.all(workers.map((w) => w.terminate()));
  }

  /** Spins, then sleeps, until no worker is busy. */
  private waitIdle(): void {
    const deadline = performance.now() + this.config.spinMicroseconds / 1000;
    for (let i = 0; ; i++) {
      if (Atomics.load(this.ctl, PENDING) === 0) return;
      if ((i & 255) === 255 && performance.now() > deadline) break;
    }
    for (;;) {
      const pending = Atomics.load(this.ctl, PENDING);
      if (pending === 0) return;
      Atomics.wait(this.ctl, PENDING, pending);
    }
  }

  /** Starts every worker and waits until each has instantiated the module. */
  private start(): void {
    if (this.workers.length > 0) return;
    const { module, memory, kernels, stackTops, spinMicroseconds } = this.config;
    for (let w = 0; w < this.size; w++) {
      const data: WorkerData = { module, memory, control: this.control, index: w, stackTop: stackTops[w]!, kernels, spinMicroseconds };
      const worker = spawnWorker(data);
      // Idle workers must not keep the process alive; Node stops them at exit.
      worker.unref();
      this.workers.push(worker);
    }
    const timeout = this.config.startTimeoutMs ?? 30_000;
    const deadline = performance.now() + timeout;
    for (let w = 0; w < this.size; w++) {
      const at = slotInt(w) + SLOT.ready;
      while (Atomics.load(this.ctl, at) === 0) {
        const left = deadline - performance.now();
        if (left <= 0 || Atomics.wait(this.ctl, at, 0, left) === 'timed-out') {
          void this.terminate();
          throw new SimdKernelError('(startup)', w + 1, `worker did not start within ${timeout} ms`);
        }
      }
      if (Atomics.load(this.ctl, at) < 0) {
        const message = readMessage(this.control, w);
        void this.terminate();
        throw new SimdKernelError('(startup)', w + 1, `worker could not instantiate the kernels: ${message}`);
      }
    }
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * A worker running `simd-worker`: the compiled `.js` next to this file, or, when running from
 * the TypeScript sources (tsx, vitest), the `.ts` through tsx's loader (a dev dependency).
 */
function spawnWorker(workerData: WorkerData): Worker {
  if (import.meta.url.endsWith('.ts')) {
    const entry = new URL('./simd-worker.ts', import.meta.url).href;
    const tsx = import.meta.resolve('tsx/esm/api');
    const code = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); })`;
    return new Worker(code, { eval: true, workerData });
  }
  return new Worker(new URL('./simd-worker.js', import.meta.url), { workerData });
}
