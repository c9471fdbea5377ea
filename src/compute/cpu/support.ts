/** The optional ops the CPU backend leaves out, and why. */
import type { OptionalOp } from '../backend/backend.js';

export const CPU_UNSUPPORTED: Readonly<Partial<Record<OptionalOp, string>>> = {
  optimizerStep: "no fused kernel: the step runs as its f32 elementwise ops, which give the fused kernels' numbers",
  denseLinalg: "svd's dense steps run on the host in float64 on every backend without device routines, which is this one's device",
  recordGraph: 'the CPU has no graphs to replay: gpu.capture runs the function eagerly',
  copyFromPeer: 'its tensors are host memory already: x.to(gpu) between CPU backends is a host copy',
};
