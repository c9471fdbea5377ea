/**
 * What a communicator's transport executes: collective and point-to-point calls between the
 * ranks of a communicator, each call one rank's part, as plain data over tensor views. The
 * front-end (`ops/collectives.ts`) has checked every call (shapes, dtypes, ranks, owners); a
 * transport only moves and reduces. Two transports: NCCL between CUDA devices (`cuda/`), and
 * the host, in one process, for every other backend (`host-collectives.ts`).
 */
import type { DType } from '../core/dtype.js';
import type { TensorView } from '../core/view.js';

/** The reductions, NCCL's built-in ones: `avg` is the sum divided by the number of ranks. */
export const COLLECTIVE_REDUCE_OPS = ['sum', 'prod', 'max', 'min', 'avg'] as const;
/** A reduction of {@link COLLECTIVE_REDUCE_OPS}. */
export type CollectiveReduceOp = (typeof COLLECTIVE_REDUCE_OPS)[number];

/** The calls, NCCL's. */
export type CollectiveKind = 'allReduce' | 'broadcast' | 'reduce' | 'allGather' | 'reduceScatter' | 'send' | 'recv';

/**
 * One rank's part of a call. `count` is in elements, as NCCL counts them: per rank for
 * allGather's input and reduceScatter's output, the whole tensor otherwise. `send` is what the
 * rank contributes (absent for recv, and ignored off the root for broadcast); `recv` is where its
 * result goes (absent for send, and for reduce off the root).
 */
export interface CollectiveCall {
  readonly kind: CollectiveKind;
  /** The member (local rank index) making the call. */
  readonly member: number;
  readonly dtype: DType;
  readonly count: number;
  readonly send?: TensorView;
  readonly recv?: TensorView;
  readonly op?: CollectiveReduceOp;
  /** broadcast and reduce: the root's global rank. */
  readonly root?: number;
  /** send and recv: the global rank at the other end. */
  readonly peer?: number;
}

/** Moves data between the ranks of one communicator. */
export interface CollectiveTransport {
  /** 'nccl' or 'host'. */
  readonly kind: 'nccl' | 'host';
  /** The number of ranks in the communicator. */
  readonly size: number;
  /** The global rank of each member (this process's ranks), in member order. */
  readonly ranks: readonly number[];
  /**
   * Runs `calls` as one group: every call is ordered after the work queued on its tensors, and
   * later work on them waits for it. Calls of one group may be in any order across members; each
   * member's collectives pair up with the other ranks' in the order it made them.
   */
  run(calls: readonly CollectiveCall[]): void;
  /** Frees the transport once its queued work is done. */
  dispose(): void;
  /** Frees it at once, cancelling queued work (after an error, or when a peer is gone). */
  abort(): void;
}
