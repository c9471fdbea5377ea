import { cuda } from '../bindings.js';
import { check } from '../cuda-error.js';
import type { StreamCaptureMode, StreamCaptureStatus } from '../generated/enums.js';
import type { CUgraph, CUgraphExec, CUstream } from './handles.js';
import { out } from './out-params.js';

/** cuStreamBeginCapture_v2: work submitted to `stream` is recorded into a graph instead of run. */
export function streamBeginCapture(stream: CUstream, mode: StreamCaptureMode): void {
  check(cuda.cuStreamBeginCapture_v2(stream, mode), 'cuStreamBeginCapture_v2');
}

/** cuStreamEndCapture: ends a capture and returns the recorded graph. */
export function streamEndCapture(stream: CUstream): CUgraph {
  check(cuda.cuStreamEndCapture(stream, out.handle), 'cuStreamEndCapture');
  return out.handle[0]!;
}

/** cuStreamIsCapturing. */
export function streamIsCapturing(stream: CUstream): StreamCaptureStatus {
  check(cuda.cuStreamIsCapturing(stream, out.i32), 'cuStreamIsCapturing');
  return out.i32[0]! as StreamCaptureStatus;
}

/** cuGraphInstantiateWithFlags (flags: GraphInstantiateFlags). */
export function graphInstantiate(graph: CUgraph, flags = 0): CUgraphExec {
  check(cuda.cuGraphInstantiateWithFlags(out.handle, graph, flags), 'cuGraphInstantiateWithFlags');
  return out.handle[0]!;
}

/** cuGraphLaunch. */
export function graphLaunch(exec: CUgraphExec, stream: CUstream): void {
  check(cuda.cuGraphLaunch(exec, stream), 'cuGraphLaunch');
}

/** cuGraphUpload: prepares an executable graph's resources ahead of its first launch. */
export function graphUpload(exec: CUgraphExec, stream: CUstream): void {
  check(cuda.cuGraphUpload(exec, stream), 'cuGraphUpload');
}

/** cuGraphExecDestroy. */
export function graphExecDestroy(exec: CUgraphExec): void {
  check(cuda.cuGraphExecDestroy(exec), 'cuGraphExecDestroy');
}

/** cuGraphDestroy. */
export function graphDestroy(graph: CUgraph): void {
  check(cuda.cuGraphDestroy(graph), 'cuGraphDestroy');
}

/** The number of nodes in a graph (cuGraphGetNodes with no output array). */
export function graphGetNodeCount(graph: CUgraph): number {
  out.u64[0] = 0n;
  check(cuda.cuGraphGetNodes(graph, null, out.u64), 'cuGraphGetNodes');
  return Number(out.u64[0]!);
}
