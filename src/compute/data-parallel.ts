/**
 * DataParallel: data-parallel training over the ranks of a {@link Communicator}, PyTorch's
 * DistributedDataParallel for this library. Every rank holds a replica of the parameters; each
 * computes the loss of its share of the global batch on its replica; {@link DataParallel.backward}
 * runs each replica's backward and averages the gradients over the ranks, so every replica ends
 * with the gradient of the mean loss over the global batch, and identical optimizer steps keep the
 * replicas identical.
 *
 * Overlap: the gradients are reduced in buckets (parameters in reverse order, since the last
 * layers' gradients are final first during a backward). The backward hands each leaf's gradient
 * over as soon as it is final (`autograd/backward.ts`, {@link LeafHooks}); once every replica this
 * process drives has the gradients of a bucket, its all-reduce (one group of 'avg' all-reduces,
 * one per parameter, in place) is queued on a side stream of each GpuCompute, while the backward
 * goes on queueing on the main one. Buckets are queued in their order on every rank, so the
 * ranks' collectives pair up whatever order their gradients became final in. Later work orders
 * itself after the all-reduces through the pool's stream rule (`gpu/pooled-backend.ts`): a buffer
 * last used on the side stream makes the main stream wait for it when it next touches it (the
 * accumulation into `.grad`, the optimizer's step, a read).
 */
import { CaptureError, DisposedError, InvalidArgumentError } from '../errors.js';
import { type LeafHooks, backward } from './autograd/backward.js';
import type { BackendStream } from './backend/backend.js';
import { checkInteger, checkOptions, describeValue, optionKeys } from './core/validation.js';
import { Communicator } from './communicator.js';
import { copy, full } from './ops/creation.js';
import { binary } from './ops/elementwise.js';
import { to } from './ops/transfer.js';
import type { Session } from './tensor/session.js';
import { Tensor } from './tensor/tensor.js';

/** Options of {@link DataParallel}. */
export interface DataParallelOptions {
  /**
   * Gradient bytes per all-reduce (default 25 MiB, as PyTorch's DDP): a bucket takes parameters,
   * last first, until it holds at least this many bytes. 1 makes one bucket per parameter; more
   * than all the parameters' bytes, one bucket.
   */
  bucketBytes?: number;
}

/** The keys {@link DataParallelOptions} takes. */
export const DATA_PARALLEL_OPTIONS = optionKeys<DataParallelOptions>({ bucketBytes: true });

const DEFAULT_BUCKET_BYTES = 25 * 2 ** 20;

/** Each GpuCompute's side stream for gradient all-reduces, shared by every DataParallel over it. */
const sideStreams = new WeakMap<Session, BackendStream>();

function sideStream(s: Session): BackendStream {
  let stream = sideStreams.get(s);
  if (stream === undefined) {
    stream = s.backend.createStream();
    sideStreams.set(s, stream);
  }
  return stream;
}

/**
 * Data-parallel training over the ranks of a communicator (see the file comment).
 *
 * ```ts
 * const comm = await Communicator.create(gpus);             // one rank per GpuCompute
 * using dp = new DataParallel(comm, model.parameters());    // replicas on every rank
 * const opts = comm.ranks.map((rank) => new AdamW(dp.parameters(rank)));
 * const losses = comm.ranks.map((rank, i) => lossOf(dp.parameters(rank), shares[i]));
 * dp.backward(losses);                                       // every replica: the gradient of the mean loss
 * for (const opt of opts) { opt.step(); opt.zeroGrad(); }
 * ```
 */
export class DataParallel implements Disposable {
  /**
   * The parameters' indices in each bucket, in the order the buckets are all-reduced (the last
   * parameters first).
   */
  readonly buckets: readonly (readonly number[])[];
  readonly #comm: Communicator;
  readonly #sessions: readonly Session[];
  /** Per rank this process drives, the replicas in the parameters' order (the first rank's are the caller's tensors). */
  readonly #replicas: readonly (readonly Tensor[])[];
  /** Per rank this process drives, each replica's index. */
  readonly #index: readonly ReadonlyMap<Tensor, number>[];
  /** The bucket of each parameter. */
  readonly #bucketOf: readonly number[];
  /** The replicas this instance made, which {@link dispose} disposes. */
  #made: Tensor[];
  #disposed = false;

  /**
   * Replicas of `params` on every rank of `comm`: `params` are leaves (float tensors) on the
   * GpuCompute of the first rank this process drives, and stay that rank's replicas; the other
   * ranks this process drives get copies (`x.to`), which require grad where the originals do. Where
   * other processes drive ranks too (`Communicator.join`), every replica then receives rank 0's
   * values (an in-place broadcast, so each process starts from the same parameters).
   */
  constructor(comm: Communicator, params: readonly Tensor[], options: DataParallelOptions = {}) {
    const op = 'DataParallel';
    if (!(comm instanceof Communicator)) throw new InvalidArgumentError(`${op}: comm must be a Communicator, got ${describeValue(comm)}`);
    if (comm.disposed) throw new DisposedError(`${op}: the Communicator`);
    const o = checkOptions<DataParallelOptions>(op, options, DATA_PARALLEL_OPTIONS);
    const bucketBytes = checkInteger(op, 'bucketBytes', o.bucketBytes ?? DEFAULT_BUCKET_BYTES, 1);
    const sessions = comm.sessions;
    const first: Session = sessions[0]!;
    if (!Array.isArray(params) || params.length === 0) throw new InvalidArgumentError(`${op}: params must be a non-empty array of tensors, got ${describeValue(params)}`);
    const seen = new Set<Tensor>();
    const originals = (params as unknown[]).map((t, i): Tensor => {
      const name = `params[${i}]`;
      if (t instanceof Tensor && !t.disposed && t.owner !== first) {
        throw new InvalidArgumentError(`${op}: ${name} ${t.toString()} is not on the GpuCompute of rank ${comm.ranks[0]}, the first rank this process drives; give the parameters there`);
      }
      first.checkFloat(op, t, name);
      if (t.origin !== undefined) throw new InvalidArgumentError(`${op}: ${name} ${t.toString()} is the result of a recorded op, not a leaf; give the leaves it was computed from`);
      if (seen.has(t)) throw new InvalidArgumentError(`${op}: ${name} ${t.toString()} is given twice`);
      seen.add(t);
      return t;
    });
    this.#comm = comm;
    this.#sessions = sessions;
    this.#made = [];
    try {
      this.#replicas = sessions.map((s, m) => (m === 0 ? originals : originals.map((p) => this.#replicate(p, s))));
      if (comm.size > sessions.length) {
        comm.group(() => originals.forEach((_, i) => comm.broadcast(this.#across(i), { root: 0, out: this.#across(i) })));
        for (const list of this.#replicas) for (const t of list) t.sharedStorage.version++;
      }
    } catch (err) {
      for (const t of this.#made) t.dispose();
      throw err;
    }
    this.#index = this.#replicas.map((list) => new Map(list.map((t, i) => [t, i])));
    const buckets: number[][] = [];
    let open: number[] = [];
    let bytes = 0;
    for (let i = originals.length - 1; i >= 0; i--) {
      open.push(i);
      bytes += originals[i]!.byteLength;
      if (bytes >= bucketBytes || i === 0) {
        buckets.push(open);
        open = [];
        bytes = 0;
      }
    }
    this.buckets = buckets;
    const bucketOf: number[] = [];
    buckets.forEach((bucket, b) => bucket.forEach((i) => (bucketOf[i] = b)));
    this.#bucketOf = bucketOf;
  }

  /** The ranks this process drives (the communicator's), in the order {@link backward} takes their losses. */
  get ranks(): readonly number[] {
    return this.#comm.ranks;
  }

  /** True after {@link dispose}. */
  get disposed(): boolean {
    return this.#disposed;
  }

  /**
   * The replicas of rank `rank` (one this process drives; may be left out where it drives one), in
   * the parameters' order: compute that rank's loss from them, and give them to its optimizer.
   */
  parameters(rank?: number): Tensor[] {
    const op = 'DataParallel.parameters';
    this.#live(op);
    return [...this.#replicas[this.#member(op, rank)]!];
  }

  /**
   * Runs the backward of each loss (one per rank this process drives, in rank order; a bare tensor
   * where it drives one), each a one-element loss computed from that rank's replicas on its share
   * of the global batch, and leaves in every replica's `.grad` the average over all ranks of their
   * gradients, added to what `.grad` held (so gradients accumulate over several calls before a
   * step, as with `loss.backward()`). With equal shares and mean losses, that is the gradient of
   * the mean loss over the global batch.
   *
   * A parameter that no backward of this process reaches gets no gradient on any of its ranks; one
   * that some of them reach gets zeros from the others (their losses do not depend on it). Each
   * process decides this from its own losses, so what the backward reaches must not depend on the
   * data where other processes drive ranks (a model whose graph is the same for every batch), or
   * the ranks' all-reduces do not pair up. Leaves that are not parameters (an input marked
   * `requiresGrad_()`) get their own rank's gradient, as from `loss.backward()`.
   *
   * When it fails (out of memory, say) no `.grad` has changed and what it made is disposed (the
   * all-reduces already queued finish into memory freed in stream order). The backwards that ran,
   * wholly or partly, have released what their graphs saved: run the forward again before
   * retrying. Where other processes drive ranks, theirs wait for all-reduces this one will not
   * make: abort the communicator (`comm.abort()`).
   */
  backward(losses: Tensor | readonly Tensor[]): void {
    const op = 'DataParallel.backward';
    this.#live(op);
    const sessions = this.#sessions;
    const n = sessions.length;
    const list = Array.isArray(losses) ? (losses as unknown[]) : n === 1 ? [losses] : undefined;
    if (list === undefined || list.length !== n) {
      throw new InvalidArgumentError(
        n === 1
          ? `${op}: losses must be a Tensor (or an array of one), got ${describeValue(losses)}`
          : `${op}: losses must be an array of ${n} tensors, one per rank this process drives (ranks ${this.ranks.join(', ')}), got ${describeValue(losses)}`,
      );
    }
    const checked = list.map((loss, m): Tensor => {
      const s: Session = sessions[m]!;
      const name = n === 1 ? 'loss' : `losses[${m}]`;
      if (loss instanceof Tensor && !loss.disposed && loss.owner !== s) {
        throw new InvalidArgumentError(`${op}: ${name} ${loss.toString()} is not on the GpuCompute of rank ${this.ranks[m]}; losses go in rank order (ranks ${this.ranks.join(', ')})`);
      }
      s.checkFloat(op, loss, name);
      if (loss.size !== 1) throw new InvalidArgumentError(`${op}: ${name} ${loss.toString()} is not a one-element tensor; each rank's loss is a scalar (the mean over its share of the batch)`);
      if (!loss.requiresGrad) {
        throw new InvalidArgumentError(`${op}: ${name} ${loss.toString()} does not require grad: it was not computed from the replicas (dp.parameters(rank)), or ran under gpu.noGrad`);
      }
      if (s.gradMode.capturing) throw new CaptureError(`capture: ${op} cannot run inside a captured function (the autograd graph is host state); run it outside gpu.capture`);
      return loss;
    });
    this.#replicas.forEach((replicas, m) =>
      replicas.forEach((t, i) => {
        if (t.disposed) throw new DisposedError(`${op}: the replica of params[${i}] on rank ${this.ranks[m]}`);
      }),
    );
    const pass = new Reduction(op, this.#comm, sessions, this.#replicas, this.#index, this.buckets, this.#bucketOf);
    pass.run(checked);
  }

  /** Disposes the replicas it made (not the first rank's, which are the caller's, nor the communicator). Idempotent. */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    for (const t of this.#made) t.dispose();
    this.#made = [];
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  /** A copy of `p` on `s`, kept from scopes, requiring grad where `p` does. */
  #replicate(p: Tensor, s: Session): Tensor {
    const copied = to(p.owner as Session, p, { session: s }) as Tensor;
    this.#made.push(copied);
    s.keep(copied);
    if (p.requiresGrad) copied.requiresGrad_();
    return copied;
  }

  /** Parameter i's replica on every rank this process drives. */
  #across(i: number): Tensor[] {
    return this.#replicas.map((list) => list[i]!);
  }

  /** The member index of `rank` (undefined: the only one). */
  #member(op: string, rank: unknown): number {
    const ranks = this.ranks;
    if (rank === undefined) {
      if (ranks.length === 1) return 0;
      throw new InvalidArgumentError(`${op}: rank is required: this process drives ranks ${ranks.join(', ')}`);
    }
    const r = checkInteger(op, 'rank', rank, 0, this.#comm.size - 1);
    const member = ranks.indexOf(r);
    if (member < 0) throw new InvalidArgumentError(`${op}: rank ${r} is not one this process drives (ranks ${ranks.join(', ')})`);
    return member;
  }

  #live(op: string): void {
    if (this.#disposed) throw new DisposedError(`${op}: the DataParallel`);
    if (this.#comm.disposed) throw new DisposedError(`${op}: the Communicator`);
    this.#sessions.forEach((s, m) => {
      if (s.disposed) throw new DisposedError(`${op}: the GpuCompute of rank ${this.ranks[m]}`);
    });
  }
}

/** One {@link DataParallel.backward}: the gradients as the backwards hand them over, the buckets' all-reduces, the updates. */
class Reduction {
  /** Per member and parameter: whether its backward reaches the replica. */
  readonly #reached: boolean[][];
  /** Per member and parameter: the gradient handed over (undefined: none, or zero). */
  readonly #grads: (Tensor | undefined)[][];
  /** Per bucket: the (member, parameter) pairs not yet final. */
  readonly #remaining: number[];
  /** Leaves that are not parameters, with their gradients: accumulated locally. */
  readonly #others: [leaf: Tensor, grad: Tensor | undefined][] = [];
  /** Every tensor this pass holds, disposed if it fails. */
  readonly #owned = new Set<Tensor>();
  /** The next bucket to all-reduce. */
  #next = 0;

  constructor(
    readonly op: string,
    readonly comm: Communicator,
    readonly sessions: readonly Session[],
    readonly replicas: readonly (readonly Tensor[])[],
    readonly index: readonly ReadonlyMap<Tensor, number>[],
    readonly buckets: readonly (readonly number[])[],
    readonly bucketOf: readonly number[],
  ) {
    const count = replicas[0]!.length;
    this.#reached = sessions.map(() => new Array<boolean>(count).fill(false));
    this.#grads = sessions.map(() => new Array<Tensor | undefined>(count).fill(undefined));
    this.#remaining = buckets.map((bucket) => bucket.length * sessions.length);
  }

  run(losses: readonly Tensor[]): void {
    try {
      losses.forEach((loss, m) => backward(this.sessions[m]!, loss, undefined, undefined, this.#hooks(m)));
      // Every parameter is final or unreached on every member by now, so every bucket has been queued.
      const updates = this.#updates();
      const assigned = new Set(updates.map(([, grad]) => grad));
      for (const [leaf, grad] of updates) leaf.grad = grad;
      for (const t of this.#owned) if (!assigned.has(t)) t.dispose();
    } catch (err) {
      for (const t of this.#owned) t.dispose();
      throw err;
    }
  }

  #hooks(m: number): LeafHooks {
    const index = this.index[m]!;
    return {
      reached: (leaves) => {
        this.replicas[m]!.forEach((p, i) => {
          if (leaves.has(p)) this.#reached[m]![i] = true;
          else this.#done(i);
        });
        this.#flush();
      },
      final: (leaf, grad) => {
        if (grad !== undefined) this.#owned.add(grad);
        const i = index.get(leaf);
        if (i === undefined) {
          this.#others.push([leaf, grad]);
          return;
        }
        this.#grads[m]![i] = grad;
        this.#done(i);
        this.#flush();
      },
    };
  }

  /** One member's replica of parameter i is final (or unreached). */
  #done(i: number): void {
    this.#remaining[this.bucketOf[i]!]!--;
  }

  /** Queues, in order, every bucket whose gradients are all final. */
  #flush(): void {
    while (this.#next < this.buckets.length && this.#remaining[this.#next] === 0) this.#allReduce(this.buckets[this.#next++]!);
  }

  /**
   * The all-reduce of one bucket, on the side streams: the gradients in place, each parameter's
   * averaged over the ranks. A gradient whose storage other tensors share (a view the backward
   * still reads) is copied first, on the main stream, so nothing it still reads changes or waits.
   */
  #allReduce(bucket: readonly number[]): void {
    const calls: Tensor[][] = [];
    for (const i of bucket) {
      if (!this.#reached.some((r) => r[i])) continue;
      const xs = this.sessions.map((s, m) => {
        const g = this.#grads[m]![i];
        if (g !== undefined && !g.sharedStorage.shared) return g;
        const p = this.replicas[m]![i]!;
        const x = g === undefined ? full(s, this.op, p.shape, 0, p.dtype) : copy(s, g, this.op);
        this.#own(s, x);
        if (g !== undefined) {
          this.#owned.delete(g);
          g.dispose();
        }
        this.#grads[m]![i] = x;
        return x;
      });
      calls.push(xs);
    }
    if (calls.length === 0) return;
    const main = this.sessions.map((s) => s.backend.currentStream());
    try {
      this.sessions.forEach((s) => s.backend.setStream(sideStream(s)));
      this.comm.group(() => {
        for (const xs of calls) this.comm.allReduce(xs, { op: 'avg', out: xs });
      });
    } finally {
      this.sessions.forEach((s, m) => s.backend.setStream(main[m]!));
    }
  }

  /** Each leaf's new `.grad`: the reduced gradients (and the other leaves' own) added to what it held. */
  #updates(): [Tensor, Tensor][] {
    const updates: [Tensor, Tensor][] = [];
    const accumulate = (leaf: Tensor, g: Tensor | undefined) => {
      const s = leaf.owner as Session;
      const current = leaf.grad;
      if (g === undefined) {
        if (current === undefined) updates.push([leaf, this.#own(s, full(s, this.op, leaf.shape, 0, leaf.dtype))]);
      } else {
        updates.push([leaf, current === undefined ? g : this.#own(s, binary(s, 'add', current, g, this.op))]);
      }
    };
    this.replicas.forEach((list, m) =>
      list.forEach((p, i) => {
        if (this.#reached.some((r) => r[i])) accumulate(p, this.#grads[m]![i]);
      }),
    );
    for (const [leaf, g] of this.#others) if (!leaf.disposed) accumulate(leaf, g);
    return updates;
  }

  /** Holds `t` (kept from scopes, disposed if the pass fails). */
  #own(s: Session, t: Tensor): Tensor {
    s.keep(t);
    this.#owned.add(t);
    return t;
  }
}
