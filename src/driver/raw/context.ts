import { cuda } from '../bindings.js';
import { check } from '../cuda-error.js';
import type { ContextLimit } from '../generated/enums.js';
import type { CUcontext, CUdevice } from './handles.js';
import { out } from './out-params.js';

/**
 * The context this thread last made current through these functions, or
 * undefined when unknown (after a pop). Each JS thread (main, workers) has its
 * own module instance and its own OS thread, so the record is per thread like
 * the driver's. Calls made behind this module's back (another library on the
 * same thread) make it stale: call {@link ctxGetCurrent} to resynchronise.
 */
let lastCurrent: CUcontext | undefined;

/** cuDevicePrimaryCtxRetain: retains (creating on first use) the device's primary context. */
export function devicePrimaryCtxRetain(dev: CUdevice): CUcontext {
  check(cuda.cuDevicePrimaryCtxRetain(out.handle, dev), 'cuDevicePrimaryCtxRetain');
  return out.handle[0]!;
}

/** cuDevicePrimaryCtxRelease_v2: drops one retain; the context is destroyed at zero. */
export function devicePrimaryCtxRelease(dev: CUdevice): void {
  check(cuda.cuDevicePrimaryCtxRelease_v2(dev), 'cuDevicePrimaryCtxRelease_v2');
}

/** cuDevicePrimaryCtxSetFlags_v2: scheduling and other CUctx_flags of the primary context. */
export function devicePrimaryCtxSetFlags(dev: CUdevice, flags: number): void {
  check(cuda.cuDevicePrimaryCtxSetFlags_v2(dev, flags), 'cuDevicePrimaryCtxSetFlags_v2');
}

/** cuDevicePrimaryCtxGetState: the primary context's flags and whether it is active. */
export function devicePrimaryCtxGetState(dev: CUdevice): { flags: number; active: boolean } {
  check(cuda.cuDevicePrimaryCtxGetState(dev, out.u32, out.i32), 'cuDevicePrimaryCtxGetState');
  return { flags: out.u32[0]!, active: out.i32[0] !== 0 };
}

/** cuDevicePrimaryCtxReset_v2: destroys the primary context's resources now (all of them, for every user). */
export function devicePrimaryCtxReset(dev: CUdevice): void {
  check(cuda.cuDevicePrimaryCtxReset_v2(dev), 'cuDevicePrimaryCtxReset_v2');
  lastCurrent = undefined;
}

/** cuCtxGetCurrent: the calling thread's current context, 0n when none. */
export function ctxGetCurrent(): CUcontext {
  check(cuda.cuCtxGetCurrent(out.handle), 'cuCtxGetCurrent');
  lastCurrent = out.handle[0]!;
  return lastCurrent;
}

/** cuCtxSetCurrent: binds `ctx` to the calling thread (0n unbinds). */
export function ctxSetCurrent(ctx: CUcontext): void {
  check(cuda.cuCtxSetCurrent(ctx), 'cuCtxSetCurrent');
  lastCurrent = ctx;
}

/**
 * Makes `ctx` current unless it already is by this module's record: the
 * cheap check the safe tier does before each call that needs a context.
 */
export function ensureCurrent(ctx: CUcontext): void {
  if (lastCurrent !== ctx) ctxSetCurrent(ctx);
}

/**
 * Forgets which context is current, after a call into a library that may change it behind this
 * module's back (NCCL switches devices as it launches): the next {@link ensureCurrent} sets it
 * again, without asking the driver now.
 */
export function forgetCurrentContext(): void {
  lastCurrent = undefined;
}

/** The context this module last made current on this thread (undefined when unknown). */
export function lastCurrentContext(): CUcontext | undefined {
  return lastCurrent;
}

/** cuCtxPushCurrent_v2: pushes `ctx` on the thread's context stack. */
export function ctxPushCurrent(ctx: CUcontext): void {
  check(cuda.cuCtxPushCurrent_v2(ctx), 'cuCtxPushCurrent_v2');
  lastCurrent = ctx;
}

/** cuCtxPopCurrent_v2: pops the thread's current context and returns it. */
export function ctxPopCurrent(): CUcontext {
  lastCurrent = undefined;
  check(cuda.cuCtxPopCurrent_v2(out.handle), 'cuCtxPopCurrent_v2');
  return out.handle[0]!;
}

/** cuCtxGetDevice: the device of the current context. */
export function ctxGetDevice(): CUdevice {
  check(cuda.cuCtxGetDevice(out.i32), 'cuCtxGetDevice');
  return out.i32[0]!;
}

/** cuCtxSynchronize: waits for all work in the current context. */
export function ctxSynchronize(): void {
  check(cuda.cuCtxSynchronize(), 'cuCtxSynchronize');
}

/** cuCtxGetStreamPriorityRange: stream priorities run from `least` (e.g. 0) down to `greatest` (e.g. -5). */
export function ctxGetStreamPriorityRange(): { least: number; greatest: number } {
  check(cuda.cuCtxGetStreamPriorityRange(out.i32, out.i32b), 'cuCtxGetStreamPriorityRange');
  return { least: out.i32[0]!, greatest: out.i32b[0]! };
}

/** cuCtxGetLimit: one CUlimit of the current context. */
export function ctxGetLimit(limit: ContextLimit): number {
  check(cuda.cuCtxGetLimit(out.u64, limit), 'cuCtxGetLimit');
  return Number(out.u64[0]!);
}

/** cuCtxSetLimit: sets one CUlimit of the current context. */
export function ctxSetLimit(limit: ContextLimit, value: number): void {
  check(cuda.cuCtxSetLimit(limit, value), 'cuCtxSetLimit');
}

/** cuCtxGetApiVersion: the API version the context was created with (e.g. 3020). */
export function ctxGetApiVersion(ctx: CUcontext): number {
  check(cuda.cuCtxGetApiVersion(ctx, out.u32), 'cuCtxGetApiVersion');
  return out.u32[0]!;
}

/** cuMemGetInfo_v2: free and total device memory of the current context's device, in bytes. */
export function memGetInfo(): { free: number; total: number } {
  check(cuda.cuMemGetInfo_v2(out.u64, out.u64b), 'cuMemGetInfo_v2');
  return { free: Number(out.u64[0]!), total: Number(out.u64b[0]!) };
}
