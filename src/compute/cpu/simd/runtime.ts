/**
 * One instance of the WebAssembly SIMD kernels: a shared linear memory (growable to the wasm32
 * maximum) that tensors live in, the kernels instantiated on it for the calling thread, a heap
 * over it for the caching memory pool, per-thread scratch, and the worker pool. Kernel families
 * (elementwise.ts, reduce.ts, ...) split their work into per-thread calls and hand them to
 * {@link SimdRuntime.run}; calls are synchronous.
 *
 * {@link SimdRuntime.shared} is the process's instance for a thread count (per JS thread), which
 * the CPU backends share; tests and benchmarks may create others, e.g. one per build.
 */
import { availableParallelism } from 'node:os';
import { InvalidArgumentError } from '../../../errors.js';
import { MemoryPool, type MemoryPoolOptions, type PoolBlock } from '../../gpu/memory-pool.js';
import { SimdKernelError } from './errors.js';
import { COLD_FACTOR, THRESHOLDS, type SimdThresholds } from './thresholds.js';
import { ThreadPool, type KernelCall } from './thread-pool.js';
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
] as const;

/** A kernel export. */
export type KernelName = (typeof KERNELS)[number];

const KERNEL_INDEX = new Map<string, number>(KERNELS.map((name, i) => [name, i]));

/** The module's exports as this side calls them (pointers and sizes are plain numbers). */
type KernelExports = Record<KernelName, (...args: number[]) => void> & {
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
  /** Threads that share big ops, the calling one included (default `GPUCOMPUTE_CPU_THREADS`, else `os.availableParallelism()`). */
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
/** Where the struct-shaped arguments of one call are written (see {@link SimdRuntime.argsAt}). */
const ARGS_BYTES = 1024;
/** The module's initial memory (`--initial-memory` in scripts/build-wasm.sh). */
const INITIAL_PAGES = 32;

/** Offsets of the struct areas inside the argument block; kernels in flight together use different ones. */
export const ARGS = { broadcastPlan: 0, gemm: 128, attention: 256, gru: 384 } as const;

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
  /** Threads that share big ops (the calling one included). */
  readonly threads: number;
  readonly memory: WasmMemory;
  /** The linear memory as a pool device; tensor pools are made with {@link SimdRuntime.createPool}. */
  readonly heap: WasmHeap;
  /** The kernels on the calling thread. */
  readonly kernels: KernelExports;
  /** Bytes of scratch each thread has. */
  readonly scratchBytes: number;
  /** When each kernel family splits its work while the workers are awake (THRESHOLDS unless overridden). */
  readonly thresholds: SimdThresholds;
  /** The thresholds' multiplier while the workers sleep or have not started. */
  readonly coldFactor: number;
  /** KC of the sgemm: K above it needs an f32 accumulator for 16-bit outputs. */
  readonly gemmBlockDepth: number;
  private readonly spinMicroseconds: number;
  private readonly stackTop: number;
  private readonly argsBase: number;
  /** Per thread: its scratch (thread 0 = the calling one). */
  private readonly scratch: number[] = [];
  private workerStacks: number[] = [];
  private pool: ThreadPool | undefined;
  private readonly temps: MemoryPool<object>;
  private readonly tempStream = {};
  private buffer: SharedArrayBuffer | undefined;
  private u8View = new Uint8Array(new SharedArrayBuffer(0));
  private i32View = new Int32Array(new SharedArrayBuffer(0));
  private f32View = new Float32Array(new SharedArrayBuffer(0));

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
    this.stackTop = this.kernels.__stack_pointer.value as number;
    this.heap = new WasmHeap(this.memory, this.kernels.__heap_base.value as number, maxBytes);
    this.scratchBytes = Math.max(this.kernels.gemm_scratch_bytes(), this.kernels.attention_scratch_bytes(), this.kernels.reduce_scratch_bytes());
    this.gemmBlockDepth = this.kernels.gemm_block_depth();
    this.argsBase = this.reserve(ARGS_BYTES);
    this.scratch.push(this.reserve(this.scratchBytes));
    this.temps = new MemoryPool<object>(this.heap);
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

  /** Scratch of thread `t` (0 is the calling thread); the workers' is reserved on first use. */
  scratchOf(t: number): number {
    if (t > 0) this.reserveWorkerMemory();
    return this.scratch[t]!;
  }

  /** Byte address of a struct area of the argument block. */
  argsAt(area: number): number {
    return this.argsBase + area;
  }

  /** A temporary block of the runtime's own pool (free it with {@link SimdRuntime.freeTemp}). */
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

  /**
   * Runs `kernel` once per entry of `parts` (the arguments of each thread's call): the first on
   * this thread, the others on workers, and returns when all are done. One entry runs here with
   * no worker involved.
   * @throws SimdKernelError when a call fails (the pool stays usable).
   */
  run(kernel: KernelName, parts: readonly (readonly number[])[]): void {
    if (parts.length === 1) {
      this.runHere(kernel, parts[0]!);
      return;
    }
    const index = KERNEL_INDEX.get(kernel)!;
    this.startPool().run(
      parts.map((args) => ({ kernel: index, args })),
      (call) => this.call(call),
      KERNELS,
    );
  }

  /** Stops the workers and drops the temporaries; the memory goes with the runtime. */
  async dispose(): Promise<void> {
    await this.pool?.terminate();
    this.pool = undefined;
    this.temps.dispose();
    for (const [key, rt] of sharedRuntimes) if (rt === this) sharedRuntimes.delete(key);
  }

  /** Runs one call of `kernel` on this thread only (the path of every op below its threshold). */
  runHere(kernel: KernelName, args: readonly number[]): void {
    try {
      this.kernels[kernel](...args);
    } catch (error) {
      // A trap leaves the shadow stack where the kernel was.
      this.kernels.__stack_pointer.value = this.stackTop;
      throw new SimdKernelError(kernel, 0, error instanceof Error ? error.message : String(error), { cause: error });
    }
  }

  private call(call: KernelCall): void {
    this.runHere(KERNELS[call.kernel]!, call.args);
  }

  /** The worker pool, with its stacks and scratch, made on first use. */
  private startPool(): ThreadPool {
    if (!this.pool) {
      this.reserveWorkerMemory();
      this.pool = new ThreadPool({
        module: simdModule(this.variant),
        memory: this.memory,
        kernels: KERNELS,
        stackTops: this.workerStacks,
        spinMicroseconds: this.spinMicroseconds,
      });
    }
    return this.pool;
  }

  /** Each worker's stack and scratch, reserved once. */
  private reserveWorkerMemory(): void {
    while (this.scratch.length < this.threads) {
      this.workerStacks.push(this.reserve(WORKER_STACK_BYTES) + WORKER_STACK_BYTES);
      this.scratch.push(this.reserve(this.scratchBytes));
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
