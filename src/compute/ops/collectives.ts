/**
 * The collective calls' front-end: one tensor per member (this process's ranks of a
 * communicator) checked to belong to that member's GpuCompute and to agree in shape and dtype,
 * results allocated on each member, and the transport's calls as plain data.
 */
import { InvalidArgumentError } from '../../errors.js';
import { COLLECTIVE_REDUCE_OPS, type CollectiveCall, type CollectiveKind, type CollectiveReduceOp } from '../backend/collectives.js';
import type { DType } from '../core/dtype.js';
import { formatShape } from '../core/shape.js';
import { checkChoice, checkInteger, describeValue } from '../core/validation.js';
import type { Session } from '../tensor/session.js';
import { Tensor } from '../tensor/tensor.js';

/** The members of a communicator as the front-end sees them. */
export interface CollectiveMembers {
  /** Each member's session (its GpuCompute), in member order. */
  readonly sessions: readonly Session[];
  /** Each member's global rank. */
  readonly ranks: readonly number[];
  /** Ranks in the communicator, in every process. */
  readonly size: number;
}

/** A planned group of calls, and the results the calls write (disposed again if the group fails). */
export interface CollectivePlan {
  readonly calls: CollectiveCall[];
  readonly created: Tensor[];
}

/**
 * `x` as one tensor per member: a Tensor where there is one member, else an array with one per
 * member in member order; each of its member's GpuCompute, all of one shape and dtype.
 */
export function memberTensors(op: string, m: CollectiveMembers, x: unknown, name = 'x'): Tensor[] {
  const n = m.sessions.length;
  const list = Array.isArray(x) ? (x as unknown[]) : n === 1 ? [x] : undefined;
  if (list === undefined || list.length !== n) {
    throw new InvalidArgumentError(
      n === 1
        ? `${op}: ${name} must be a Tensor (or an array of one), got ${describeValue(x)}`
        : `${op}: ${name} must be an array of ${n} tensors, one per rank this process drives (ranks ${m.ranks.join(', ')}), got ${describeValue(x)}`,
    );
  }
  const tensors = list.map((t, i): Tensor => {
    const session: Session = m.sessions[i]!;
    session.checkTensor(op, t, n === 1 ? name : `${name}[${i}]`);
    return t;
  });
  const first = tensors[0]!;
  for (const [i, t] of tensors.entries()) {
    if (t.dtype !== first.dtype || t.shape.length !== first.shape.length || t.shape.some((d, k) => d !== first.shape[k])) {
      throw new InvalidArgumentError(`${op}: ${name}[${i}] ${t.toString()} differs from ${name}[0] ${first.toString()}; every rank gives the same shape and dtype`);
    }
  }
  return tensors;
}

/** The member whose GpuCompute holds `t` (send and recv take one tensor and find its rank by it). */
export function memberOf(op: string, m: CollectiveMembers, t: unknown, name: string): number {
  if (!(t instanceof Tensor)) throw new InvalidArgumentError(`${op}: ${name} must be a Tensor, got ${describeValue(t)}`);
  const member = m.sessions.findIndex((s) => s === t.owner);
  if (member < 0) throw new InvalidArgumentError(`${op}: ${name} ${t.toString()} belongs to a GpuCompute that is none of this communicator's ranks`);
  const session: Session = m.sessions[member]!;
  session.checkTensor(op, t, name);
  return member;
}

/** A reduction option: one of {@link COLLECTIVE_REDUCE_OPS}, 'sum' by default; 'avg' only for float tensors. */
export function reduceOp(op: string, value: unknown, dtype: DType): CollectiveReduceOp {
  const r = checkChoice(op, 'op', value, COLLECTIVE_REDUCE_OPS, 'sum');
  if (r === 'avg' && dtype === 'i32') throw new InvalidArgumentError(`${op}: op 'avg' needs a float tensor, got i32 (sum, then divide after a cast)`);
  return r;
}

/** A rank option (root, peer): an integer in [0, size). */
export function rankOption(op: string, name: string, value: unknown, m: CollectiveMembers): number {
  if (value === undefined) throw new InvalidArgumentError(`${op}: ${name} is required (a rank in [0, ${m.size - 1}])`);
  return checkInteger(op, name, value, 0, m.size - 1);
}

/** `out` given: one tensor per member, each of `shape` and `dtype`, written in place; undefined when not given. */
export function outTensors(op: string, m: CollectiveMembers, out: unknown, like: Tensor): Tensor[] | undefined {
  if (out === undefined) return undefined;
  const tensors = memberTensors(op, m, out, 'out');
  const t = tensors[0]!;
  if (t.dtype !== like.dtype || t.shape.length !== like.shape.length || t.shape.some((d, k) => d !== like.shape[k])) {
    throw new InvalidArgumentError(`${op}: out ${t.toString()} must be ${like.dtype} ${formatShape(like.shape)} like x`);
  }
  return tensors;
}

/**
 * Plans one collective over every member: `result(member)` is the member's result tensor (made or
 * given), `count` the call's element count.
 */
export function planCollective(
  kind: CollectiveKind,
  xs: readonly Tensor[],
  results: readonly (Tensor | undefined)[],
  count: number,
  extra: Pick<CollectiveCall, 'op' | 'root'>,
  created: Tensor[],
): CollectivePlan {
  const calls: CollectiveCall[] = xs.map((x, member) => ({
    kind,
    member,
    dtype: x.dtype,
    count,
    send: x.view,
    ...(results[member] === undefined ? {} : { recv: results[member]!.view }),
    ...extra,
  }));
  return { calls, created };
}

/** A new result tensor on `s`; recorded in `created` so a failed group can dispose it. */
export function newResult(op: string, s: Session, shape: readonly number[], dtype: DType, created: Tensor[]): Tensor {
  const t = s.empty(op, shape, dtype);
  created.push(t);
  return t;
}
