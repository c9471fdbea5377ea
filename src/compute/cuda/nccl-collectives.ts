/**
 * The NCCL transport of a communicator: its members are CUDA backends, one NCCL rank each. A group
 * of calls is one ncclGroupStart / ncclGroupEnd, each call queued on its member's current stream
 * after the work queued on its tensors (the pool's stream ordering: a tensor last used on
 * another stream makes this one wait for it first), so `gpu.setStream(commStream)` around the
 * collectives overlaps them with compute on another stream: the compute stream waits for the
 * collective only when it next touches those tensors.
 */
import { forgetCurrentContext } from '../../driver/raw/context.js';
import { CaptureError } from '../../errors.js';
import { NcclCommunicator } from '../../nccl/communicator.js';
import { ncclGroup } from '../../nccl/group.js';
import { allGather, allReduce, broadcast, recv, reduce, reduceScatter, send } from '../../nccl/raw/collectives.js';
import { NCCL_DTYPES, NCCL_REDUCE_OPS } from '../../nccl/types.js';
import type { NcclUniqueId } from '../../nccl/unique-id.js';
import type { CollectiveCall, CollectiveTransport } from '../backend/collectives.js';
import type { DType } from '../core/dtype.js';
import { CudaBackend } from './cuda-backend.js';

const NCCL_TYPE: Record<DType, number> = {
  f32: NCCL_DTYPES.f32.code,
  f16: NCCL_DTYPES.f16.code,
  bf16: NCCL_DTYPES.bf16.code,
  i32: NCCL_DTYPES.i32.code,
};

/** One process driving every rank: ncclCommInitAll over the members' devices, rank i on members[i]. */
export function ncclCollectivesAll(members: readonly CudaBackend[]): CollectiveTransport {
  return transport(members, NcclCommunicator.initAll(members.map((b) => b.device)));
}

/** This process's one rank of `size`, joined by the id the ranks share (ncclCommInitRank; blocks until all joined). */
export function ncclCollectivesRank(member: CudaBackend, id: NcclUniqueId, rank: number, size: number): CollectiveTransport {
  return transport([member], [NcclCommunicator.initRank(member.device, { id, rank, size })]);
}

/** Whether `backend` is a CUDA backend NCCL can serve. */
export function isCudaBackend(backend: unknown): backend is CudaBackend {
  return backend instanceof CudaBackend;
}

function transport(members: readonly CudaBackend[], comms: readonly NcclCommunicator[]): CollectiveTransport {
  return {
    kind: 'nccl',
    size: comms[0]!.size,
    ranks: comms.map((c) => c.rank),
    run(calls) {
      for (const c of calls) {
        if (members[c.member]!.capturing) throw new CaptureError('capture: collectives cannot be recorded in a graph yet; call them outside the captured function');
      }
      ncclGroup(() => {
        for (const c of calls) {
          queue(members[c.member]!, comms[c.member]!, c);
          // NCCL may switch devices while it records a call: the next member's stream work sets its own context again.
          forgetCurrentContext();
        }
      });
    },
    dispose() {
      for (const c of comms) c.dispose();
    },
    abort() {
      for (const c of comms) c.abort();
    },
  };
}

function queue(backend: CudaBackend, comm: NcclCommunicator, c: CollectiveCall): void {
  const stream = backend.enqueue(c.send, c.recv).handle;
  const handle = comm.handle;
  const type = NCCL_TYPE[c.dtype];
  const op = NCCL_REDUCE_OPS[c.op ?? 'sum'];
  const sendAddress = c.send === undefined ? 0n : backend.address(c.send);
  // reduce off the root writes nothing: NCCL is given the input, which it leaves alone.
  const recvAddress = c.recv === undefined ? sendAddress : backend.address(c.recv);
  switch (c.kind) {
    case 'allReduce':
      return allReduce(sendAddress, recvAddress, c.count, type, op, handle, stream);
    case 'broadcast':
      return broadcast(sendAddress === 0n ? recvAddress : sendAddress, recvAddress, c.count, type, c.root!, handle, stream);
    case 'reduce':
      return reduce(sendAddress, recvAddress, c.count, type, op, c.root!, handle, stream);
    case 'allGather':
      return allGather(sendAddress, recvAddress, c.count, type, handle, stream);
    case 'reduceScatter':
      return reduceScatter(sendAddress, recvAddress, c.count, type, op, handle, stream);
    case 'send':
      return send(sendAddress, c.count, type, c.peer!, handle, stream);
    case 'recv':
      return recv(recvAddress, c.count, type, c.peer!, handle, stream);
  }
}
