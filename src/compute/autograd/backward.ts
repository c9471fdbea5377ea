/**
 * The backward pass: from a root tensor and the gradient of a loss with respect to it (the seed),
 * the gradient of every leaf behind it, through the graph `record` built. Nodes run in an order
 * where each runs after every node that feeds it a gradient (Kahn's algorithm over the nodes the
 * root reaches), so each gets the sum of its outputs' gradients once. Gradients arriving twice at
 * one place are added (out of place); each intermediate gradient is disposed once used, and each
 * node's saved tensors once it ran (unless the graph is retained).
 *
 * A backward runs in a scope of its own with recording off: when it fails (out of memory, say),
 * everything it made is disposed and no leaf's gradient has changed. The nodes that ran before
 * the failure have released their saved tensors, so run the forward again before retrying.
 *
 * With {@link LeafHooks} (internal: DataParallel's), a backward hands each leaf's gradient over as
 * soon as it is final instead of accumulating it into `.grad`, so work on the gradients (an
 * all-reduce) can start while the rest of the graph is still being differentiated.
 */
import { CaptureError, GpuError, InvalidArgumentError } from '../../errors.js';
import type { DType } from '../core/dtype.js';
import { sameShape } from '../core/shape.js';
import { checkFlag, checkOptions, describeValue, optionKeys } from '../core/validation.js';
import { full } from '../ops/creation.js';
import { binary } from '../ops/elementwise.js';
import type { Session } from '../tensor/session.js';
import { Tensor } from '../tensor/tensor.js';
import type { GradNode, OutputOrigin } from './grad-node.js';

/** Options of `tensor.backward(seed, options)`. */
export interface BackwardOptions {
  /**
   * Keep the tensors the graph saved, so another backward can run through it (default false: they
   * are released as the backward passes, and a second backward through the graph is refused).
   */
  retainGraph?: boolean;
}

/** The keys {@link BackwardOptions} takes. */
export const BACKWARD_OPTIONS = optionKeys<BackwardOptions>({ retainGraph: true });

/**
 * @internal What a backward tells its caller about the leaves (DataParallel hooks in here): with
 * hooks, no `.grad` changes; each leaf's gradient goes to {@link LeafHooks.final} instead.
 */
export interface LeafHooks {
  /** Called once, before any node runs, with every leaf the pass reaches: each of them is then reported to `final` exactly once. */
  reached(leaves: ReadonlySet<Tensor>): void;
  /**
   * The gradient of `leaf` is final: every edge of the pass that leads to it has delivered its
   * contribution, and `grad` is their sum (undefined where none carried one: zero). From this call
   * on `grad` belongs to the hook, kept from every scope (dispose it); the pass never touches it
   * again, but its storage may be shared with a gradient the pass still reads (a view of the same
   * tensor given to another edge): write it in place only where `grad.sharedStorage.shared` is
   * false. When the pass fails later, what was handed over stays the hook's, the rest is disposed.
   */
  final(leaf: Tensor, grad: Tensor | undefined): void;
}

/** The result of `gpu.grad`. */
export interface GradResult<D extends DType = DType> {
  /** What the function returned, detached from the graph. */
  value: Tensor<D>;
  /** The gradient of `value` with respect to each input, in the inputs' order (zeros for an input it does not depend on). */
  grads: Tensor[];
}

/**
 * Accumulates the gradient of a loss into the `.grad` of every leaf that requires grad behind
 * `root`: `seed` is the loss's gradient with respect to `root` (default 1 for a one-element root).
 * With `hooks`, each leaf's gradient goes to them instead and no `.grad` changes.
 */
export function backward(s: Session, root: Tensor, seed: unknown, options: unknown, hooks?: LeafHooks): void {
  const op = 'backward';
  s.checkTensor(op, root, 'x');
  const retain = checkFlag(op, 'retainGraph', checkOptions<BackwardOptions>(op, options, BACKWARD_OPTIONS).retainGraph, false);
  const given = seed === undefined || seed === null ? undefined : checkSeed(s, op, root, seed);
  if (!root.requiresGrad) {
    throw new InvalidArgumentError(
      `${op}: x ${root.toString()} does not require grad: no input of the ops that computed it requires grad ` +
        `(mark leaves with requiresGrad_()), or they ran under gpu.noGrad`,
    );
  }
  if (given === undefined && root.size !== 1) {
    throw new InvalidArgumentError(`${op}: x ${root.toString()} is not a scalar; pass the gradient with respect to it as the seed: x.backward(seed)`);
  }
  if (s.gradMode.capturing) throw new CaptureError('capture: backward cannot run inside a captured function (the autograd graph is host state); run it outside gpu.capture');
  const updates = s.gradMode.run(false, () =>
    s.scopes.run(op, () => {
      const start = given ?? full<typeof root.dtype>(s, op, root.shape, 1, root.dtype);
      const sums: [Tensor, Tensor][] = [];
      for (const [leaf, g] of propagate(s, op, root, start, retain, undefined, hooks)) {
        if (leaf.disposed) continue;
        const current = leaf.grad;
        if (g === undefined) {
          if (current === undefined) sums.push([leaf, full(s, op, leaf.shape, 0, leaf.dtype)]);
        } else {
          sums.push([leaf, current === undefined ? g : binary(s, 'add', current, g, op)]);
        }
      }
      return sums;
    }),
  );
  for (const [leaf, g] of updates) leaf.grad = g;
}

/**
 * `gpu.grad`: runs `fn` on leaves over the inputs' storage and returns the gradient of its
 * one-element result with respect to each input, without touching any `.grad`. Recording is on
 * inside `fn` even under gpu.noGrad; what `fn` creates and does not return is disposed.
 */
export function gradOf(s: Session, fn: unknown, inputs: unknown): GradResult {
  const op = 'grad';
  s.assertLive();
  if (typeof fn !== 'function') throw new InvalidArgumentError(`${op}: fn must be a function, got ${describeValue(fn)}`);
  if (!Array.isArray(inputs)) throw new InvalidArgumentError(`${op}: inputs must be an array of float tensors, got ${describeValue(inputs)}`);
  inputs.forEach((t, i) => s.checkFloat(op, t, `inputs[${i}]`));
  if (s.gradMode.capturing) throw new CaptureError('capture: gpu.grad cannot run inside a captured function (the autograd graph is host state); run it outside gpu.capture');
  return s.scopes.run(op, () => {
    const leaves = (inputs as Tensor[]).map((t) => t.detach().requiresGrad_());
    const value: unknown = s.gradMode.run(true, () => (fn as (...args: Tensor[]) => unknown)(...leaves));
    s.checkTensor(op, value, 'the result of fn');
    if (value.size !== 1) throw new InvalidArgumentError(`${op}: fn must return a one-element tensor (the value to differentiate), got ${value.toString()}`);
    if (!value.requiresGrad && !leaves.includes(value)) {
      const grads = leaves.map((leaf) => full(s, op, leaf.shape, 0, leaf.dtype));
      return { value: value.detach(), grads };
    }
    const found = s.gradMode.run(false, () => {
      const start = full(s, op, value.shape, 1, value.dtype);
      return propagate(s, op, value, start, false, new Set(leaves), undefined);
    });
    const grads = leaves.map((leaf) => found.get(leaf) ?? full(s, op, leaf.shape, 0, leaf.dtype));
    return { value: value.detach(), grads };
  });
}

/** The seed must be a live float tensor of the root's shape and dtype. */
function checkSeed(s: Session, op: string, root: Tensor, seed: unknown): Tensor {
  s.checkTensor(op, seed, 'seed');
  if (seed.dtype !== root.dtype || !sameShape(seed.shape, root.shape)) {
    throw new InvalidArgumentError(`${op}: seed must have the shape and dtype of x ${root.toString()}, got ${seed.toString()}`);
  }
  return seed;
}

/**
 * The gradients reaching the leaves behind `root` from `seed` (the leaves of `targets` only, when
 * given: then only the nodes that lead to one run). A leaf the pass reaches without a gradient
 * arriving (every contribution was zero) maps to undefined. The returned tensors are the caller's;
 * `seed` is never disposed or returned itself. With `hooks`, each leaf goes to them once its
 * last edge has delivered, and is not in the returned map.
 */
function propagate(
  s: Session,
  op: string,
  root: Tensor,
  seed: Tensor,
  retain: boolean,
  targets: ReadonlySet<Tensor> | undefined,
  hooks: LeafHooks | undefined,
): Map<Tensor, Tensor | undefined> {
  const leaves = new Map<Tensor, Tensor | undefined>();
  const wanted = (leaf: Tensor) => targets === undefined || targets.has(leaf);
  /** For the hooks: per leaf, the edges of needed nodes that have not delivered to it yet. */
  const undelivered = new Map<Tensor, number>();
  const handOver = (leaf: Tensor) => {
    const g = leaves.get(leaf);
    leaves.delete(leaf);
    // It stays in `stored`, so a later result that is the same object is still detached from it.
    if (g !== undefined) s.keep(g);
    hooks!.final(leaf, g);
  };
  /** Every tensor stored in a slot is its own object (a view where one would be stored twice), so each can be disposed once used. */
  const stored = new Set<Tensor>();
  const own = (t: Tensor): Tensor => {
    const mine = t === seed || stored.has(t) ? t.detach() : t;
    stored.add(mine);
    return mine;
  };
  const sum = (current: Tensor | undefined, incoming: Tensor): Tensor => {
    if (current === undefined) return incoming;
    const total = own(binary(s, 'add', current, incoming, op));
    current.dispose();
    incoming.dispose();
    return total;
  };
  const origin = root.origin as OutputOrigin | undefined;
  if (origin === undefined) {
    if (wanted(root)) {
      leaves.set(root, own(seed));
      if (hooks) {
        hooks.reached(new Set([root]));
        handOver(root);
      }
    }
    return leaves;
  }
  const order = postOrder(origin.node);
  const needed = new Set<GradNode>();
  for (const node of order) if (node.edges.some((e) => e !== undefined && (e.node ? needed.has(e.node) : wanted(e.leaf)))) needed.add(node);
  if (!needed.has(origin.node)) return leaves;
  const pending = new Map<GradNode, number>();
  for (const node of needed) {
    node.checkUsable(op);
    for (const e of node.edges) {
      if (e?.node && needed.has(e.node)) pending.set(e.node, (pending.get(e.node) ?? 0) + 1);
      else if (hooks && e?.leaf && wanted(e.leaf)) undelivered.set(e.leaf, (undelivered.get(e.leaf) ?? 0) + 1);
    }
  }
  hooks?.reached(new Set(undelivered.keys()));
  const grads = new Map<GradNode, (Tensor | undefined)[]>();
  const first = new Array<Tensor | undefined>(origin.node.outputs.length).fill(undefined);
  first[origin.output] = own(seed);
  grads.set(origin.node, first);
  const ready: GradNode[] = [origin.node];
  while (ready.length > 0) {
    const node = ready.pop()!;
    const incoming = grads.get(node)!;
    grads.delete(node);
    const needs = node.edges.map((e) => e !== undefined && (e.node ? needed.has(e.node) : wanted(e.leaf)));
    let results: readonly (Tensor | undefined)[] = [];
    if (incoming.some((g) => g !== undefined)) {
      const saved = node.openSaved(op);
      try {
        results = node.backward(incoming, saved, needs);
      } finally {
        for (const t of saved) t?.dispose();
      }
    }
    for (const g of incoming) if (g !== undefined) stored.delete(g);
    const kept = new Set<Tensor>();
    node.edges.forEach((edge, i) => {
      const r = results[i];
      if (r !== undefined && edge !== undefined && needs[i]) kept.add(r);
    });
    for (const t of new Set([...incoming, ...results])) if (t !== undefined && !kept.has(t)) t.dispose();
    // Each edge's gradient its own object before any is summed (which disposes it) or handed to a
    // hook: one tensor given to two inputs (add's) becomes it and a view, its storage visibly shared.
    const delivered = node.edges.map((edge, i) => (edge === undefined || !needs[i] || results[i] === undefined ? undefined : own(results[i]!)));
    node.edges.forEach((edge, i) => {
      if (edge === undefined || !needs[i]) return;
      const g = delivered[i];
      if (edge.node) {
        if (g !== undefined) {
          checkGradient(node, i, g, edge.node.outputs[edge.output]!);
          const slots = grads.get(edge.node) ?? new Array<Tensor | undefined>(edge.node.outputs.length).fill(undefined);
          slots[edge.output] = sum(slots[edge.output], g);
          grads.set(edge.node, slots);
        }
        const left = pending.get(edge.node)! - 1;
        pending.set(edge.node, left);
        if (left === 0) {
          if (!grads.has(edge.node)) grads.set(edge.node, new Array<Tensor | undefined>(edge.node.outputs.length).fill(undefined));
          ready.push(edge.node);
        }
      } else {
        if (g !== undefined) checkGradient(node, i, g, edge.leaf);
        const current = leaves.get(edge.leaf);
        leaves.set(edge.leaf, g === undefined ? current : sum(current, g));
        if (hooks) {
          const left = undelivered.get(edge.leaf)! - 1;
          undelivered.set(edge.leaf, left);
          if (left === 0) handOver(edge.leaf);
        }
      }
    });
    if (!retain) node.releaseSaved();
  }
  return leaves;
}

/** The nodes reachable from `root`, each after every node it reaches (iterative: graphs can be deep). */
function postOrder(root: GradNode): GradNode[] {
  const order: GradNode[] = [];
  const seen = new Set<GradNode>([root]);
  const stack: [GradNode, number][] = [[root, 0]];
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    const [node, next] = top;
    if (next < node.edges.length) {
      top[1]++;
      const child = node.edges[next]?.node;
      if (child !== undefined && !seen.has(child)) {
        seen.add(child);
        stack.push([child, 0]);
      }
    } else {
      stack.pop();
      order.push(node);
    }
  }
  return order;
}

/** A backward function must return each gradient in its input's shape and dtype (a registration bug otherwise). */
function checkGradient(node: GradNode, input: number, g: Tensor, want: Pick<Tensor, 'shape' | 'dtype'>): void {
  if (g.dtype !== want.dtype || !sameShape(g.shape, want.shape)) {
    throw new GpuError(
      'INTERNAL',
      `the backward of ${node.op} returned ${g.toString()} for its input ${input}, which is ${want.dtype} [${want.shape.join(', ')}]`,
    );
  }
}
