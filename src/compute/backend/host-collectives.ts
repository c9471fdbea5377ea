/**
 * The host transport of a communicator: every rank is a GpuCompute of this process, and a group
 * of calls runs by reading each input to host memory (waiting for its pending work), reducing in
 * float64, and writing each result back. It serves every backend without NCCL (the CPU, WebGPU,
 * HIP, and mixed ones), gives the library's collectives a meaning testable without a GPU, and is
 * the reference the NCCL transport is checked against. Reductions: f16 and bf16 are widened to
 * f64, reduced, and rounded once; i32 sum and prod wrap modulo 2^32 as NCCL's integer
 * arithmetic does; max and min propagate NaN.
 */
import { InvalidArgumentError } from '../../errors.js';
import { dtypeSize, fromBf16Array, fromF16Array, toBf16Array, toF16Array, type DType } from '../core/dtype.js';
import type { TensorView } from '../core/view.js';
import type { Backend } from './backend.js';
import type { CollectiveCall, CollectiveReduceOp, CollectiveTransport } from './collectives.js';

/** A host transport over `members`, rank i being members[i]. */
export function hostCollectives(members: readonly Backend[]): CollectiveTransport {
  let disposed = false;
  return {
    kind: 'host',
    size: members.length,
    ranks: members.map((_, rank) => rank),
    run(calls) {
      if (disposed) throw new InvalidArgumentError('the communicator has been disposed');
      runHost(members, calls);
    },
    dispose() {
      disposed = true;
    },
    abort() {
      disposed = true;
    },
  };
}

interface Write {
  readonly member: number;
  readonly view: TensorView;
  readonly bytes: Uint8Array;
}

function runHost(members: readonly Backend[], calls: readonly CollectiveCall[]): void {
  const size = members.length;
  const read = (member: number, view: TensorView, count = view.size): Uint8Array => {
    const unit = dtypeSize[view.dtype];
    const bytes = new Uint8Array(count * unit);
    members[member]!.read(view.buffer, bytes, view.offset * unit);
    return bytes;
  };
  // Every input is read before any result is written: a group sees the data as it was when it started.
  const inputs = calls.map((c) => (c.send !== undefined && (c.kind !== 'broadcast' || c.member === c.root) ? read(c.member, c.send, c.kind === 'reduceScatter' ? c.count * size : c.count) : undefined));
  const writes: Write[] = [];
  const collectives = members.map((_, m) => calls.map((c, i) => ({ c, i })).filter(({ c }) => c.member === m && c.kind !== 'send' && c.kind !== 'recv'));
  const steps = collectives[0]!.length;
  for (const list of collectives) {
    if (list.length !== steps) throw new InvalidArgumentError(`the ranks of the group made different numbers of collective calls (${collectives.map((l) => l.length).join(', ')})`);
  }
  for (let k = 0; k < steps; k++) {
    const parts = collectives.map((list) => list[k]!);
    const first = parts[0]!.c;
    for (const { c } of parts) {
      if (c.kind !== first.kind || c.count !== first.count || c.dtype !== first.dtype || c.op !== first.op || c.root !== first.root) {
        throw new InvalidArgumentError(`collective call ${k} of the group differs between ranks (${first.kind} and ${c.kind})`);
      }
    }
    const inputOf = (member: number) => inputs[parts[member]!.i]!;
    switch (first.kind) {
      case 'allReduce': {
        const result = encode(reduceAll(parts.map((_, m) => decode(inputOf(m), first.dtype)), first.op!, first.dtype), first.dtype);
        for (const { c } of parts) writes.push({ member: c.member, view: c.recv!, bytes: result });
        break;
      }
      case 'reduce': {
        const result = encode(reduceAll(parts.map((_, m) => decode(inputOf(m), first.dtype)), first.op!, first.dtype), first.dtype);
        const root = parts[first.root!]!.c;
        writes.push({ member: root.member, view: root.recv!, bytes: result });
        break;
      }
      case 'broadcast': {
        const bytes = inputOf(first.root!);
        for (const { c } of parts) writes.push({ member: c.member, view: c.recv!, bytes });
        break;
      }
      case 'allGather': {
        const gathered = new Uint8Array(size * first.count * dtypeSize[first.dtype]);
        parts.forEach((_, m) => gathered.set(inputOf(m), m * first.count * dtypeSize[first.dtype]));
        for (const { c } of parts) writes.push({ member: c.member, view: c.recv!, bytes: gathered });
        break;
      }
      case 'reduceScatter': {
        const reduced = encode(reduceAll(parts.map((_, m) => decode(inputOf(m), first.dtype)), first.op!, first.dtype), first.dtype);
        const block = first.count * dtypeSize[first.dtype];
        for (const { c } of parts) writes.push({ member: c.member, view: c.recv!, bytes: reduced.subarray(c.member * block, (c.member + 1) * block) });
        break;
      }
    }
  }
  pairPointToPoint(calls, inputs, writes);
  for (const w of writes) members[w.member]!.write(w.view.buffer, w.bytes, w.view.offset * dtypeSize[w.view.dtype]);
}

/** Each send delivered to its receive: the n-th send from a to b goes to b's n-th receive from a. */
function pairPointToPoint(calls: readonly CollectiveCall[], inputs: readonly (Uint8Array | undefined)[], writes: Write[]): void {
  const sends = new Map<string, { call: CollectiveCall; bytes: Uint8Array }[]>();
  calls.forEach((c, i) => {
    if (c.kind !== 'send') return;
    const key = `${c.member}->${c.peer}`;
    if (!sends.has(key)) sends.set(key, []);
    sends.get(key)!.push({ call: c, bytes: inputs[i]! });
  });
  for (const c of calls) {
    if (c.kind !== 'recv') continue;
    const queue = sends.get(`${c.peer}->${c.member}`);
    const sent = queue?.shift();
    if (sent === undefined) throw new InvalidArgumentError(`rank ${c.member} receives from rank ${c.peer}, which sends it nothing in this group`);
    if (sent.call.count !== c.count || sent.call.dtype !== c.dtype) {
      throw new InvalidArgumentError(
        `rank ${c.member} receives ${c.count} ${c.dtype} elements from rank ${c.peer}, which sends ${sent.call.count} ${sent.call.dtype} elements`,
      );
    }
    writes.push({ member: c.member, view: c.recv!, bytes: sent.bytes });
  }
  for (const [key, queue] of sends) {
    if (queue.length > 0) throw new InvalidArgumentError(`rank ${key.replace('->', ' sends to rank ')} without a matching receive in this group`);
  }
}

function decode(bytes: Uint8Array, dtype: DType): Float64Array {
  const { buffer, byteOffset, byteLength } = bytes;
  switch (dtype) {
    case 'f32':
      return Float64Array.from(new Float32Array(buffer, byteOffset, byteLength / 4));
    case 'i32':
      return Float64Array.from(new Int32Array(buffer, byteOffset, byteLength / 4));
    case 'f16':
      return Float64Array.from(fromF16Array(new Uint16Array(buffer, byteOffset, byteLength / 2)));
    case 'bf16':
      return Float64Array.from(fromBf16Array(new Uint16Array(buffer, byteOffset, byteLength / 2)));
  }
}

function encode(values: Float64Array, dtype: DType): Uint8Array {
  switch (dtype) {
    case 'f32':
      return new Uint8Array(Float32Array.from(values).buffer);
    case 'i32':
      return new Uint8Array(Int32Array.from(values, (v) => v | 0).buffer);
    case 'f16':
      return new Uint8Array(toF16Array(values).buffer);
    case 'bf16':
      return new Uint8Array(toBf16Array(values).buffer);
  }
}

function reduceAll(values: readonly Float64Array[], op: CollectiveReduceOp, dtype: DType): Float64Array {
  const out = Float64Array.from(values[0]!);
  const integer = dtype === 'i32';
  for (const v of values.slice(1)) {
    for (let i = 0; i < out.length; i++) {
      const a = out[i]!;
      const b = v[i]!;
      switch (op) {
        case 'sum':
        case 'avg':
          out[i] = integer ? (a + b) | 0 : a + b;
          break;
        case 'prod':
          out[i] = integer ? Math.imul(a, b) : a * b;
          break;
        case 'max':
          out[i] = Number.isNaN(a) || Number.isNaN(b) ? NaN : Math.max(a, b);
          break;
        case 'min':
          out[i] = Number.isNaN(a) || Number.isNaN(b) ? NaN : Math.min(a, b);
          break;
      }
    }
  }
  if (op === 'avg') for (let i = 0; i < out.length; i++) out[i] = out[i]! / values.length;
  return out;
}
