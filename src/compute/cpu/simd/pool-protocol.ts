/**
 * The control block the calling thread and the workers share (one SharedArrayBuffer): a count of
 * parts still running, then one slot per worker holding its job (kernel index and arguments), the
 * job's state, its generation counter (bumped once per job; the worker sleeps on it), its outcome
 * and an error message. Everything is read and written with Atomics, so no message passing is
 * involved and a call stays synchronous.
 *
 * A posted job is claimed by compare-and-swap, by its worker or, once the calling thread has
 * finished its own share, by the calling thread itself: a worker that is asleep or descheduled
 * then never delays an op, it only loses its part.
 */
import type { WasmMemory, WasmModule } from './wasm-api.js';


/** Most numeric arguments one kernel call takes. */
export const MAX_KERNEL_ARGS = 12;
/** UTF-8 bytes kept of a worker's error message. */
export const ERROR_MESSAGE_BYTES = 480;

const HEADER_BYTES = 64;
const SLOT_HEADER_BYTES = 64;
const SLOT_BYTES = SLOT_HEADER_BYTES + MAX_KERNEL_ARGS * 8 + ERROR_MESSAGE_BYTES;

/** Int32 index of the busy-worker count in the control block. */
export const PENDING = 0;

/** Int32 fields of a slot, relative to {@link slotInt}. */
export const SLOT = {
  /** Bumped by the calling thread for each job; the worker waits on it. */
  generation: 0,
  /** Index of the kernel in the kernel list, -1 for none. */
  kernel: 1,
  argCount: 2,
  /** 0 ok, 1 the kernel threw. */
  status: 3,
  errorLength: 4,
  /** Set by the worker once its module is instantiated: 1 ready, -1 failed (message in the slot). */
  ready: 5,
  /** 0 (nothing posted yet), or one of the JOB_* states below. */
  job: 6,
  /** 1 while the worker sleeps in Atomics.wait (the caller wakes only sleepers). */
  sleeping: 7,
} as const;

/** Job states: posted and unclaimed, claimed by the worker, claimed by the caller. */
export const JOB_POSTED = 1;
export const JOB_WORKER = 2;
export const JOB_CALLER = 3;

/** Status values. */
export const STATUS_OK = 0;
export const STATUS_FAILED = 1;

/** Bytes of a control block for `workers` workers. */
export function controlBytes(workers: number): number {
  return HEADER_BYTES + workers * SLOT_BYTES;
}

/** Int32 index of field 0 of worker `w`'s slot (w counts from 0). */
export function slotInt(w: number): number {
  return (HEADER_BYTES + w * SLOT_BYTES) / 4;
}

/** Float64 index of worker `w`'s first argument. */
export function slotArgs(w: number): number {
  return (HEADER_BYTES + w * SLOT_BYTES + SLOT_HEADER_BYTES) / 8;
}

/** Byte offset of worker `w`'s error message. */
export function slotMessage(w: number): number {
  return HEADER_BYTES + w * SLOT_BYTES + SLOT_HEADER_BYTES + MAX_KERNEL_ARGS * 8;
}

/** Writes `text` as a slot's error message (truncated to fit). */
export function writeMessage(control: SharedArrayBuffer, w: number, text: string): void {
  const bytes = new TextEncoder().encode(text).subarray(0, ERROR_MESSAGE_BYTES);
  new Uint8Array(control, slotMessage(w), ERROR_MESSAGE_BYTES).set(bytes);
  Atomics.store(new Int32Array(control), slotInt(w) + SLOT.errorLength, bytes.length);
}

/** Reads a slot's error message. */
export function readMessage(control: SharedArrayBuffer, w: number): string {
  const length = Atomics.load(new Int32Array(control), slotInt(w) + SLOT.errorLength);
  // Copied out: TextDecoder refuses views of shared memory.
  return new TextDecoder().decode(new Uint8Array(control, slotMessage(w), length).slice());
}

/** What a worker is started with (structured-cloned: the module and the shared buffers are shared, not copied). */
export interface WorkerData {
  module: WasmModule;
  memory: WasmMemory;
  control: SharedArrayBuffer;
  /** This worker's slot (0-based). */
  index: number;
  /** Top of this worker's stack in the linear memory. */
  stackTop: number;
  /** Export names in kernel-index order. */
  kernels: readonly string[];
  /** How long an idle worker spins before it sleeps. */
  spinMicroseconds: number;
}
