/**
 * The no-leak check: after an op throws, the pool must be back to where it was before the op
 * (bytes in use and live allocations), since anything left would only come back through the
 * garbage collector, with a warning about a tensor the user never made.
 *
 * {@link sweepFailures} makes an op fail at every point where it can: under a `poolLimitBytes`
 * swept from the op's need down to 0 (each step the first that refuses some allocation), at
 * each allocation in turn (an OutOfMemoryError injected into the n-th `alloc`), and at each
 * backend call in turn (a fault injected, as a GPU kernel fault or a failed read-back would
 * surface). After each failure the pool must be at its baseline and the GpuCompute still work.
 */
import { expect } from 'vitest';
import type { PoolStats } from '../../../src/compute/backend/backend.js';
import type { BackendKind } from '../../../src/compute/backends.js';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { Tensor } from '../../../src/compute/tensor/tensor.js';
import { OutOfMemoryError } from '../../../src/errors.js';

/** What an op case's inputs are: named tensors, made before the baseline is read. */
export type Inputs = Record<string, Tensor>;

/** One way of calling a public op. */
export interface OpCase {
  /** The public method it calls: a GpuCompute method, or `Tensor#name` for a tensor method. */
  method: string;
  /** What this case exercises, when a method has several. */
  label?: string;
  inputs(g: GpuCompute): Inputs;
  run(g: GpuCompute, t: Inputs): unknown;
}

/** `method (label)`, for test names. */
export function caseName(c: OpCase): string {
  return c.label ? `${c.method} (${c.label})` : c.method;
}

/** The fault injected into a backend call. */
export class InjectedFault extends Error {
  constructor(readonly call: string) {
    super(`injected fault in backend.${call}`);
  }
}

/** Every tensor reachable in an op's result (a tensor, an array or an object of them). */
export function tensorsIn(result: unknown): Tensor[] {
  if (result instanceof Tensor) return [result];
  if (Array.isArray(result)) return result.flatMap(tensorsIn);
  if (typeof result === 'object' && result !== null) return Object.values(result).flatMap(tensorsIn);
  return [];
}

function usage(g: GpuCompute): Pick<PoolStats, 'inUseBytes' | 'allocations'> {
  const { inUseBytes, allocations } = g.memoryStats();
  return { inUseBytes, allocations };
}

/**
 * Runs `fn`, which must throw; returns the error after checking the pool is back at its
 * baseline (no tensor of the failed op left alive).
 */
export function expectThrowsWithoutLeak(g: GpuCompute, fn: () => unknown, label: string): unknown {
  const before = usage(g);
  let error: unknown;
  let result: unknown;
  try {
    result = fn();
  } catch (err) {
    error = err;
  }
  if (error === undefined) {
    for (const t of tensorsIn(result)) t.dispose();
    expect.fail(`${label}: expected a throw, got a result`);
  }
  expect(usage(g), `${label}: pool after the failure (${String(error)})`).toEqual(before);
  return error;
}

/** Runs `fn` and disposes its result; the pool must be back at its baseline after. */
export function expectBalanced(g: GpuCompute, fn: () => unknown, label: string): void {
  const before = usage(g);
  for (const t of tensorsIn(fn())) t.dispose();
  expect(usage(g), `${label}: pool after disposing the result`).toEqual(before);
}

/** Backend members that are not calls an op makes into the device (queries, bookkeeping). */
const NOT_OP_CALLS = new Set(['constructor', 'alloc', 'free', 'info', 'memoryStats', 'dispose', 'denseLinalg', 'currentStream', 'createStream', 'kind', 'unsupported']);

/** The backend's op calls (its methods, own and inherited, less bookkeeping). */
function opCallNames(backend: object): string[] {
  const names = new Set<string>();
  for (let o: object | null = backend; o && o !== Object.prototype; o = Object.getPrototypeOf(o) as object | null) {
    for (const name of Object.getOwnPropertyNames(o)) {
      if (!NOT_OP_CALLS.has(name) && typeof (backend as Record<string, unknown>)[name] === 'function') names.add(name);
    }
  }
  return [...names];
}

/**
 * Replaces the backend's `alloc` and op calls with counting wrappers; `onAlloc` and `onCall`
 * may throw to inject a failure. Returns the function that restores the backend.
 */
function instrument(
  g: GpuCompute,
  onAlloc: (bytes: number, index: number) => void,
  onCall: (name: string, index: number) => void,
): () => void {
  const backend = g.backend as unknown as Record<string, unknown>;
  const originals = new Map<string, unknown>();
  let allocs = 0;
  let calls = 0;
  const alloc = backend.alloc as (bytes: number) => unknown;
  originals.set('alloc', Object.getOwnPropertyDescriptor(backend, 'alloc'));
  backend.alloc = (bytes: number) => {
    onAlloc(bytes, allocs++);
    return alloc.call(backend, bytes);
  };
  for (const name of opCallNames(backend)) {
    const original = backend[name] as (...args: unknown[]) => unknown;
    originals.set(name, Object.getOwnPropertyDescriptor(backend, name));
    backend[name] = (...args: unknown[]) => {
      onCall(name, calls++);
      return original.apply(backend, args);
    };
  }
  return () => {
    for (const [name, descriptor] of originals) {
      if (descriptor) Object.defineProperty(backend, name, descriptor as PropertyDescriptor);
      else delete backend[name];
    }
  };
}

/** The backend op calls `fn` makes (it may throw; the error is returned, not thrown). */
export function backendCallsDuring(g: GpuCompute, fn: () => unknown): { calls: string[]; error: unknown; result: unknown } {
  const calls: string[] = [];
  const restore = instrument(g, () => {}, (name) => calls.push(name));
  try {
    return { calls, error: undefined, result: fn() };
  } catch (error) {
    return { calls, error, result: undefined };
  } finally {
    restore();
  }
}

/** How a successful run of an op allocates and calls the backend. */
interface Trace {
  /** For each allocation, the pool budget above the baseline it needs (bytes in use after it). */
  needs: number[];
  /** Backend op calls, in order. */
  calls: string[];
}

function trace(g: GpuCompute, c: OpCase, t: Inputs): Trace {
  const base = g.memoryStats().inUseBytes;
  const needs: number[] = [];
  const calls: string[] = [];
  const restore = instrument(
    g,
    (bytes) => needs.push(g.memoryStats().inUseBytes + bytes - base),
    (name) => calls.push(name),
  );
  try {
    expectBalanced(g, () => c.run(g, t), caseName(c));
  } finally {
    restore();
  }
  return { needs, calls };
}

/**
 * The trace of a run in the steady state. A GPU backend's first runs of a shape differ from the
 * later ones (they tune kernels, then capture a graph), so the n-th call of the sweep's runs
 * would not be the traced n-th call; runs repeat until two in a row make the same calls.
 */
function steadyTrace(g: GpuCompute, c: OpCase, t: Inputs): Trace {
  let previous = trace(g, c, t);
  for (let run = 0; run < 4; run++) {
    const next = trace(g, c, t);
    if (next.calls.join() === previous.calls.join() && next.needs.join() === previous.needs.join()) return next;
    previous = next;
  }
  throw new Error(`${caseName(c)}: its backend calls still differ after 5 runs`);
}

/**
 * The budgets (bytes above the inputs) to sweep poolLimitBytes over: for every allocation that
 * needs more than all before it, one byte less than it needs, so that allocation is the first
 * refused; and 0.
 */
export function limitSteps(needs: readonly number[]): number[] {
  const steps = new Set<number>([0]);
  let highest = 0;
  for (const need of needs) {
    if (need > highest) steps.add(need - 1);
    highest = Math.max(highest, need);
  }
  return [...steps].sort((a, b) => b - a);
}

/** What {@link sweepFailures} exercised, for the test's report. */
export interface SweepReport {
  allocations: number;
  calls: number;
  limits: number;
  /** Injections that never fired because the run made fewer calls than the trace. */
  missed: number;
}

/**
 * Makes `c` fail at every point it can (see the file comment) on a GpuCompute of `backend` and
 * checks each failure leaves nothing behind. `limits: false` leaves out the poolLimitBytes sweep
 * (for pools that round sizes up, where the byte-exact steps do not apply).
 */
export async function sweepFailures(c: OpCase, backend: BackendKind = 'cpu', limits = true): Promise<SweepReport> {
  const name = caseName(c);
  const g = await GpuCompute.create({ backend, logLevel: 'silent' });
  try {
    const t = c.inputs(g);
    const inputsBytes = g.memoryStats().inUseBytes;
    const { needs, calls } = steadyTrace(g, c, t);

    let missed = 0;
    /** Runs the case with `inject` armed; a fired injection must fail the op, and the pool must balance either way. */
    const expectInjected = (label: string, expected: new (...args: never[]) => Error, inject: (fire: () => void) => () => void) => {
      let fired = false;
      const restore = inject(() => {
        fired = true;
      });
      try {
        const before = usage(g);
        let error: unknown;
        try {
          for (const x of tensorsIn(c.run(g, t))) x.dispose();
        } catch (err) {
          error = err;
        }
        expect(usage(g), `${label}: pool after the run (${String(error)})`).toEqual(before);
        if (fired) expect(error, label).toBeInstanceOf(expected);
        else {
          // The run took a shorter path than the trace (a GPU backend's graph cache is keyed by addresses).
          expect(error, `${label}: nothing was injected`).toBeUndefined();
          missed++;
        }
      } finally {
        restore();
      }
    };
    for (let n = 0; n < needs.length; n++) {
      expectInjected(`${name}, allocation ${n + 1} of ${needs.length} refused`, OutOfMemoryError, (fire) =>
        instrument(
          g,
          (bytes, index) => {
            if (index !== n) return;
            fire();
            throw new OutOfMemoryError({ requestedBytes: bytes, inUseBytes: g.memoryStats().inUseBytes });
          },
          () => {},
        ),
      );
    }
    for (let n = 0; n < calls.length; n++) {
      expectInjected(`${name}, backend call ${n + 1} of ${calls.length} (${calls[n]}) failed`, InjectedFault, (fire) =>
        instrument(
          g,
          () => {},
          (call, index) => {
            if (index !== n) return;
            fire();
            throw new InjectedFault(call);
          },
        ),
      );
    }
    // Still usable after all of that.
    expectBalanced(g, () => c.run(g, t), `${name} after the injected failures`);

    const steps = limits ? limitSteps(needs) : [];
    for (const budget of steps) {
      // At least 4 bytes, so the valid op after the failure (one f32) fits once the inputs are gone.
      const limited = await GpuCompute.create({ backend, logLevel: 'silent', poolLimitBytes: Math.max(4, inputsBytes + budget) });
      try {
        const lt = c.inputs(limited);
        const err = expectThrowsWithoutLeak(limited, () => c.run(limited, lt), `${name} under poolLimitBytes = inputs + ${budget}`);
        expect(err, `${name} under inputs + ${budget}`).toBeInstanceOf(OutOfMemoryError);
        expect((err as Error).message, `${name}: the error names the op`).toMatch(/^[\w.]+: a \w+ tensor of shape \[/);
        for (const x of Object.values(lt)) x.dispose();
        expectBalanced(limited, () => limited.zeros([1]), `${name}: a valid op after the failure`);
        expect(limited.memoryStats().inUseBytes).toBe(0);
      } finally {
        limited.dispose();
      }
    }
    for (const x of Object.values(t)) x.dispose();
    expect(g.memoryStats().inUseBytes, `${name}: the pool is empty once the inputs are gone`).toBe(0);
    return { allocations: needs.length, calls: calls.length, limits: steps.length, missed };
  } finally {
    g.dispose();
  }
}
