/**
 * The calling thread's side of the SIMD job queue (pool-protocol.ts): it publishes jobs and
 * returns at once, and waits for them only when asked: {@link ThreadPool.settle} blocks (running
 * parts the workers leave unclaimed, or, for a job it just published to run at once, taking
 * parts straight away), {@link ThreadPool.settleAsync} keeps the event loop free. Workers start
 * with the first job and stay until {@link ThreadPool.terminate}. Nothing waits for them to
 * start: until they have instantiated the module (about 0.5 s for 16 under tsx), the calling
 * thread runs the parts they leave unclaimed.
 *
 * Failures surface at the next wait as a SimdKernelError naming the kernel and the op it served:
 * a kernel that trapped (the queue then skips the jobs after it until the error is reported), or
 * a worker whose thread ended (its own exit handler says so, or this side's exit listener; the
 * queue is then dropped and the workers restarted with the next job).
 */
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { SimdKernelError } from './errors.js';
import { HEADER, JOB, MAX_KERNEL_ARGS, PoolLayout, RING, WORKER, claimTag, readMessage, wakeCaller, workOn, writeMessage, type WorkerData } from './pool-protocol.js';
import type { WasmMemory, WasmModule } from './wasm-api.js';

/** What the pool needs to start workers. */
export interface ThreadPoolConfig {
  module: WasmModule;
  memory: WasmMemory;
  /** Export names in kernel-index order. */
  kernels: readonly string[];
  /** Stack top and scratch address of each worker (their count is the pool's size). */
  stackTops: readonly number[];
  scratch: readonly number[];
  /** Most parts one job has. */
  maxParts: number;
  spinMicroseconds: number;
  /** How long to wait for a starting worker before giving up. */
  startTimeoutMs?: number;
}

/** How the calling thread runs a part: the kernel's index and its arguments (scratch appended). */
export type PartRunner = (kernel: number, values: number[]) => void;

/** `Atomics.waitAsync` (Node 16+), which the ES2022 library typings leave out. */
const waitAsync = (Atomics as unknown as { waitAsync(a: Int32Array, index: number, value: number, timeout: number): { async: boolean; value: unknown } }).waitAsync.bind(Atomics);

/** How long a blocked wait sleeps before it looks for a worker that has exited. */
const DEATH_CHECK_MS = 100;

export class ThreadPool {
  readonly size: number;
  private readonly config: ThreadPoolConfig;
  private readonly layout: PoolLayout;
  private control: SharedArrayBuffer;
  private ctl: Int32Array;
  private args: Float64Array;
  private workers: Worker[] = [];
  /** Whether every started worker has instantiated the module. */
  private ready = false;
  /** When a worker that has not started by then counts as failed. */
  private startDeadline = 0;
  /** The op each job in the ring serves, for error messages. */
  private readonly ops: string[] = new Array<string>(RING).fill('');

  constructor(config: ThreadPoolConfig) {
    this.config = config;
    this.size = config.stackTops.length;
    this.layout = new PoolLayout(this.size, config.maxParts);
    this.control = new SharedArrayBuffer(this.layout.bytes);
    this.ctl = new Int32Array(this.control);
    this.args = new Float64Array(this.control);
  }

  /** Whether the workers have been started. */
  get started(): boolean {
    return this.workers.length > 0;
  }

  /** Whether every worker is running or spinning (none asleep, none unstarted). */
  get awake(): boolean {
    if (this.workers.length === 0 || !this.allReady()) return false;
    for (let w = 0; w < this.size; w++) if (Atomics.load(this.ctl, this.layout.workerInt(w) + WORKER.sleeping) === 1) return false;
    return true;
  }

  /** Number of the last job published (0 before any). */
  get submitted(): number {
    return Atomics.load(this.ctl, HEADER.submitted);
  }

  /** Number of the last job completed. */
  get completed(): number {
    return Atomics.load(this.ctl, HEADER.completed);
  }

  /** Whether every published job has completed. */
  get idle(): boolean {
    return Atomics.load(this.ctl, HEADER.completed) === Atomics.load(this.ctl, HEADER.submitted);
  }

  /** Number the next job will have; waits (running parts) until its ring slot is free. */
  reserve(own: PartRunner, ownScratch: number): number {
    const next = this.submitted + 1;
    if (next - this.completed > RING) this.settle(next - RING, own, ownScratch);
    return next;
  }

  /**
   * Publishes one job: `kernel` once per entry of `parts` (each its arguments); with `scratch`
   * every call gets its thread's scratch address appended. `op` names what it serves in errors;
   * `helping`: the calling thread takes a part itself (see {@link ThreadPool.settle}). Returns
   * the job's number.
   */
  submit(kernel: number, parts: readonly (readonly number[])[], scratch: boolean, op: string, own: PartRunner, ownScratch: number, helping = false): number {
    if (parts.length > this.layout.maxParts) throw new RangeError(`thread pool: ${parts.length} parts (at most ${this.layout.maxParts})`);
    this.start();
    const s = this.reserve(own, ownScratch);
    const at = this.layout.jobInt(s);
    const count = parts[0]!.length;
    if (count + (scratch ? 1 : 0) > MAX_KERNEL_ARGS) throw new RangeError(`thread pool: ${count} arguments (at most ${MAX_KERNEL_ARGS})`);
    for (let p = 0; p < parts.length; p++) {
      const base = this.layout.jobArgs(s, p);
      const values = parts[p]!;
      for (let i = 0; i < count; i++) this.args[base + i] = values[i]!;
    }
    const ctl = this.ctl;
    ctl[at + JOB.kernel] = kernel;
    ctl[at + JOB.parts] = parts.length;
    ctl[at + JOB.argCount] = count;
    ctl[at + JOB.scratch] = scratch ? 1 : 0;
    ctl[at + JOB.done] = 0;
    Atomics.store(ctl, at + JOB.claim, claimTag(s));
    this.ops[s % RING] = op;
    Atomics.store(ctl, HEADER.submitted, s);
    // Wake only as many sleepers as the parts need beyond the spinning workers: a futex wake
    // costs this thread microseconds, and a worker woken for nothing spins on a core the others need.
    let sleeping = 0;
    for (let w = 0; w < this.size; w++) sleeping += Atomics.load(ctl, this.layout.workerInt(w) + WORKER.sleeping);
    const wanted = parts.length - (helping ? 1 : 0) - (this.size - sleeping);
    if (wanted > 0 && sleeping > 0) Atomics.notify(ctl, HEADER.submitted, wanted);
    return s;
  }

  /**
   * Blocks until job `s` has completed, running parts of the jobs up to it on this thread
   * through `own` meanwhile: at once with `eager`, else those the workers leave unclaimed for a
   * spin's time (they may be asleep, or descheduled).
   * @throws SimdKernelError for a failed job or an exited worker, once the queue is idle again.
   */
  settle(s: number, own: PartRunner, ownScratch: number, eager = false): void {
    const ctl = this.ctl;
    const spin = this.config.spinMicroseconds / 1000;
    // The job this thread watches, and since when nothing about it has changed.
    let watched = -1;
    let watchedClaim = -1;
    let since = 0;
    try {
      for (;;) {
        this.checkHealth();
        const wake = Atomics.load(ctl, HEADER.wake);
        const done = Atomics.load(ctl, HEADER.completed);
        if (done >= s) break;
        const next = done + 1;
        const now = performance.now();
        if (Atomics.load(ctl, HEADER.submitted) >= next) {
          const claim = Atomics.load(ctl, this.layout.jobInt(next) + JOB.claim) & 0xffff;
          if (next !== watched || claim !== watchedClaim) {
            watched = next;
            watchedClaim = claim;
            since = now;
          }
          if (claim < Atomics.load(ctl, this.layout.jobInt(next) + JOB.parts) && (eager || now - since > spin)) {
            // Parts the workers leave unclaimed (asleep, or descheduled) run here; while they
            // are busy this thread keeps out of their way (a third thread on two cores slows both).
            workOn(ctl, this.args, this.layout, next, 0, ownScratch, own, (message) => writeMessage(this.control, message));
            continue;
          }
        }
        // Spin while things move, then sleep until the awaited job completes.
        if (now - since < spin) continue;
        Atomics.store(ctl, HEADER.awaited, s);
        if (Atomics.load(ctl, HEADER.completed) < s) Atomics.wait(ctl, HEADER.wake, wake, DEATH_CHECK_MS);
      }
    } finally {
      Atomics.store(ctl, HEADER.awaited, 0);
    }
    this.throwIfFailed();
  }

  /**
   * Resolves once job `s` has completed, without blocking the event loop (the workers run the
   * parts).
   * @throws SimdKernelError as {@link ThreadPool.settle} does.
   */
  async settleAsync(s: number): Promise<void> {
    // A pending Atomics.waitAsync does not keep Node's event loop alive; the awaited result must.
    const hold = setInterval(() => undefined, 2 ** 30);
    try {
      for (;;) {
        this.checkHealth();
        const done = Atomics.load(this.ctl, HEADER.completed);
        if (done >= s) break;
        const wait = waitAsync(this.ctl, HEADER.completed, done, DEATH_CHECK_MS);
        if (wait.async) await wait.value;
      }
    } finally {
      clearInterval(hold);
    }
    this.throwIfFailed();
  }

  /** Stops the workers (they start again with the next job); jobs still queued are dropped. */
  async terminate(): Promise<void> {
    await Promise.all(this.stopWorkers().map((w) => w.terminate()));
  }

  /** @internal The workers' threads (tests end one to see its exit reported). */
  get threads(): readonly Worker[] {
    return this.workers;
  }

  /** Throws for a worker that has exited or failed to start: the queue is dropped and the workers are stopped. */
  private checkHealth(): void {
    this.checkStarted();
    const dead = Atomics.load(this.ctl, HEADER.dead);
    if (dead === 0) return;
    const s = Atomics.load(this.ctl, HEADER.completed) + 1;
    const pending = Atomics.load(this.ctl, HEADER.submitted) >= s;
    this.reset();
    throw new SimdKernelError(
      '(worker)',
      dead,
      `worker ${dead} exited${pending ? `; the queued work from op ${this.ops[s % RING]} on was dropped` : ''}`,
    );
  }

  /** Throws the first failure once every published job has completed, and clears it. */
  private throwIfFailed(): void {
    const failed = Atomics.load(this.ctl, HEADER.failed);
    if (failed === 0) return;
    if (!this.idle) this.settle(this.submitted, () => undefined, 0);
    const error = new SimdKernelError(
      this.config.kernels[Atomics.load(this.ctl, HEADER.failedKernel)]!,
      Atomics.load(this.ctl, HEADER.failedThread),
      readMessage(this.control),
      { op: this.ops[failed % RING]! },
    );
    Atomics.store(this.ctl, HEADER.failed, 0);
    throw error;
  }

  /** Drops the queue after a worker exited: every worker is stopped, and the next job starts fresh ones. */
  private reset(): void {
    for (const w of this.stopWorkers()) void w.terminate();
  }

  /**
   * Tells the workers to stop and moves to a fresh control block (so nothing a stopping worker
   * does reaches the next ones), numbered on from the last job published, which counts as done.
   */
  private stopWorkers(): Worker[] {
    const workers = this.workers;
    this.workers = [];
    Atomics.store(this.ctl, HEADER.stop, 1);
    Atomics.notify(this.ctl, HEADER.submitted);
    Atomics.notify(this.ctl, HEADER.completed);
    const last = Atomics.load(this.ctl, HEADER.submitted);
    this.control = new SharedArrayBuffer(this.layout.bytes);
    this.ctl = new Int32Array(this.control);
    this.args = new Float64Array(this.control);
    this.ctl[HEADER.submitted] = last;
    this.ctl[HEADER.completed] = last;
    return workers;
  }

  /** Starts every worker (see {@link ThreadPool.checkStarted} for how their start is checked). */
  private start(): void {
    if (this.workers.length > 0) return;
    const { module, memory, kernels, stackTops, scratch, spinMicroseconds, maxParts } = this.config;
    const firstJob = Atomics.load(this.ctl, HEADER.completed) + 1;
    const control = this.control;
    for (let w = 0; w < this.size; w++) {
      const data: WorkerData = { module, memory, control, workers: this.size, maxParts, index: w, stackTop: stackTops[w]!, scratch: scratch[w]!, kernels, spinMicroseconds, firstJob };
      const worker = spawnWorker(data);
      // A worker that ends while jobs may need it breaks the queue; waits notice (see checkHealth).
      worker.on('exit', () => {
        if (this.control !== control) return;
        Atomics.compareExchange(this.ctl, HEADER.dead, 0, w + 1);
        Atomics.notify(this.ctl, HEADER.completed);
        wakeCaller(this.ctl);
      });
      worker.on('error', () => undefined);
      // Idle workers must not keep the process alive; Node stops them at exit.
      worker.unref();
      this.workers.push(worker);
    }
    this.ready = false;
    this.startDeadline = performance.now() + (this.config.startTimeoutMs ?? 30_000);
  }

  /** Whether every started worker has instantiated the module (remembered once they all have). */
  private allReady(): boolean {
    if (this.ready) return true;
    for (let w = 0; w < this.size; w++) if (Atomics.load(this.ctl, this.layout.workerInt(w) + WORKER.ready) !== 1) return false;
    this.ready = true;
    return true;
  }

  /**
   * Throws for a worker that could not instantiate the module, or has not within the start
   * timeout (a wait on the async API would otherwise wait for it forever).
   */
  private checkStarted(): void {
    if (this.workers.length === 0 || this.allReady()) return;
    for (let w = 0; w < this.size; w++) {
      if (Atomics.load(this.ctl, this.layout.workerInt(w) + WORKER.ready) < 0) {
        const message = readMessage(this.control);
        this.reset();
        throw new SimdKernelError('(startup)', w + 1, `worker could not instantiate the kernels: ${message}`);
      }
    }
    if (performance.now() > this.startDeadline) {
      let late = 0;
      while (Atomics.load(this.ctl, this.layout.workerInt(late) + WORKER.ready) === 1) late++;
      this.reset();
      throw new SimdKernelError('(startup)', late + 1, `worker did not start within ${this.config.startTimeoutMs ?? 30_000} ms`);
    }
  }
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
