/**
 * A worker of the SIMD thread pool: instantiates the kernels on the shared memory with its own
 * stack, then serves the job queue (pool-protocol.ts) in order until told to stop: it waits for
 * the next job to be published and for the one before it to complete, then claims and runs parts
 * of it. While waiting it spins a while, then sleeps in Atomics.wait. A kernel that throws (a
 * trap) is recorded as the queue's failure and the stack pointer reset; the worker carries on.
 * Should the worker's thread end any other way (an uncaught error, process.exit), its exit
 * handler marks the queue broken so no caller waits for it forever. Workers are unref'd, and
 * Node stops them at exit even while they wait.
 */
import { performance } from 'node:perf_hooks';
import { workerData } from 'node:worker_threads';
import { HEADER, PoolLayout, WORKER, wakeCaller, workOn, writeMessage, type WorkerData } from './pool-protocol.js';
import { hostKernel, isHostKernel } from './host-kernels.js';
import { wasm, type WasmGlobal } from './wasm-api.js';

const data = workerData as WorkerData;
const ctl = new Int32Array(data.control);
const args = new Float64Array(data.control);
const layout = new PoolLayout(data.workers, data.maxParts);
const record = layout.workerInt(data.index);

type Kernel = (...values: number[]) => unknown;

let stopped = false;
process.on('exit', () => {
  if (stopped) return;
  Atomics.compareExchange(ctl, HEADER.dead, 0, data.index + 1);
  Atomics.notify(ctl, HEADER.completed);
  wakeCaller(ctl);
});

let kernels: Kernel[] = [];
let stackPointer: WasmGlobal | undefined;
try {
  const instance = new wasm.Instance(data.module, { env: { memory: data.memory } });
  stackPointer = instance.exports.__stack_pointer as WasmGlobal;
  stackPointer.value = data.stackTop;
  kernels = data.kernels.map((name) => (isHostKernel(name) ? hostKernel(name, data.memory, instance.exports) : (instance.exports[name] as Kernel)));
  Atomics.store(ctl, record + WORKER.ready, 1);
} catch (error) {
  writeMessage(data.control, error instanceof Error ? error.message : String(error));
  Atomics.store(ctl, record + WORKER.ready, -1);
  stopped = true;
}
Atomics.notify(ctl, record + WORKER.ready);

/**
 * A wait for the job before to complete spins this long before it sleeps. Every part of that job
 * is running by then (this worker would have taken one otherwise), so the wait ends within a
 * part's time; a sleeping worker wakes 30-60 µs after the notify, late for every job after.
 */
const BARRIER_SPIN_MS = 1;

/**
 * Waits until header field `field` reaches `target` or the pool stops; spins for `spinMs`, then
 * sleeps.
 */
function waitFor(field: number, target: number, spinMs: number): boolean {
  const deadline = performance.now() + spinMs;
  for (let i = 0; ; i++) {
    if (Atomics.load(ctl, HEADER.stop) !== 0) return false;
    const value = Atomics.load(ctl, field);
    if (value >= target) return true;
    // Read the clock only now and then: it costs more than a load.
    if ((i & 255) === 255 && performance.now() > deadline) {
      // Announced before the wait, which rechecks the value: a job posted in between is not lost.
      Atomics.store(ctl, record + WORKER.sleeping, 1);
      if (Atomics.load(ctl, HEADER.stop) === 0) Atomics.wait(ctl, field, value);
      Atomics.store(ctl, record + WORKER.sleeping, 0);
    }
  }
}

function call(kernel: number, values: number[]): void {
  try {
    kernels[kernel]!(...values);
  } catch (error) {
    // A trap leaves the shadow stack where the kernel was; start the next part from the top.
    stackPointer!.value = data.stackTop;
    throw error;
  }
}

function fail(message: string): void {
  writeMessage(data.control, message);
}

function serve(): void {
  for (let s = data.firstJob; ; s++) {
    if (!waitFor(HEADER.submitted, s, data.spinMicroseconds / 1000) || !waitFor(HEADER.completed, s - 1, Math.max(BARRIER_SPIN_MS, data.spinMicroseconds / 1000))) break;
    workOn(ctl, args, layout, s, data.index + 1, data.scratch, call, fail);
  }
  stopped = true;
}

if (stackPointer) serve();
