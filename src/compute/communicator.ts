/**
 * Communicator: collectives between GpuComputes, each one rank. In one process over several
 * GpuComputes ({@link Communicator.create}: NCCL's ncclCommInitAll where every one is a CUDA
 * device, else the host transport), or across processes and machines, one rank each
 * ({@link Communicator.join}: ncclGetUniqueId + ncclCommInitRank, the id carried by the user's
 * own channel). Calls take one tensor per rank this process drives, in rank order (a bare
 * tensor where it drives one), and queue on each GpuCompute's current stream after the work
 * queued on those tensors, so collectives on another stream (`gpu.setStream`) overlap with
 * compute, and calls made inside {@link Communicator.group} go to NCCL as one group (fused, and
 * the only way to pair sends with receives in one process). DataParallel's bucketed gradient
 * all-reduce is built on this (`data-parallel.ts`).
 */
import { DisposedError, InvalidArgumentError } from '../errors.js';
import type { NcclUniqueId } from '../nccl/unique-id.js';
import type { CollectiveTransport } from './backend/collectives.js';
import { hostCollectives } from './backend/host-collectives.js';
import { type DType } from './core/dtype.js';
import { checkChoice, checkInteger, checkOptions, describeValue, optionKeys } from './core/validation.js';
import type { GpuCompute } from './gpu-compute.js';
import {
  memberOf,
  memberTensors,
  newResult,
  outTensors,
  planCollective,
  rankOption,
  reduceOp,
  type CollectiveMembers,
  type CollectivePlan,
} from './ops/collectives.js';
import { targetSession } from './ops/transfer.js';
import type { Session } from './tensor/session.js';
import type { Tensor } from './tensor/tensor.js';
import type { CollectiveReduceOp } from './backend/collectives.js';

export type { CollectiveReduceOp } from './backend/collectives.js';

/** Options of {@link Communicator.create}. */
export interface CommunicatorOptions {
  /**
   * 'nccl' (every GpuCompute a CUDA device, each device once), 'host' (any backends: each group
   * reads its inputs to host memory and writes the results back; for the CPU, WebGPU and HIP
   * backends, and for tests), or 'auto' (default): NCCL where every GpuCompute is CUDA.
   */
  transport?: 'auto' | 'nccl' | 'host';
}

/** How {@link Communicator.join} finds the other ranks. */
export interface JoinOptions {
  /** The communicator's id: made by one rank with `NcclUniqueId.create()`, carried to the others by the user. */
  id: NcclUniqueId;
  /** This process's rank, 0 ≤ rank < size. */
  rank: number;
  /** The number of ranks, in every process. */
  size: number;
}

/** Options of {@link Communicator.allReduce}. */
export interface AllReduceOptions {
  /** 'sum' (default), 'prod', 'max', 'min' or 'avg' (float tensors only). */
  op?: CollectiveReduceOp;
  /** Write the results here instead of new tensors (one per rank, like x; `out: x` reduces in place). */
  out?: Tensor | readonly Tensor[];
}

/** Options of {@link Communicator.broadcast}. */
export interface BroadcastOptions {
  /** The rank whose tensor every rank receives (default 0). */
  root?: number;
  /** Write the results here instead of new tensors (`out: x` broadcasts in place). */
  out?: Tensor | readonly Tensor[];
}

/** Options of {@link Communicator.reduce}. */
export interface ReduceToRootOptions {
  op?: CollectiveReduceOp;
  /** The rank that receives the reduction (default 0). */
  root?: number;
}

/** Options of {@link Communicator.allGather} and {@link Communicator.reduceScatter}. */
export interface ReduceScatterOptions {
  op?: CollectiveReduceOp;
}

/** Options of {@link Communicator.send} and {@link Communicator.recv}. */
export interface PeerOptions {
  /** The rank at the other end. */
  peer: number;
}

export const COMMUNICATOR_OPTIONS = optionKeys<CommunicatorOptions>({ transport: true });
export const JOIN_OPTIONS = optionKeys<JoinOptions>({ id: true, rank: true, size: true });
export const ALL_REDUCE_OPTIONS = optionKeys<AllReduceOptions>({ op: true, out: true });
export const BROADCAST_OPTIONS = optionKeys<BroadcastOptions>({ root: true, out: true });
export const REDUCE_TO_ROOT_OPTIONS = optionKeys<ReduceToRootOptions>({ op: true, root: true });
export const REDUCE_SCATTER_OPTIONS = optionKeys<ReduceScatterOptions>({ op: true });
export const PEER_OPTIONS = optionKeys<PeerOptions>({ peer: true });

/** One result per rank this process drives: a tensor where x was one tensor, else an array. */
export type Ranked<T, X> = X extends readonly unknown[] ? T[] : T;

/** Ranks of one communicator, this process's GpuComputes among them. See the file comment. */
export class Communicator implements Disposable {
  /**
   * A communicator of `gpus.length` ranks, all in this process: rank i is gpus[i]. NCCL
   * (ncclCommInitAll) where every one is a CUDA GpuCompute on a device of its own, the host
   * transport otherwise (see {@link CommunicatorOptions.transport}).
   * @throws LibraryNotFoundError when NCCL is needed and not found (listing the paths tried).
   */
  static async create(gpus: readonly GpuCompute[], options: CommunicatorOptions = {}): Promise<Communicator> {
    const op = 'Communicator.create';
    const o = checkOptions<CommunicatorOptions>(op, options, COMMUNICATOR_OPTIONS);
    const requested = checkChoice(op, 'transport', o.transport, ['auto', 'nccl', 'host'], 'auto');
    if (!Array.isArray(gpus) || gpus.length === 0) throw new InvalidArgumentError(`${op}: gpus must be a non-empty array of GpuCompute, got ${describeValue(gpus)}`);
    const sessions = gpus.map((g, i) => targetSession(`${op}: gpus[${i}]`, g));
    sessions.forEach((s, i) => {
      if (sessions.indexOf(s) !== i) throw new InvalidArgumentError(`${op}: gpus[${i}] is gpus[${sessions.indexOf(s)}] again; each rank is a GpuCompute of its own`);
    });
    const allCuda = sessions.every((s) => s.backend.kind === 'cuda');
    const kind = requested === 'auto' ? (allCuda ? 'nccl' : 'host') : requested;
    if (kind === 'host') return new Communicator(sessions, hostCollectives(sessions.map((s) => s.backend)));
    const other = sessions.findIndex((s) => s.backend.kind !== 'cuda');
    if (other >= 0) throw new InvalidArgumentError(`${op}: transport 'nccl' needs CUDA GpuComputes; gpus[${other}] is ${sessions[other]!.label()} (use transport 'host')`);
    // Loaded on demand: CPU-only use never loads the CUDA or NCCL modules.
    const { ncclCollectivesAll, isCudaBackend } = await import('./cuda/nccl-collectives.js');
    const backends = sessions.map((s) => s.backend).filter(isCudaBackend);
    const ordinals = backends.map((b) => b.device.ordinal);
    const twice = ordinals.findIndex((d, i) => ordinals.indexOf(d) !== i);
    if (twice >= 0) {
      throw new InvalidArgumentError(`${op}: gpus[${twice}] and gpus[${ordinals.indexOf(ordinals[twice]!)}] are both CUDA device ${ordinals[twice]}; NCCL takes each device once (use transport 'host' to test on one device)`);
    }
    return new Communicator(sessions, ncclCollectivesAll(backends));
  }

  /**
   * This process's rank of a communicator spread over processes or machines (NCCL, CUDA
   * GpuComputes only): every rank calls it with the same id and size, and it resolves once all
   * have joined (the calling thread is blocked meanwhile).
   * @throws LibraryNotFoundError when NCCL is not found (listing the paths tried).
   */
  static async join(gpu: GpuCompute, options: JoinOptions): Promise<Communicator> {
    const op = 'Communicator.join';
    const session = targetSession(`${op}: gpu`, gpu);
    const o = checkOptions<JoinOptions>(op, options, JOIN_OPTIONS);
    const { NcclUniqueId } = await import('../nccl/unique-id.js');
    if (!(o.id instanceof NcclUniqueId)) throw new InvalidArgumentError(`${op}: id must be an NcclUniqueId (NcclUniqueId.create(), or .fromBase64 on the other ranks), got ${describeValue(o.id)}`);
    const size = checkInteger(op, 'size', o.size, 1);
    const rank = checkInteger(op, 'rank', o.rank, 0, size - 1);
    if (session.backend.kind !== 'cuda') throw new InvalidArgumentError(`${op}: NCCL needs a CUDA GpuCompute, got ${session.label()}`);
    const { ncclCollectivesRank, isCudaBackend } = await import('./cuda/nccl-collectives.js');
    const backend = session.backend;
    if (!isCudaBackend(backend)) throw new InvalidArgumentError(`${op}: NCCL needs a CUDA GpuCompute, got ${session.label()}`);
    return new Communicator([session], ncclCollectivesRank(backend, o.id, rank, size));
  }

  readonly #members: CollectiveMembers;
  #transport: CollectiveTransport | undefined;
  /** The calls recorded by the open {@link group}, if any. */
  #pending: CollectivePlan | undefined;

  private constructor(sessions: readonly Session[], transport: CollectiveTransport) {
    this.#transport = transport;
    this.#members = { sessions, ranks: transport.ranks, size: transport.size };
  }

  /** The number of ranks, in every process. */
  get size(): number {
    return this.#members.size;
  }

  /** The ranks this process drives, in the order calls take their tensors. */
  get ranks(): readonly number[] {
    return this.#members.ranks;
  }

  /** @internal The GpuComputes (sessions) of the ranks this process drives, in {@link ranks}' order. */
  get sessions(): readonly Session[] {
    return this.#members.sessions;
  }

  /** 'nccl' or 'host'. */
  get transport(): 'nccl' | 'host' {
    return this.#live('transport').kind;
  }

  /** True after {@link dispose} or {@link abort}. */
  get disposed(): boolean {
    return this.#transport === undefined;
  }

  /** Every rank's x reduced by `op` (default sum), on every rank, in new tensors or `out`. */
  allReduce<D extends DType, X extends Tensor<D> | readonly Tensor<D>[]>(x: X, options: AllReduceOptions = {}): Ranked<Tensor<D>, X> {
    const op = 'allReduce';
    const o = checkOptions<AllReduceOptions>(op, options, ALL_REDUCE_OPTIONS);
    this.#live(op);
    const xs = memberTensors(op, this.#members, x);
    const reduction = reduceOp(op, o.op, xs[0]!.dtype);
    const out = outTensors(op, this.#members, o.out, xs[0]!);
    return this.#collective(op, x, xs, (created) => out ?? this.#results(op, xs, xs[0]!.shape, created), xs[0]!.size, { op: reduction }) as Ranked<Tensor<D>, X>;
  }

  /** The root rank's x on every rank (the other ranks' x give the shape and dtype only), in new tensors or `out`. */
  broadcast<D extends DType, X extends Tensor<D> | readonly Tensor<D>[]>(x: X, options: BroadcastOptions = {}): Ranked<Tensor<D>, X> {
    const op = 'broadcast';
    const o = checkOptions<BroadcastOptions>(op, options, BROADCAST_OPTIONS);
    this.#live(op);
    const xs = memberTensors(op, this.#members, x);
    const root = rankOption(op, 'root', o.root ?? 0, this.#members);
    const out = outTensors(op, this.#members, o.out, xs[0]!);
    return this.#collective(op, x, xs, (created) => out ?? this.#results(op, xs, xs[0]!.shape, created), xs[0]!.size, { root }) as Ranked<Tensor<D>, X>;
  }

  /** Every rank's x reduced by `op` on the root rank only: a new tensor there, undefined on the other ranks. */
  reduce<D extends DType, X extends Tensor<D> | readonly Tensor<D>[]>(x: X, options: ReduceToRootOptions = {}): Ranked<Tensor<D> | undefined, X> {
    const op = 'reduce';
    const o = checkOptions<ReduceToRootOptions>(op, options, REDUCE_TO_ROOT_OPTIONS);
    this.#live(op);
    const xs = memberTensors(op, this.#members, x);
    const reduction = reduceOp(op, o.op, xs[0]!.dtype);
    const root = rankOption(op, 'root', o.root ?? 0, this.#members);
    const results = (created: Tensor[]) =>
      xs.map((t, member) => (this.#members.ranks[member] === root ? newResult(op, this.#members.sessions[member]!, t.shape, t.dtype, created) : undefined));
    return this.#collective(op, x, xs, results, xs[0]!.size, { op: reduction, root }) as Ranked<Tensor<D> | undefined, X>;
  }

  /** Every rank's x stacked in rank order, on every rank: `[size, ...x.shape]`. */
  allGather<D extends DType, X extends Tensor<D> | readonly Tensor<D>[]>(x: X): Ranked<Tensor<D>, X> {
    const op = 'allGather';
    this.#live(op);
    const xs = memberTensors(op, this.#members, x);
    const shape = [this.size, ...xs[0]!.shape];
    return this.#collective(op, x, xs, (created) => this.#results(op, xs, shape, created), xs[0]!.size, {}) as Ranked<Tensor<D>, X>;
  }

  /**
   * x (`[size·k, ...]` on every rank) reduced by `op` across ranks, and rank r keeping block r of
   * the first axis: `[k, ...]`.
   */
  reduceScatter<D extends DType, X extends Tensor<D> | readonly Tensor<D>[]>(x: X, options: ReduceScatterOptions = {}): Ranked<Tensor<D>, X> {
    const op = 'reduceScatter';
    const o = checkOptions<ReduceScatterOptions>(op, options, REDUCE_SCATTER_OPTIONS);
    this.#live(op);
    const xs = memberTensors(op, this.#members, x);
    const reduction = reduceOp(op, o.op, xs[0]!.dtype);
    const [first, ...rest] = xs[0]!.shape;
    if (first === undefined || first % this.size !== 0) {
      throw new InvalidArgumentError(`${op}: x ${xs[0]!.toString()} must have a first axis divisible by the ${this.size} ranks`);
    }
    const shape = [first / this.size, ...rest];
    const count = shape.reduce((a, d) => a * d, 1);
    return this.#collective(op, x, xs, (created) => this.#results(op, xs, shape, created), count, { op: reduction }) as Ranked<Tensor<D>, X>;
  }

  /**
   * Sends x (of one of this process's ranks, found by its GpuCompute) to rank `peer`, which
   * receives it with {@link recv} into a tensor of the same size and dtype. Where this process
   * drives several ranks, sends and receives pair up only inside {@link group}.
   */
  send(x: Tensor, options: PeerOptions): void {
    const op = 'send';
    this.#live(op);
    const member = memberOf(op, this.#members, x, 'x');
    const o = checkOptions<PeerOptions>(op, options, PEER_OPTIONS);
    const peer = rankOption(op, 'peer', o.peer, this.#members);
    this.#pointToPoint(op, { kind: 'send', member, dtype: x.dtype, count: x.size, send: x.view, peer });
  }

  /** Receives into `into` (of one of this process's ranks) what rank `peer` sends it with {@link send}. Returns `into`. */
  recv<D extends DType>(into: Tensor<D>, options: PeerOptions): Tensor<D> {
    const op = 'recv';
    this.#live(op);
    const member = memberOf(op, this.#members, into, 'into');
    const o = checkOptions<PeerOptions>(op, options, PEER_OPTIONS);
    const peer = rankOption(op, 'peer', o.peer, this.#members);
    this.#pointToPoint(op, { kind: 'recv', member, dtype: into.dtype, count: into.size, recv: into.view, peer });
    return into;
  }

  /**
   * Runs `fn` and sends the calls it makes on this communicator as one group (NCCL:
   * ncclGroupStart / ncclGroupEnd): they are queued together when it returns, which fuses many
   * small collectives (a bucket of gradients) into one launch and pairs sends with receives.
   * Results exist at once but hold their values only once the group has run. If `fn` throws, or
   * the group fails, the results its calls made are disposed. Groups nest (the outermost runs
   * them); `fn` must be synchronous.
   */
  group<T>(fn: () => T): T {
    const op = 'group';
    this.#live(op);
    if (typeof fn !== 'function') throw new InvalidArgumentError(`${op}: fn must be a function, got ${describeValue(fn)}`);
    if (this.#pending) return fn();
    const plan: CollectivePlan = { calls: [], created: [] };
    this.#pending = plan;
    let result: T;
    try {
      result = fn();
      if (result instanceof Promise) {
        result.catch(() => undefined);
        throw new InvalidArgumentError(`${op}: fn returned a promise; the calls of a group must be made synchronously`);
      }
    } catch (err) {
      for (const t of plan.created) t.dispose();
      throw err;
    } finally {
      this.#pending = undefined;
    }
    this.#submit(plan);
    return result;
  }

  /** Frees the communicator once its queued work is done (NCCL: ncclCommDestroy). Idempotent. */
  dispose(): void {
    const transport = this.#transport;
    if (transport === undefined) return;
    this.#transport = undefined;
    transport.dispose();
  }

  /** Frees it now, cancelling queued work: after an error, or when a peer process is gone (NCCL: ncclCommAbort). Idempotent. */
  abort(): void {
    const transport = this.#transport;
    if (transport === undefined) return;
    this.#transport = undefined;
    transport.abort();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  #live(op: string): CollectiveTransport {
    if (this.#transport === undefined) throw new DisposedError(`${op}: the Communicator`);
    return this.#transport;
  }

  #results(op: string, xs: readonly Tensor[], shape: readonly number[], created: Tensor[]): Tensor[] {
    return xs.map((t, member) => newResult(op, this.#members.sessions[member]!, shape, t.dtype, created));
  }

  /** Plans one collective over every member, runs it (or adds it to the open group) and returns the results shaped like x. */
  #collective(
    op: string,
    x: unknown,
    xs: readonly Tensor[],
    results: (created: Tensor[]) => readonly (Tensor | undefined)[],
    count: number,
    extra: { op?: CollectiveReduceOp; root?: number },
  ): Tensor | undefined | (Tensor | undefined)[] {
    const created: Tensor[] = [];
    const outs = results(created);
    const kind = op as Parameters<typeof planCollective>[0];
    // Empty tensors move nothing: every rank skips alike, since their shapes agree.
    if (count > 0) {
      const plan = planCollective(kind, xs, outs, count, extra, created);
      if (this.#pending) {
        this.#pending.calls.push(...plan.calls);
        this.#pending.created.push(...created);
      } else {
        this.#submit(plan);
      }
    }
    return Array.isArray(x) ? [...outs] : outs[0];
  }

  #pointToPoint(op: string, call: CollectivePlan['calls'][number]): void {
    if (this.#pending) {
      this.#pending.calls.push(call);
      return;
    }
    if (this.#members.sessions.length > 1) {
      throw new InvalidArgumentError(
        `${op}: this communicator drives ${this.#members.sessions.length} ranks from this process; make its sends and receives inside comm.group(() => ...), where they pair up`,
      );
    }
    this.#submit({ calls: [call], created: [] });
  }

  #submit(plan: CollectivePlan): void {
    if (plan.calls.length === 0) return;
    try {
      this.#live('group').run(plan.calls);
    } catch (err) {
      for (const t of plan.created) t.dispose();
      throw err;
    }
  }
}
