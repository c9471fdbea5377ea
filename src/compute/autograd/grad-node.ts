/**
 * The autograd graph: one {@link GradNode} per op recorded while one of its inputs required grad,
 * pointing back along {@link Edge}s to the nodes that computed those inputs or to the leaves
 * themselves. Each output tensor of a node holds it through an {@link OutputOrigin}; a node holds
 * the nodes its inputs came from. A node lives while a tensor or a later node reaches it; when the
 * last one lets go it releases its saved tensors and the nodes behind it, so dropping a graph's
 * tensors (dispose, a scope's end, the garbage collector) drops the graph.
 */
import { InvalidArgumentError } from '../../errors.js';
import type { GradOrigin, Tensor } from '../tensor/tensor.js';
import type { SavedTensor } from './saved-tensor.js';

/** Where the gradient of a node's input goes: into the node that computed it (its `output`-th result), or into a leaf. */
export type Edge = { readonly node: GradNode; readonly output: number; readonly leaf?: undefined } | { readonly leaf: Tensor; readonly node?: undefined };

/**
 * An op's backward: from the gradients of its outputs (undefined for an output no gradient
 * reached: zero) and the tensors it saved (opened for this call; undefined where it saved none),
 * the gradient of each input, in the order of the recorded inputs. `needs[i]` says whether input
 * i wants one; return undefined where it does not (or where the gradient is zero). Each returned
 * tensor must have its input's shape and dtype. Backward functions run with recording off, on the
 * op front-ends of `ops/`.
 */
export type BackwardFn = (
  grads: readonly (Tensor | undefined)[],
  saved: readonly (Tensor | undefined)[],
  needs: readonly boolean[],
) => readonly (Tensor | undefined)[];

export class GradNode {
  /** The public op's name (messages). */
  readonly op: string;
  /** One per recorded input; undefined for an input that gets no gradient. */
  readonly edges: readonly (Edge | undefined)[];
  /** Each output's shape and dtype: what its gradient must have. */
  readonly outputs: readonly Pick<Tensor, 'shape' | 'dtype'>[];
  readonly backward: BackwardFn;
  /** What the backward reads; undefined once released. */
  #saved: readonly (SavedTensor | undefined)[] | undefined;
  readonly #saves: boolean;
  /** Output tensors and later nodes that reach this node. */
  #refs = 0;

  constructor(
    op: string,
    edges: readonly (Edge | undefined)[],
    outputs: readonly Tensor[],
    saved: readonly (SavedTensor | undefined)[],
    backward: BackwardFn,
  ) {
    this.op = op;
    this.edges = edges;
    this.outputs = outputs.map(({ shape, dtype }) => ({ shape, dtype }));
    this.backward = backward;
    this.#saved = saved;
    this.#saves = saved.some((t) => t !== undefined);
    for (const edge of edges) edge?.node?.retain();
  }

  retain(): void {
    this.#refs++;
  }

  /**
   * Lets go of one reference; the last one drops the node (its saved tensors, its hold on earlier
   * nodes, which may drop in turn: walked with a stack, since graphs can be deep).
   */
  release(): void {
    const dropping: GradNode[] = [this];
    while (dropping.length > 0) {
      const node = dropping.pop()!;
      if (--node.#refs > 0) continue;
      node.releaseSaved();
      for (const edge of node.edges) if (edge?.node) dropping.push(edge.node);
    }
  }

  /**
   * The saved tensors as new tensors (the caller disposes them). `op` names the call in errors.
   * @throws InvalidArgumentError when a backward already released them.
   */
  openSaved(op: string): (Tensor | undefined)[] {
    this.checkUsable(op);
    const opened: Tensor[] = [];
    try {
      return (this.#saved ?? []).map((t) => {
        if (t === undefined) return undefined;
        const open = t.open(op, this.op);
        opened.push(open);
        return open;
      });
    } catch (err) {
      for (const t of opened) t.dispose();
      throw err;
    }
  }

  /**
   * Refuses a backward through this node when it needs saved tensors that a backward released.
   * `op` names the call.
   */
  checkUsable(op: string): void {
    if (this.#saves && this.#saved === undefined) {
      throw new InvalidArgumentError(
        `${op}: the graph through ${this.op} was already used by a backward, which released the tensors it saved; ` +
          `pass { retainGraph: true } to the first backward to run another through the same graph`,
      );
    }
  }

  /** Releases the saved tensors (after a backward, unless it retains the graph). */
  releaseSaved(): void {
    const saved = this.#saved;
    if (saved === undefined) return;
    this.#saved = undefined;
    for (const t of saved) t?.release();
  }
}

/** Keeps the nodes of tensors that were never disposed from holding their saved memory forever. */
const collected = new FinalizationRegistry<OutputOrigin>((origin) => origin.release());

/** An output tensor's hold on its node. */
export class OutputOrigin implements GradOrigin {
  #released = false;

  constructor(
    readonly node: GradNode,
    /** Which of the node's outputs the tensor is. */
    readonly output: number,
    tensor: Tensor,
  ) {
    node.retain();
    collected.register(tensor, this, this);
  }

  release(): void {
    if (this.#released) return;
    this.#released = true;
    collected.unregister(this);
    this.node.release();
  }
}
