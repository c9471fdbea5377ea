/**
 * One instance of the WebAssembly SIMD kernels: a shared linear memory (growable to the wasm32
 * maximum) that tensors live in, the kernels instantiated on it for the calling thread, a heap
 * over it for the caching memory pool, per-thread scratch, and the worker pool with its in-order
 * job queue. Kernel families (elementwise.ts, reduce.ts, ...) split their work into per-thread
 * calls and hand them to {@link SimdRuntime.run}: while nothing is queued, a one-part op runs on
 * the calling thread and a moderate one split with the calling thread taking part, both done
 * when the call returns; a big op, and every op while others are queued, is queued for the
 * workers and the call returns at once. Results are there once {@link SimdRuntime.settle}
 * (blocking) or {@link SimdRuntime.settleAsync} returns. Memory is reused in queue order, as on
 * a GPU stream: a block freed while queued jobs use it may serve a later job at once.
 *
 * {@link SimdRuntime.shared} is the process's instance for a thread count (per JS thread), which
 * the CPU backends share; tests and benchmarks may create others, e.g. one per build.
 */
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { InvalidArgumentError } from '../../../errors.js';
import { MemoryPool, type MemoryPoolOptions, type PoolBlock } from '../../gpu/memory-pool.js';
import { SimdKernelError } from './errors.js';
import { COLD_FACTOR, THRESHOLDS, type SimdThresholds } from './thresholds.js';
import { RING } from './pool-protocol.js';
import { HOST_KERNELS, hostKernel, isHostKernel, type HostKernelName, type KernelCall } from './host-kernels.js';
import { ThreadPool } from './thread-pool.js';
import { wasm, type WasmGlobal, type WasmMemory } from './wasm-api.js';
import { WASM_PAGE, WasmHeap } from './wasm-heap.js';
import { defaultSimdVariant, simdModule, type SimdVariant } from './wasm-module.js';

/** The environment variable that sets the thread count (1: no workers). */
export const THREADS_ENV = 'GPUCOMPUTE_CPU_THREADS';

/** The kernels a job may name, in the order workers index them. */
export const KERNELS = [
  'fill',
  'copy',
  'cast',
  'unary',
  'activation_grad',
  'binary',
  'reduce',
  'reduce_partial',
  'reduce_combine',
  'softmax',
  'layer_norm',
  'transpose',
  'random_uniform',
  'dropout',
  'sgemm',
  'gru_step',
  'attention',
  'attention_probs',
  'attention_grad_scores',
  ...HOST_KERNELS,
] as const;

/** A kernel: an export of the module, or a host kernel (host-kernels.ts). */
export type KernelName = (typeof KERNELS)[number];

const KERNEL_INDEX = new Map<string, number>(KERNELS.map((name, i) => [name, i]));

/** The module's exports as this side calls them (pointers and sizes are plain numbers). */
type KernelExports = Record<Exclude<KernelName, HostKernelName>, KernelCall> & {
  gru_gates_f32: KernelCall;
  gemm_scratch_bytes(): number;
  reduce_scratch_bytes(): number;
  gemm_block_depth(): number;
  attention_scratch_bytes(): number;
  gru_scratch_bytes(hidden: number): number;
  __stack_pointer: WasmGlobal;
  __heap_base: WasmGlobal;
};

/** Options of {@link SimdRuntime}. */
export interface SimdRuntimeOptions {
  /** Threads that run big ops: workers, or with 1 the calling thread alone (default `GPUCOMPUTE_CPU_THREADS`, else `os.availableParallelism()`). */
  threads?: number;
  /** Which build runs (default: relaxed SIMD where the engine has it, unless `GPUCOMPUTE_CPU_SIMD=simd128`). */
  variant?: SimdVariant;
  /** How long idle workers, and the calling thread waiting for them, spin before sleeping (default 50 µs). */
  spinMicroseconds?: number;
  /** Overrides of the measured split thresholds (1 splits everything, e.g. to measure the crossover). */
  thresholds?: Partial<SimdThresholds>;
  /** Override of COLD_FACTOR, the thresholds' multiplier while the workers sleep. */
  coldFactor?: number;
}

/** Stack of each worker (the calling thread's is linked into the module: `-z stack-size`). */
const WORKER_STACK_BYTES = 128 * 1024;
/** Bytes of one job's struct-shaped arguments (see {@link SimdRuntime.structArea}; the largest, sgemm's, takes 128). */
const STRUCT_BYTES = 256;
/**
 * The most work (in threshold units, see {@link SimdRuntime.cost}) an op started on an empty
 * queue runs with the calling thread taking part: about 1-2 ms on one thread, so a call blocks
 * the event loop for at most about that over the thread count. Bigger ops run in the background.
 * Measured on 2 cores (medium products and elementwise chains): queued ops of this size ran
 * 20-50% slower than with the caller taking part, since waking a worker and handing jobs between
 * threads costs tens of microseconds each.
 */
const BACKGROUND_COST = 4096;

/** The module's initial memory (`--initial-memory` in scripts/build-wasm.sh). */
const INITIAL_PAGES = 32;

/**
 * A shared memory as large as the engine allows: the wasm32 maximum (4 GiB) where the address
 * space can be reserved, else the largest of a few smaller maxima.
 */
function createMemory(): { memory: WasmMemory; maxBytes: number } {
  let error: unknown;
  for (const maximum of [65536, 32768, 16384, 8192, 4096]) {
    try {
      return { memory: new wasm.Memory({ initial: INITIAL_PAGES, maximum, shared: true }), maxBytes: maximum * WASM_PAGE };
    } catch (e) {
      error = e;
    }
  }
  throw new SimdKernelError('(memory)', 0, `cannot reserve a shared WebAssembly memory: ${String(error)}`);
}

/**
 * The thread count: `option`, else `GPUCOMPUTE_CPU_THREADS`, else `os.availableParallelism()`.
 * @throws InvalidArgumentError naming the option or the variable when it is not an integer from 1 to 256.
 */
export function threadCount(option?: number): number {
  const env = process.env[THREADS_ENV];
  const value = option ?? (env !== undefined && env !== '' ? Number(env) : availableParallelism());
  if (!Number.isInteger(value) || value < 1 || value > 256) {
    throw new InvalidArgumentError(
      `SIMD thread count must be an integer from 1 to 256, got ${option !== undefined ? String(option) : `${THREADS_ENV}=${JSON.stringify(env)}`}`,
    );
  }
  return value;
}

/** The process's runtimes by thread count and build (see {@link SimdRuntime.shared}). */
const sharedRuntimes = new Map<string, SimdRuntime>();

export class SimdRuntime {
  readonly variant: SimdVariant;
  /** Threads that run big ops: the workers (with 1, the calling thread and no workers). */
  readonly threads: number;
  readonly memory: WasmMemory;
  /** The linear memory as a pool device; tensor pools are made with {@link SimdRuntime.createPool}. */
  readonly heap: WasmHeap;
  /** The kernels on the calling thread. */
  readonly kernels: KernelExports;
  /** Every kernel the queue names, host kernels included, as the calling thread runs it. */
  private readonly calls: Map<KernelName, KernelCall>;
  /** Bytes of scratch each thread has. */
  readonly scratchBytes: number;
  /** When each kernel family splits its work while the workers are awake (THRESHOLDS unless overridden). */
  readonly thresholds: SimdThresholds;
  /** The thresholds' multiplier while the workers sleep or have not started. */
  readonly coldFactor: number;
  /** KC of the sgemm: K above it needs an f32 accumulator for 16-bit outputs. */
  readonly gemmBlockDepth: number;
  /** The op the next jobs serve, named by a failure they report (set by the caller, e.g. the backend). */
  op = '';
  private readonly spinMicroseconds: number;
  private readonly stackTop: number;
  /** One struct area per ring slot of the queue. */
  private readonly structBase: number;
  /** The calling thread's scratch. */
  private readonly ownScratch: number;
  private readonly pool: ThreadPool | undefined;
  private readonly temps: MemoryPool<object>;
  private readonly tempStream = {};
  private buffer: SharedArrayBuffer | undefined;
  private u8View = new Uint8Array(new SharedArrayBuffer(0));
  private i32View = new Int32Array(new SharedArrayBuffer(0));
  private f32View = new Float32Array(new SharedArrayBuffer(0));
  private readonly own = (kernel: number, values: number[]): void => this.runHere(KERNELS[kernel]!, values);

  /**
   * The process's runtime for `threads` threads (default: {@link threadCount}'s) and the default
   * build, created on first use. Instances of the same count share one memory and one worker pool.
   */
  static shared(threads?: number): SimdRuntime {
    const count = threadCount(threads);
    const variant = defaultSimdVariant();
    const key = `${variant}:${count}`;
    let rt = sharedRuntimes.get(key);
    if (!rt) {
      rt = new SimdRuntime({ threads: count, variant });
      sharedRuntimes.set(key, rt);
    }
    return rt;
  }

  constructor(options: SimdRuntimeOptions = {}) {
    this.threads = threadCount(options.threads);
    this.variant = options.variant ?? defaultSimdVariant();
    this.spinMicroseconds = options.spinMicroseconds ?? 50;
    this.thresholds = { ...THRESHOLDS, ...options.thresholds };
    this.coldFactor = options.coldFactor ?? COLD_FACTOR;
    const { memory, maxBytes } = createMemory();
    this.memory = memory;
    const module = simdModule(this.variant);
    const instance = new wasm.Instance(module, { env: { memory: this.memory } });
    this.kernels = instance.exports as unknown as KernelExports;
    this.calls = new Map(KERNELS.map((name) => [name, isHostKernel(name) ? hostKernel(name, this.memory, instance.exports) : this.kernels[name]]));
    this.stackTop = this.kernels.__stack_pointer.value as number;
    // Ranges released to the heap may go to another pool, whose host writes must not meet queued jobs.
    this.heap = new WasmHeap(this.memory, this.kernels.__heap_base.value as number, maxBytes, () => this.settle());
    this.scratchBytes = Math.max(this.kernels.gemm_scratch_bytes(), this.kernels.attention_scratch_bytes(), this.kernels.reduce_scratch_bytes());
    this.gemmBlockDepth = this.kernels.gemm_block_depth();
    this.structBase = this.reserve(STRUCT_BYTES * RING);
    this.ownScratch = this.reserve(this.scratchBytes);
    this.temps = new MemoryPool<object>(this.heap);
    if (this.threads > 1) {
      // Each worker's stack and scratch, reserved now; the threads start with the first job.
      const stackTops: number[] = [];
      const scratch: number[] = [];
      for (let w = 0; w < this.threads; w++) {
        stackTops.push(this.reserve(WORKER_STACK_BYTES) + WORKER_STACK_BYTES);
        scratch.push(this.reserve(this.scratchBytes));
      }
      this.pool = new ThreadPool({ module, memory, kernels: KERNELS, stackTops, scratch, maxParts: this.threads, spinMicroseconds: this.spinMicroseconds });
    }
  }

  /** A caching pool of tensor storage in this runtime's memory (block addresses are byte offsets). */
  createPool(options?: MemoryPoolOptions): MemoryPool<object> {
    return new MemoryPool<object>(this.heap, options);
  }

  /**
   * The least work per thread that makes a split of `kind` pay now: the measured threshold while
   * the workers spin, that times the cold factor while they sleep or have not started.
   */
  threshold(kind: keyof SimdThresholds): number {
    const base = this.thresholds[kind];
    return this.pool?.awake ? base : base * this.coldFactor;
  }

  /**
   * Where the next job's struct-shaped arguments go (STRUCT_BYTES bytes, valid until that job
   * has run): the area of the queue slot it will take, waiting for that slot to be free.
   */
  structArea(): number {
    const next = this.pool ? this.pool.reserve(this.own, this.ownScratch) : 0;
    return this.structBase + (next % RING) * STRUCT_BYTES;
  }

  /**
   * A temporary block of the runtime's own pool, for queued jobs only: the host never touches it,
   * so {@link SimdRuntime.freeTemp} may give it back while jobs still use it (queue order).
   */
  temp(bytes: number): PoolBlock {
    return this.temps.alloc(bytes, this.tempStream);
  }

  freeTemp(block: PoolBlock): void {
    this.temps.free(block, this.tempStream);
  }

  /** Views of the whole linear memory, renewed after it grows. */
  get u8(): Uint8Array<SharedArrayBuffer> {
    this.refreshViews();
    return this.u8View;
  }

  get i32(): Int32Array<SharedArrayBuffer> {
    this.refreshViews();
    return this.i32View;
  }

  get f32(): Float32Array<SharedArrayBuffer> {
    this.refreshViews();
    return this.f32View;
  }

  /** Whether the workers are running. */
  get workersStarted(): boolean {
    return this.pool?.started ?? false;
  }

  /** Number of the last job queued (0 before any, and always with one thread). */
  get submitted(): number {
    return this.pool?.submitted ?? 0;
  }

  /** Number of the last job that has run (0 before any, and always with one thread). */
  get completed(): number {
    return this.pool?.completed ?? 0;
  }

  /** Whether every queued job has run. */
  get idle(): boolean {
    return this.pool?.idle ?? true;
  }

  /**
   * An op's work in units of its family's warm threshold (each about 2-4 µs on one thread), as
   * {@link SimdRuntime.run} takes it: `amount` in the unit of `kind` (bytes, multiply-adds, ...).
   */
  cost(kind: keyof SimdThresholds, amount: number): number {
    return amount / this.thresholds[kind];
  }

  /**
   * Runs `kernel` once per entry of `parts` (the arguments of each thread's call; with
   * `scratch`, each call also gets its thread's scratch address as a last argument), in queue
   * order. While nothing is queued: one part runs at once on this thread (always so with one
   * thread), and an op of up to {@link BACKGROUND_COST} (`cost`, see {@link SimdRuntime.cost})
   * runs split with this thread taking parts, returning when done; bigger ops, and every op
   * while others are queued, are queued for the workers and the call returns at once.
   * @throws SimdKernelError when a call run at once fails; a queued one's failure is thrown by the next settle.
   */
  run(kernel: KernelName, parts: readonly (readonly number[])[], scratch = false, cost = Infinity): void {
    const pool = this.pool;
    if (!pool || (parts.length === 1 && pool.idle)) {
      for (const args of parts) this.runHere(kernel, scratch ? [...args, this.ownScratch] : args);
      return;
    }
    const eager = cost <= BACKGROUND_COST && pool.idle;
    const s = pool.submit(KERNEL_INDEX.get(kernel)!, parts, scratch, this.op, this.own, this.ownScratch, eager);
    if (eager) pool.settle(s, this.own, this.ownScratch, true);
  }

  /**
   * Blocks until job `s` (default: every job queued so far) has run, running parts of the queued
   * jobs the workers leave unclaimed meanwhile.
   * @throws SimdKernelError for a queued kernel that failed, or a worker that exited.
   */
  settle(s = this.submitted): void {
    this.pool?.settle(s, this.own, this.ownScratch);
  }

  /** {@link SimdRuntime.settle} without blocking the event loop: the workers run the parts. */
  async settleAsync(s = this.submitted): Promise<void> {
    await this.pool?.settleAsync(s);
  }

  /** Waits for the queue, stops the workers and drops the temporaries; the memory goes with the runtime. */
  async dispose(): Promise<void> {
    try {
      await this.settleAsync();
    } finally {
      await this.pool?.terminate();
      this.temps.dispose();
      for (const [key, rt] of sharedRuntimes) if (rt === this) sharedRuntimes.delete(key);
    }
  }

  /** @internal The worker threads (tests end one to see its exit reported). */
  get workerThreads(): readonly Worker[] {
    return this.pool?.threads ?? [];
  }

  /** Runs one call of `kernel` on this thread. */
  private runHere(kernel: KernelName, args: readonly number[]): void {
    try {
      this.calls.get(kernel)!(...args);
    } catch (error) {
      // A trap leaves the shadow stack where the kernel was.
      this.kernels.__stack_pointer.value = this.stackTop;
      throw new SimdKernelError(kernel, 0, error instanceof Error ? error.message : String(error), { cause: error });
    }
  }

  /** A range of the heap kept for the runtime's lifetime. */
  private reserve(bytes: number): number {
    const address = this.heap.allocate(bytes);
    if (address === undefined) throw new SimdKernelError('(memory)', 0, `cannot reserve ${bytes} bytes of the linear memory`);
    return Number(address);
  }

  private refreshViews(): void {
    const buffer = this.memory.buffer as SharedArrayBuffer;
    if (buffer.byteLength === this.buffer?.byteLength) return;
    this.buffer = buffer;
    this.u8View = new Uint8Array(buffer);
    this.i32View = new Int32Array(buffer);
    this.f32View = new Float32Array(buffer);
  }
}
