/**
 * Every public method refuses what it cannot take, before the backend runs, with a typed error
 * that names the op and the argument, and leaves nothing allocated. Driven by the table in
 * `refusals.ts` (see its comment for what each spec makes the test try).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { Tensor } from '../../../src/compute/tensor/tensor.js';
import { DisposedError, InvalidArgumentError } from '../../../src/errors.js';
import { PUBLIC_METHODS } from './api-surface.js';
import { backendCallsDuring, tensorsIn } from './leak-check.js';
import { SPECS, type Arg, type Fixtures, type MethodSpec } from './refusals.js';
import { filled } from './op-cases.js';

let g: GpuCompute;
let other: GpuCompute;
let f: Fixtures;

function fixtures(on: GpuCompute): Fixtures {
  return {
    x: filled(on, [2, 3]),
    y: filled(on, [2, 3], 2),
    xi: on.tensor(Int32Array.from([1, 2, 3, 4, 5, 6]), [2, 3]),
    row: filled(on, [3], 3),
    square: filled(on, [3, 3], 4),
    q: filled(on, [2, 2, 3, 4], 5),
    kv: filled(on, [2, 1, 5, 4], 6),
    lengths: on.tensor(Int32Array.from([5, 2])),
    seq: filled(on, [2, 4, 3], 7),
    h: filled(on, [2, 5], 8),
    wIh: filled(on, [15, 3], 9),
    wHh: filled(on, [15, 5], 10),
    b: filled(on, [15], 11),
    lnW: filled(on, [5], 12),
    proj: filled(on, [3, 5], 13),
    projB: filled(on, [3], 14),
    wHhWide: filled(on, [15, 6], 15),
    wIh16: filled(on, [15, 3], 16, 'f16'),
    ...graph(on),
  };
}

/** A leaf that requires grad and a loss over it, for the backward specs. */
function graph(on: GpuCompute): Pick<Fixtures, 'leaf' | 'loss' | 'one'> {
  const leaf = filled(on, [2, 3], 17).requiresGrad_();
  const loss = on.scope(() => on.sum(on.mul(leaf, leaf)));
  return { leaf, loss, one: on.ones([]) };
}

beforeAll(async () => {
  g = await GpuCompute.create({ backend: 'cpu', logLevel: 'silent' });
  other = await GpuCompute.create({ backend: 'cpu', logLevel: 'silent' });
  f = fixtures(g);
});
afterAll(() => {
  g.dispose();
  other.dispose();
});

const passThrough: Arg = (_name, value) => value;

/** The error `fn` throws or rejects with (undefined when it succeeds; its result is then disposed). */
async function outcome(fn: () => unknown): Promise<unknown> {
  try {
    const result = await fn();
    for (const t of tensorsIn(result)) t.dispose();
    return undefined;
  } catch (err) {
    return err;
  }
}

function usage(on: GpuCompute) {
  const { inUseBytes, allocations } = on.memoryStats();
  return { inUseBytes, allocations };
}

/**
 * Runs a call that must be refused: the error's class and message, nothing left allocated, and
 * (unless `runsBackend`) no backend op called on the way.
 */
async function expectRefused(
  label: string,
  fn: () => unknown,
  error: abstract new (...args: never[]) => Error,
  message: RegExp,
  runsBackend = false,
): Promise<void> {
  const before = usage(g);
  // Synchronous calls are watched for backend calls; a promise is awaited after.
  const watched = backendCallsDuring(g, fn);
  const err = watched.error ?? (await outcome(() => watched.result));
  if (err === undefined) for (const t of tensorsIn(watched.result)) t.dispose();
  expect(err, `${label}: expected ${error.name}`).toBeInstanceOf(error);
  expect((err as Error).message, label).toMatch(message);
  expect(usage(g), `${label}: nothing left allocated`).toEqual(before);
  if (!runsBackend) expect(watched.calls, `${label}: refused before any backend call`).toEqual([]);
}

/** The arguments a spec's valid call passes through `arg`, by name. */
function recordArgs(spec: MethodSpec): Map<string, unknown> {
  const seen = new Map<string, unknown>();
  const arg: Arg = (name, value) => {
    seen.set(name, value);
    return value;
  };
  const result = spec.call(g, f, arg);
  if (result instanceof Promise) result.catch(() => undefined);
  for (const t of tensorsIn(result)) t.dispose();
  return seen;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A misspelling of `key` that is still nearest to it. */
function typo(key: string): string {
  return key.length >= 4 ? `${key[0]}${key[1] === 'x' ? 'y' : 'x'}${key.slice(2)}` : key.toUpperCase();
}

describe('every public method refuses what it cannot take', () => {
  it('has a spec for every public method, and no spec for a method that does not exist', () => {
    expect(PUBLIC_METHODS.filter((m) => !(m in SPECS))).toEqual([]);
    expect(Object.keys(SPECS).filter((m) => !PUBLIC_METHODS.includes(m))).toEqual([]);
  });

  it('has a bad value for every key of every options object', () => {
    for (const [method, spec] of Object.entries(SPECS)) {
      for (const [name, o] of Object.entries(spec.options ?? {})) {
        expect(Object.keys(o.bad).sort(), `${method}: ${name}`).toEqual([...o.keys].sort());
      }
    }
  });

  for (const [method, spec] of Object.entries(SPECS)) {
    const op = spec.op ?? method;
    describe(method, () => {
      it('takes a valid call and leaves the pool balanced', async () => {
        const before = usage(g);
        expect(await outcome(() => spec.call(g, f, passThrough))).toBeUndefined();
        expect(usage(g)).toEqual(before);
      });

      it('refuses each tensor argument that is not a live tensor of this GpuCompute', async () => {
        for (const [name, value] of recordArgs(spec)) {
          if (!(value instanceof Tensor)) continue;
          const swap = (replacement: unknown): Arg => (n, v) => (n === name ? (replacement as typeof v) : v);
          const dead = g.zeros(value.shape, value.dtype);
          dead.dispose();
          const receiverMessage = /Tensor\(\w+ \[[\d, ]*\]\) has been disposed/;
          const opMessage = new RegExp(`^${escape(op)}: ${escape(name)} Tensor\\(\\w+ \\[[\\d, ]*\\]\\) has been disposed`);
          const isReceiver = name === spec.receiver;
          const ownsReceiverCheck = isReceiver && /^(reshape|toArray|toArraySync|toRawArray|toRawArraySync|assertLive)$/.test(op);
          await expectRefused(`${method}: ${name} disposed`, () => spec.call(g, f, swap(dead)), DisposedError, ownsReceiverCheck ? receiverMessage : opMessage);
          if (isReceiver) continue;
          const mustBe = new RegExp(`^${escape(op)}: ${escape(name)} must be `);
          await expectRefused(`${method}: ${name} a Float32Array`, () => spec.call(g, f, swap(new Float32Array(2))), InvalidArgumentError, mustBe);
          if (!spec.optional?.includes(name)) {
            await expectRefused(`${method}: ${name} undefined`, () => spec.call(g, f, swap(undefined)), InvalidArgumentError, mustBe);
          }
          using foreign = other.zeros(value.shape, value.dtype);
          await expectRefused(
            `${method}: ${name} of another GpuCompute`,
            () => spec.call(g, f, swap(foreign)),
            InvalidArgumentError,
            new RegExp(`^${escape(op)}: ${escape(name)} Tensor\\(.*\\) belongs to another GpuCompute`),
          );
        }
      });

      if (spec.options) {
        it('refuses options objects it cannot take, and every key with a bad value', async () => {
          const args = recordArgs(spec);
          for (const [name, o] of Object.entries(spec.options!)) {
            expect(args.has(name), `${method}: the valid call passes ${name} through arg()`).toBe(true);
            const valid = args.get(name) as Record<string, unknown>;
            const swap = (replacement: unknown): Arg => (n, v) => (n === name ? (replacement as typeof v) : v);
            const notAnObject = new RegExp(`^${escape(op)}: .*${escape(name)}.*(must be an object|required|at least one layer|not a stack)`);
            const bads = [['null', null], ['an array', []], ['a Tensor', f.x], ...(o.orNumber ? [] : [['a number', 7]])] as const;
            for (const [label, bad] of bads) {
              await expectRefused(`${method}: ${name} ${label}`, () => spec.call(g, f, swap(bad)), InvalidArgumentError, notAnObject);
            }
            for (const key of o.keys) {
              const misspelt = typo(key);
              await expectRefused(
                `${method}: ${name}.${misspelt}`,
                () => spec.call(g, f, swap({ ...valid, [misspelt]: valid[key] ?? 1 })),
                InvalidArgumentError,
                new RegExp(`^${escape(op)}: unknown option (${escape(name)}\\.)?${escape(misspelt)}; did you mean '${escape(key)}'\\?`),
              );
              const [value, message] = o.bad[key]!;
              await expectRefused(`${method}: ${name}.${key} = ${String(value)}`, () => spec.call(g, f, swap({ ...valid, [key]: value })), InvalidArgumentError, message);
              expect(
                await outcome(() => spec.call(g, f, swap({ ...valid, [key]: value }))),
                `${method}: ${name}.${key}: the message names the op`,
              ).toHaveProperty('message', expect.stringMatching(new RegExp(`^${escape(op)}: `)));
            }
          }
        });
      }

      for (const bad of spec.bad ?? []) {
        it(`refuses ${bad.label}`, async () => {
          await expectRefused(`${method}: ${bad.label}`, () => bad.call(g, f), bad.error, bad.message, bad.runsBackend);
        });
      }

      if (!['dispose', 'Tensor#dispose', 'Tensor#toString'].includes(method) && !method.startsWith('GpuCompute.')) {
        it('refuses a call once its GpuCompute is disposed', async () => {
          const gone = await GpuCompute.create({ backend: 'cpu', logLevel: 'silent' });
          const fd = fixtures(gone);
          gone.dispose();
          const err = await outcome(() => spec.call(gone, fd, passThrough));
          expect(err).toBeInstanceOf(DisposedError);
          expect((err as Error).message).toMatch(/GpuCompute.* has been disposed/);
        });
      }
    });
  }
});
