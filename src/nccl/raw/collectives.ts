import { nccl } from '../bindings.js';
import { checkNccl } from '../nccl-error.js';
import type { NcclCommHandle, NcclDevicePointer, NcclStream } from './handles.js';

/*
 * The collectives and point-to-point calls, queued on `stream` (they return once queued; the
 * data moves when the stream gets there). Counts are elements of `datatype` (an ncclDataType_t);
 * `op` is an ncclRedOp_t. Inside a group (group.ts) they are queued at ncclGroupEnd.
 */

/** ncclAllReduce: every rank's recvbuff = op over the ranks' sendbuff (`count` elements; in place when equal). */
export function allReduce(
  sendbuff: NcclDevicePointer,
  recvbuff: NcclDevicePointer,
  count: number,
  datatype: number,
  op: number,
  comm: NcclCommHandle,
  stream: NcclStream,
): void {
  checkNccl(nccl.ncclAllReduce(sendbuff, recvbuff, count, datatype, op, comm, stream), 'ncclAllReduce', comm);
}

/** ncclBroadcast: every rank's recvbuff = root's sendbuff (sendbuff is read on root only). */
export function broadcast(
  sendbuff: NcclDevicePointer,
  recvbuff: NcclDevicePointer,
  count: number,
  datatype: number,
  root: number,
  comm: NcclCommHandle,
  stream: NcclStream,
): void {
  checkNccl(nccl.ncclBroadcast(sendbuff, recvbuff, count, datatype, root, comm, stream), 'ncclBroadcast', comm);
}

/** ncclReduce: root's recvbuff = op over the ranks' sendbuff (recvbuff is written on root only). */
export function reduce(
  sendbuff: NcclDevicePointer,
  recvbuff: NcclDevicePointer,
  count: number,
  datatype: number,
  op: number,
  root: number,
  comm: NcclCommHandle,
  stream: NcclStream,
): void {
  checkNccl(nccl.ncclReduce(sendbuff, recvbuff, count, datatype, op, root, comm, stream), 'ncclReduce', comm);
}

/** ncclAllGather: every rank's recvbuff (nranks · sendcount elements) = the ranks' sendbuff, in rank order. */
export function allGather(
  sendbuff: NcclDevicePointer,
  recvbuff: NcclDevicePointer,
  sendcount: number,
  datatype: number,
  comm: NcclCommHandle,
  stream: NcclStream,
): void {
  checkNccl(nccl.ncclAllGather(sendbuff, recvbuff, sendcount, datatype, comm, stream), 'ncclAllGather', comm);
}

/** ncclReduceScatter: rank r's recvbuff (recvcount elements) = op over the ranks' block r of sendbuff (nranks · recvcount). */
export function reduceScatter(
  sendbuff: NcclDevicePointer,
  recvbuff: NcclDevicePointer,
  recvcount: number,
  datatype: number,
  op: number,
  comm: NcclCommHandle,
  stream: NcclStream,
): void {
  checkNccl(nccl.ncclReduceScatter(sendbuff, recvbuff, recvcount, datatype, op, comm, stream), 'ncclReduceScatter', comm);
}

/** ncclSend: sends `count` elements to rank `peer`, which must post the matching {@link recv}. */
export function send(sendbuff: NcclDevicePointer, count: number, datatype: number, peer: number, comm: NcclCommHandle, stream: NcclStream): void {
  checkNccl(nccl.ncclSend(sendbuff, count, datatype, peer, comm, stream), 'ncclSend', comm);
}

/** ncclRecv: receives `count` elements from rank `peer`'s matching {@link send}. */
export function recv(recvbuff: NcclDevicePointer, count: number, datatype: number, peer: number, comm: NcclCommHandle, stream: NcclStream): void {
  checkNccl(nccl.ncclRecv(recvbuff, count, datatype, peer, comm, stream), 'ncclRecv', comm);
}
