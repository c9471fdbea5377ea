/**
 * A worker of the SIMD thread pool: instantiates the kernels on the shared memory with its own
 * stack, then serves jobs forever. A job is a kernel index and arguments in its slot of the
 * control block, claimed by compare-and-swap (the calling thread may have claimed it first); the
 * worker spins a while for the next one, then sleeps in Atomics.wait. A kernel that
 * throws (a trap) is reported in the slot and the stack pointer reset; the worker carries on.
 * Workers are unref'd, and Node stops them at exit even while they wait.
 */
import { performance } from 'node:perf_hooks';
import { workerData } from 'node:worker_threads';
import { JOB_POSTED, JOB_WORKER, PENDING, SLOT, STATUS_FAILED, STATUS_OK, slotArgs, slotInt, writeMessage, type WorkerData } from './pool-protocol.js';
import { wasm, type WasmGlobal } from './wasm-api.js';

const data = workerData as WorkerData;
const ctl = new Int32Array(data.control);
const args = new Float64Array(data.control);
const base = slotInt(data.index);
const argBase = slotArgs(data.index);

type Kernel = (...values: number[]) => unknown;

let kernels: Kernel[] = [];
let stackPointer: WasmGlobal | undefined;
try {
  const instance = new wasm.Instance(data.module, { env: { memory: data.memory } });
  stackPointer = instance.exports.__stack_pointer as WasmGlobal;
  stackPointer.value = data.stackTop;
  kernels = data.kernels.map((name) => instance.exports[name] as Kernel);
  Atomics.store(ctl, base + SLOT.ready, 1);
} catch (error) {
  writeMessage(data.control, data.index, error instanceof Error ? error.message : String(error));
  Atomics.store(ctl, base + SLOT.ready, -1);
}
Atomics.notify(ctl, base + SLOT.ready);

/** Waits for a generation other than `seen`: spins for the configured time, then sleeps. */
function nextGeneration(seen: number): number {
  const deadline = performance.now() + data.spinMicroseconds / 1000;
  for (let i = 0; ; i++) {
    const generation = Atomics.load(ctl, base + SLOT.generation);
    if (generation !== seen) return generation;
    // Read the clock only now and then: it costs more than a load.
    if ((i & 255) === 255 && performance.now() > deadline) break;
  }
  for (;;) {
    // Announced before the wait, which rechecks the generation: a job posted in between is not lost.
    Atomics.store(ctl, base + SLOT.sleeping, 1);
    Atomics.wait(ctl, base + SLOT.generation, seen);
    Atomics.store(ctl, base + SLOT.sleeping, 0);
    const generation = Atomics.load(ctl, base + SLOT.generation);
    if (generation !== seen) return generation;
  }
}

function serve(): void {
  let seen = 0;
  for (;;) {
    seen = nextGeneration(seen);
    // The calling thread may have taken the job already (it does once its own share is done).
    if (Atomics.compareExchange(ctl, base + SLOT.job, JOB_POSTED, JOB_WORKER) !== JOB_POSTED) continue;
    const kernel = kernels[Atomics.load(ctl, base + SLOT.kernel)];
    const count = Atomics.load(ctl, base + SLOT.argCount);
    const values = new Array<number>(count);
    for (let i = 0; i < count; i++) values[i] = args[argBase + i]!;
    let status = STATUS_OK;
    try {
      kernel!(...values);
    } catch (error) {
      status = STATUS_FAILED;
      writeMessage(data.control, data.index, error instanceof Error ? error.message : String(error));
      // A trap leaves the shadow stack where the kernel was; start the next job from the top.
      stackPointer!.value = data.stackTop;
    }
    Atomics.store(ctl, base + SLOT.status, status);
    if (Atomics.sub(ctl, PENDING, 1) === 1) Atomics.notify(ctl, PENDING);
  }
}

if (stackPointer) serve();
