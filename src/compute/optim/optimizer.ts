/**
 * What SGD and AdamW share: parameter groups with options of their own, f32 state per parameter
 * made on its first step, the step as one backend call per group and dtype (the fused kernel on
 * CUDA and HIP, composed ops elsewhere, with the same numbers: `core/optimizer-params.ts`),
 * gradients reset, and the state saved to host arrays and loaded back.
 */
import { CaptureError, DisposedError, InvalidArgumentError } from '../../errors.js';
import type { OptimizerStepParams } from '../core/optimizer-params.js';
import { describeValue } from '../core/validation.js';
import { full, tensor } from '../ops/creation.js';
import { Session } from '../tensor/session.js';
import { Tensor } from '../tensor/tensor.js';

/** A group of parameters and the options they share (PyTorch's `param_groups`). */
export interface ParamGroup<O> {
  readonly params: readonly Tensor[];
  /** Every option, resolved; change them between steps (a learning-rate schedule): each step checks them. */
  readonly options: O;
}

/** Parameters as an optimizer takes them: tensors, or groups of tensors with options of their own (the rest from the optimizer's). */
export type OptimizerParams<O> = readonly Tensor[] | readonly ({ params: readonly Tensor[] } & Partial<O>)[];

/** One parameter's state as `stateDict` gives it: its step count and its f32 buffers by name. */
export type ParamStateDict = { step: number } & { [buffer: string]: number | Float32Array };

/**
 * An optimizer's state on the host, plain numbers and Float32Arrays: per parameter (by its index
 * over the groups, in order; a parameter that never stepped has none), and each group's options
 * with its parameters' indices.
 */
export interface OptimizerStateDict {
  state: Record<number, ParamStateDict>;
  paramGroups: ({ params: number[] } & Record<string, number | boolean | number[]>)[];
}

/** What an optimizer keeps per parameter: its step count and f32 buffers by name. */
interface ParamState {
  step: number;
  buffers: Map<string, Tensor>;
}

/** A parameter as a rule sees it for one step. */
export interface StepEntry {
  readonly param: Tensor;
  readonly grad: Tensor;
  /** The state's buffers, in the rule's order. */
  readonly state: readonly Tensor[];
  /** Its buffers were made for this step (its first step with them). */
  readonly fresh: boolean;
  /** The step this is for the parameter (1 for its first). */
  readonly t: number;
}

/** Checks options in the name of `op`, filling what they leave out from `base` (the rule's defaults when none). */
export type ResolveOptions<O> = (op: string, options: unknown, base?: O) => O;

export abstract class Optimizer<O extends object> {
  /** The groups, in the order given. */
  readonly paramGroups: readonly ParamGroup<O>[];
  readonly #name: string;
  readonly #resolve: ResolveOptions<O>;
  readonly #session: Session;
  readonly #state = new Map<Tensor, ParamState>();
  #disposed = false;

  /** `name` is the class's ('SGD', 'AdamW'), for messages; `keys` the option keys a group may set. */
  protected constructor(name: string, params: unknown, options: unknown, keys: readonly string[], resolve: ResolveOptions<O>) {
    this.#name = name;
    this.#resolve = resolve;
    const defaults = resolve(name, options);
    if (!Array.isArray(params) || params.length === 0) {
      throw new InvalidArgumentError(`${name}: params must be a non-empty array of tensors or of parameter groups { params, ...options }, got ${describeValue(params)}`);
    }
    const grouped = !params.some((p) => p instanceof Tensor);
    const groups: unknown[] = grouped ? params : [{ params }];
    const first = groups.flatMap((g) => (g !== null && typeof g === 'object' && Array.isArray((g as { params?: unknown }).params) ? (g as { params: unknown[] }).params : [])).find((t) => t instanceof Tensor);
    if (!(first instanceof Tensor) || !(first.owner instanceof Session)) {
      throw new InvalidArgumentError(`${name}: params must hold tensors of a GpuCompute, got ${describeValue(params)}`);
    }
    this.#session = first.owner;
    const seen = new Set<Tensor>();
    this.paramGroups = groups.map((group, g) => {
      const where = grouped ? `params[${g}]` : 'params';
      if (group === null || typeof group !== 'object' || Array.isArray(group) || group instanceof Tensor) {
        throw new InvalidArgumentError(`${name}: ${where} must be a parameter group { params, ...options }, got ${describeValue(group)}`);
      }
      const { params: tensors, ...own } = group as { params?: unknown };
      const unknown = Object.keys(own).find((key) => !keys.includes(key));
      if (unknown !== undefined) throw new InvalidArgumentError(`${name}: unknown option ${where}.${unknown} (a group takes params, ${keys.join(', ')})`);
      if (!Array.isArray(tensors) || tensors.length === 0) {
        throw new InvalidArgumentError(`${name}: ${where}.params must be a non-empty array of tensors, got ${describeValue(tensors)}`);
      }
      const checked = tensors.map((t: unknown, i) => {
        const label = grouped ? `${where}.params[${i}]` : `params[${i}]`;
        this.#session.checkFloat(name, t, label);
        if (t.origin !== undefined) {
          throw new InvalidArgumentError(`${name}: ${label} ${t.toString()} is the result of a recorded op, not a leaf; optimize the leaves it was computed from`);
        }
        if (seen.has(t)) throw new InvalidArgumentError(`${name}: ${label} ${t.toString()} is given twice`);
        seen.add(t);
        return t;
      });
      return { params: checked, options: resolve(`${name}: ${where}`, own, defaults) };
    });
  }

  /**
   * Updates every parameter that has a gradient, in place (one without is left alone), by its
   * group's options. Refused inside a captured function: a step's scalars change from step to
   * step, which a replayed graph would not see.
   */
  step(): void {
    const op = `${this.#name}.step`;
    this.#checkLive(op);
    if (this.#session.gradMode.capturing) {
      throw new CaptureError(`capture: ${op} cannot be recorded in a graph (its scalars change every step); run it outside gpu.capture`);
    }
    const groups = this.paramGroups.map((group, g) => {
      group.params.forEach((p, i) => this.#session.checkTensor(op, p, `paramGroups[${g}].params[${i}]`));
      return { options: this.#resolve(`${op}: paramGroups[${g}].options`, group.options), params: group.params.filter((p) => p.grad !== undefined) };
    });
    const plans = this.#prepare(op, groups);
    groups.forEach(({ options }, g) => {
      const entries = plans[g]!;
      for (const dtype of new Set(entries.map((e) => e.param.dtype))) {
        const same = entries.filter((e) => e.param.dtype === dtype);
        this.#session.backend.optimizerStep(this.stepParams(options, same));
        for (const e of same) {
          this.#state.get(e.param)!.step = e.t;
          e.param.sharedStorage.version++;
        }
      }
    });
  }

  /** Disposes every parameter's gradient (PyTorch's `zero_grad()`, which sets them to None). */
  zeroGrad(): void {
    this.#checkLive(`${this.#name}.zeroGrad`);
    for (const group of this.paramGroups) for (const p of group.params) if (!p.disposed) p.zeroGrad();
  }

  /** The state on the host (reads the device). */
  stateDict(): OptimizerStateDict {
    this.#checkLive(`${this.#name}.stateDict`);
    const state: Record<number, ParamStateDict> = {};
    let index = 0;
    const paramGroups = this.paramGroups.map((group) => {
      const params = group.params.map((p) => {
        const s = this.#state.get(p);
        if (s !== undefined) {
          const entry: ParamStateDict = { step: s.step };
          for (const [name, t] of s.buffers) entry[name] = t.toArraySync() as Float32Array;
          state[index] = entry;
        }
        return index++;
      });
      return { params, ...this.optionsDict(group.options) };
    });
    return { state, paramGroups };
  }

  /**
   * Replaces the state and the groups' options with those of `dict`, as `stateDict` gave them for
   * the same parameters in the same groups. Everything is checked before anything changes.
   */
  loadStateDict(dict: unknown): void {
    const op = `${this.#name}.loadStateDict`;
    this.#checkLive(op);
    if (dict === null || typeof dict !== 'object' || Array.isArray(dict)) throw new InvalidArgumentError(`${op}: dict must be an object { state, paramGroups }, got ${describeValue(dict)}`);
    const { state, paramGroups, ...rest } = dict as Partial<OptimizerStateDict>;
    const extra = Object.keys(rest)[0];
    if (extra !== undefined) throw new InvalidArgumentError(`${op}: unknown key ${extra} (a state dict has state and paramGroups)`);
    if (!Array.isArray(paramGroups) || paramGroups.length !== this.paramGroups.length) {
      throw new InvalidArgumentError(`${op}: paramGroups must be an array of ${this.paramGroups.length} group(s), got ${describeValue(paramGroups)}`);
    }
    let index = 0;
    const options = paramGroups.map((group: unknown, g) => {
      const where = `paramGroups[${g}]`;
      if (group === null || typeof group !== 'object' || Array.isArray(group)) throw new InvalidArgumentError(`${op}: ${where} must be an object { params, ...options }, got ${describeValue(group)}`);
      const { params: indices, ...own } = group as { params?: unknown };
      const want = this.paramGroups[g]!.params.map(() => index++);
      if (!Array.isArray(indices) || indices.length !== want.length || indices.some((v, i) => v !== want[i])) {
        throw new InvalidArgumentError(`${op}: ${where}.params must be [${want.join(', ')}] (this optimizer's parameters of that group), got ${describeValue(indices)}`);
      }
      return this.#resolve(`${op}: ${where}`, own);
    });
    if (state === null || typeof state !== 'object' || Array.isArray(state)) {
      throw new InvalidArgumentError(`${op}: state must be an object of parameter states by index, got ${describeValue(state)}`);
    }
    const params = this.paramGroups.flatMap((group, g) => group.params.map((param) => ({ param, names: this.stateNames(options[g]!) })));
    const loaded = new Map<Tensor, ParamState>();
    try {
      for (const [key, entry] of Object.entries(state)) this.#loadEntry(op, key, entry, params, loaded);
    } catch (err) {
      for (const s of loaded.values()) for (const t of s.buffers.values()) t.dispose();
      throw err;
    }
    this.#releaseState();
    for (const [param, s] of loaded) this.#state.set(param, s);
    this.paramGroups.forEach((group, g) => Object.assign(group.options, options[g]));
  }

  /** Frees the state; later calls throw DisposedError. Idempotent. */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#releaseState();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  /** The names of the f32 buffers each parameter keeps under `options`, in the rule's order. */
  protected abstract stateNames(options: O): readonly string[];
  /** `options` as plain numbers, booleans and arrays (what `stateDict` gives). */
  protected abstract optionsDict(options: O): Record<string, number | boolean | number[]>;
  /** The backend's step for parameters of one group and one dtype. */
  protected abstract stepParams(options: O, entries: readonly StepEntry[]): OptimizerStepParams;

  /** Each group's entries, making the buffers they lack first (all of them, or none when one fails). */
  #prepare(op: string, groups: readonly { options: O; params: readonly Tensor[] }[]): StepEntry[][] {
    const made: { state: ParamState; name: string; buffer: Tensor }[] = [];
    const fresh = new Map<Tensor, ParamState>();
    try {
      const plans = groups.map(({ options, params }) =>
        params.map((param): StepEntry => {
          const state = this.#state.get(param) ?? fresh.get(param) ?? { step: 0, buffers: new Map<string, Tensor>() };
          if (!this.#state.has(param)) fresh.set(param, state);
          const names = this.stateNames(options);
          let created = false;
          for (const name of names) {
            if (state.buffers.has(name)) continue;
            const buffer = full<'f32'>(this.#session, op, param.shape, 0, 'f32');
            this.#session.keep(buffer);
            state.buffers.set(name, buffer);
            made.push({ state, name, buffer });
            created = true;
          }
          return { param, grad: param.grad!, state: names.map((n) => state.buffers.get(n)!), fresh: created, t: state.step + 1 };
        }),
      );
      for (const [param, state] of fresh) this.#state.set(param, state);
      return plans;
    } catch (err) {
      for (const { state, name, buffer } of made) {
        state.buffers.delete(name);
        buffer.dispose();
      }
      throw err;
    }
  }

  #loadEntry(op: string, key: string, entry: unknown, params: readonly { param: Tensor; names: readonly string[] }[], loaded: Map<Tensor, ParamState>): void {
    const i = Number(key);
    const target = Number.isInteger(i) ? params[i] : undefined;
    if (target === undefined) throw new InvalidArgumentError(`${op}: state[${key}] names no parameter (there are ${params.length})`);
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) throw new InvalidArgumentError(`${op}: state[${key}] must be an object { step, ...buffers }, got ${describeValue(entry)}`);
    const { step, ...buffers } = entry as ParamStateDict;
    if (typeof step !== 'number' || !Number.isSafeInteger(step) || step < 0) throw new InvalidArgumentError(`${op}: state[${key}].step must be an integer ≥ 0, got ${describeValue(step)}`);
    const { param, names } = target;
    const s: ParamState = { step, buffers: new Map() };
    loaded.set(param, s);
    for (const [name, values] of Object.entries(buffers)) {
      if (!names.includes(name)) throw new InvalidArgumentError(`${op}: state[${key}].${name} is not a buffer of this rule (${names.join(', ') || 'none with these options'})`);
      if (!(values instanceof Float32Array) || values.length !== param.size) {
        throw new InvalidArgumentError(`${op}: state[${key}].${name} must be a Float32Array of ${param.size} values (the parameter's size), got ${describeValue(values)}`);
      }
      const buffer = tensor<'f32'>(this.#session, values, param.shape, 'f32');
      this.#session.keep(buffer);
      s.buffers.set(name, buffer);
    }
  }

  #releaseState(): void {
    for (const s of this.#state.values()) for (const t of s.buffers.values()) t.dispose();
    this.#state.clear();
  }

  #checkLive(op: string): void {
    if (this.#disposed) throw new DisposedError(`${op}: the ${this.#name} optimizer`);
    this.#session.assertLive();
  }
}
