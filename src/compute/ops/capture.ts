/**
 * `gpu.capture`: a function of GpuCompute ops recorded once and replayed with one launch (a CUDA
 * graph), for pipelines of many small ops whose host cost would otherwise dominate. Backends
 * without graphs run the function eagerly with the same checks, so code using it runs anywhere.
 *
 * Recording: the inputs are copied into tensors the capture owns (its input slots); the function
 * runs once eagerly on them (compiling and tuning what it uses, which a recording cannot do),
 * then once more with its work recorded on a private stream. The tensors it creates and does not
 * return are disposed as in `gpu.scope`; their memory stays reserved to the graph. A replay copies
 * the new inputs into the slots, launches the graph, and returns copies of the outputs.
 *
 * Autograd does not record inside a captured function (its graph is host state a replay would not
 * rebuild): an op that would record, because an input requires grad, throws CaptureError, as do
 * backward and gpu.grad; run the forward under gpu.noGrad (or on detached inputs) to capture it.
 */
import { CaptureError, DisposedError, InvalidArgumentError } from '../../errors.js';
import type { RecordedGraph } from '../backend/backend.js';
import { formatShape, sameShape } from '../core/shape.js';
import { describeValue } from '../core/validation.js';
import type { Session } from '../tensor/session.js';
import { Tensor, type TensorStorage } from '../tensor/tensor.js';
import { copy } from './creation.js';

/** What a captured function returns: a tensor, an array of tensors, or an object of named tensors. */
export type CaptureResult = Tensor | readonly Tensor[] | { readonly [name: string]: Tensor };

/** A function recorded by `gpu.capture`: call it with inputs of the example inputs' shapes and dtypes. */
export interface CapturedFunction<A extends Tensor[], R extends CaptureResult> {
  /** Replays with these inputs; returns new tensors (the caller disposes them). */
  (...inputs: A): R;
  /** True when calls replay a recorded graph; false where the backend has no graphs and runs the function eagerly. */
  readonly graphed: boolean;
  /** Pool bytes the graph holds for its intermediates, inputs and outputs (0 when eager). */
  readonly reservedBytes: number;
  /** True after {@link CapturedFunction.dispose}. */
  readonly disposed: boolean;
  /** Frees the graph and the memory reserved to it; later calls throw DisposedError. Idempotent. */
  dispose(): void;
  [Symbol.dispose](): void;
}

const OP = 'capture';

/** Records `fn` on the session's backend (see the module comment); eager where the backend has no graphs. */
export function capture<A extends Tensor[], R extends CaptureResult>(s: Session, fn: (...inputs: A) => R, exampleInputs: A): CapturedFunction<A, R> {
  s.assertLive();
  if (typeof fn !== 'function') throw new InvalidArgumentError(`${OP}: fn must be a function, got ${describeValue(fn)}`);
  if (!Array.isArray(exampleInputs)) throw new InvalidArgumentError(`${OP}: exampleInputs must be an array of tensors, got ${describeValue(exampleInputs)}`);
  exampleInputs.forEach((t, i) => s.checkTensor(OP, t, `exampleInputs[${i}]`));
  const signature: InputSignature[] = exampleInputs.map((t, i) => ({ name: `input ${i}`, shape: t.shape, dtype: t.dtype }));
  const checkInputs = (inputs: unknown[]): void => checkCallInputs(s, signature, inputs);
  const record = s.backend.recordGraph?.bind(s.backend);
  return record === undefined ? eager(s, fn, checkInputs) : recorded(s, fn, exampleInputs, checkInputs, record);
}

/** What a captured function's input must be: its example's shape and dtype (and its name in messages). */
interface InputSignature {
  readonly name: string;
  readonly shape: readonly number[];
  readonly dtype: string;
}

/**
 * Checks a call's inputs against the signature. Runs on every call, so a loop over the
 * signature's own names, without a closure or a name string per input.
 */
function checkCallInputs(s: Session, signature: readonly InputSignature[], inputs: unknown[]): void {
  if (inputs.length !== signature.length) {
    throw new CaptureError(`${OP}: the captured function takes ${signature.length} input${signature.length === 1 ? '' : 's'}, got ${inputs.length}`);
  }
  for (let i = 0; i < inputs.length; i++) {
    const t = inputs[i];
    const want = signature[i]!;
    s.checkTensor(OP, t, want.name);
    if (t.dtype !== want.dtype || !sameShape(t.shape, want.shape)) {
      throw new CaptureError(
        `${OP}: input ${i} is ${t.toString()} but was captured as ${want.dtype} ${formatShape(want.shape)}; ` +
          `a capture replays fixed shapes: capture again for new ones`,
      );
    }
  }
}

/** The backend has no graphs: each call runs `fn` in a scope, with the same checks. */
function eager<A extends Tensor[], R extends CaptureResult>(s: Session, fn: (...inputs: A) => R, checkInputs: (inputs: unknown[]) => void): CapturedFunction<A, R> {
  let disposed = false;
  const call = (...inputs: A): R => {
    if (disposed) throw new DisposedError('The captured function');
    checkInputs(inputs);
    const created = new Set<Tensor>();
    const result = s.gradMode.captured(() => s.scopes.run(OP, () => fn(...inputs), created));
    checkResult(result, created);
    return result;
  };
  return finish(call, false, () => 0, () => (disposed = true), () => disposed);
}

/** Records `fn` into a graph over input slots the capture owns. */
function recorded<A extends Tensor[], R extends CaptureResult>(
  s: Session,
  fn: (...inputs: A) => R,
  examples: A,
  checkInputs: (inputs: unknown[]) => void,
  record: (work: () => void) => RecordedGraph,
): CapturedFunction<A, R> {
  const slots = [] as Tensor[] as A;
  let held: Set<TensorStorage> | undefined;
  let outputs: R | undefined;
  let graph: RecordedGraph | undefined;
  const release = () => {
    graph?.dispose();
    if (outputs !== undefined) for (const t of tensorsOf(outputs)) t.dispose();
    for (const t of slots) t.dispose();
    if (held) for (const storage of held) storage.release();
  };
  try {
    for (const t of examples) {
      const slot = copy(s, t);
      s.scopes.keep(slot);
      slots.push(slot);
    }
    // The eager run compiles and tunes what the function uses, which a recording cannot.
    const created = new Set<Tensor>();
    const warm = s.gradMode.captured(() => s.scopes.run(OP, () => fn(...slots), created));
    checkResult(warm, created);
    for (const t of created) t.dispose();
    held = s.holdForCapture();
    const made = new Set<Tensor>();
    try {
      graph = record(() => {
        outputs = s.gradMode.captured(() => s.scopes.run(OP, () => fn(...slots), made));
      });
    } finally {
      s.endHoldForCapture();
    }
    checkResult(outputs!, made);
    for (const t of made) s.scopes.keep(t);
  } catch (err) {
    release();
    throw err;
  }
  const g = graph;
  const out = outputs!;
  let disposed = false;
  const call = (...inputs: A): R => {
    if (disposed) throw new DisposedError('The captured function');
    checkInputs(inputs);
    for (let i = 0; i < inputs.length; i++) if (inputs[i] !== slots[i]) s.backend.copy(slots[i]!.view, inputs[i]!.view);
    g.replay();
    return copyResult(s, out);
  };
  return finish(
    call,
    true,
    () => g.reservedBytes,
    () => {
      if (disposed) return;
      disposed = true;
      if (!s.disposed) release();
    },
    () => disposed,
  );
}

function finish<A extends Tensor[], R extends CaptureResult>(
  call: (...inputs: A) => R,
  graphed: boolean,
  reservedBytes: () => number,
  dispose: () => void,
  isDisposed: () => boolean,
): CapturedFunction<A, R> {
  return Object.defineProperties(call, {
    graphed: { value: graphed, enumerable: true },
    reservedBytes: { get: reservedBytes, enumerable: true },
    disposed: { get: isDisposed, enumerable: true },
    dispose: { value: dispose },
    [Symbol.dispose]: { value: dispose },
  }) as unknown as CapturedFunction<A, R>;
}

/** The result must be a tensor, an array or an object of tensors, each created by `fn`. */
function checkResult(result: unknown, created: ReadonlySet<Tensor>): void {
  const tensors = tensorsOf(result as CaptureResult, true);
  tensors.forEach((t) => {
    if (!created.has(t)) {
      throw new CaptureError(
        `${OP}: fn returned ${t.toString()}, which it did not create (an input or a tensor from outside); return an op's result, e.g. gpu.copy(x)`,
      );
    }
  });
}

/** The tensors of a result, in order; `strict` refuses anything else. */
function tensorsOf(result: CaptureResult, strict = false): Tensor[] {
  if (result instanceof Tensor) return [result];
  const values = Array.isArray(result)
    ? (result as unknown[])
    : result !== null && typeof result === 'object' && Object.getPrototypeOf(result) === Object.prototype
      ? Object.values(result)
      : undefined;
  if (values === undefined || (strict && values.some((v) => !(v instanceof Tensor)))) {
    if (!strict) return [];
    throw new CaptureError(`${OP}: fn must return a tensor, an array of tensors or an object of tensors, got ${describeValue(result)}`);
  }
  return values.filter((v): v is Tensor => v instanceof Tensor);
}

/**
 * `result` with each tensor replaced by a copy (a replay's outputs are the graph's own); the
 * copies are disposed again if one cannot be made. Loops, not map callbacks: it runs every call.
 */
function copyResult<R extends CaptureResult>(s: Session, result: R): R {
  if (result instanceof Tensor) return copy(s, result) as R;
  const made: Tensor[] = [];
  try {
    if (Array.isArray(result)) {
      for (let i = 0; i < result.length; i++) made.push(copy(s, result[i] as Tensor));
      return made as unknown as R;
    }
    const named: Record<string, Tensor> = {};
    const keys = Object.keys(result);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      const c = copy(s, (result as Record<string, Tensor>)[key]!);
      made.push(c);
      named[key] = c;
    }
    return named as R;
  } catch (err) {
    for (const t of made) t.dispose();
    throw err;
  }
}
