/** Tensors moved to another GpuCompute: `x.to(gpu)`. */
import { DisposedError, InvalidArgumentError } from '../../errors.js';
import { dtypeSize, type DType } from '../core/dtype.js';
import { describeValue } from '../core/validation.js';
import { Session } from '../tensor/session.js';
import type { Tensor } from '../tensor/tensor.js';

/** What a GpuCompute is to the op front-ends: the session it runs ops in. */
export interface SessionHolder {
  readonly session: Session;
}

/** The session of `target`, checked to be a live GpuCompute, in `op`'s name. */
export function targetSession(op: string, target: unknown): Session {
  const session = typeof target === 'object' && target !== null ? (target as Partial<SessionHolder>).session : undefined;
  if (!(session instanceof Session)) throw new InvalidArgumentError(`${op}: target must be a GpuCompute, got ${describeValue(target)}`);
  if (session.disposed) throw new DisposedError(`${op}: the target GpuCompute`);
  return session;
}

/**
 * A copy of `x` (a tensor of `s`) on `target`'s device: on the same GpuCompute a plain copy;
 * between two backends of a kind with device-to-device copies (CUDA: `copyFromPeer`) a copy
 * that never leaves the devices, peer to peer where they can reach each other; otherwise (other
 * kinds, or a GPU and the CPU) through host memory, waiting for x's pending work. The result
 * belongs to `target`.
 */
export function to<D extends DType>(s: Session, x: Tensor<D>, target: unknown): Tensor<D> {
  const op = 'to';
  s.checkTensor(op, x, 'x');
  const t = targetSession(op, target);
  if (t === s) return t.produce<D>(op, x.shape, x.dtype, (out) => t.backend.copy(out.view, x.view));
  const from = s.backend;
  const into = t.backend;
  return t.produce<D>(op, x.shape, x.dtype, (out) => {
    if (from.kind === into.kind && into.copyFromPeer !== undefined) {
      into.copyFromPeer(out.view, x.view, from);
      return;
    }
    const size = dtypeSize[x.dtype];
    const host = new Uint8Array(x.size * size);
    from.read(x.view.buffer, host, x.view.offset * size);
    into.write(out.view.buffer, host, out.view.offset * size);
  });
}
