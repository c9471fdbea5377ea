/** The optional ops the WebGPU backend leaves out, and why. */
import type { OptionalOp } from '../backend/backend.js';

export const WEBGPU_UNSUPPORTED: Readonly<Partial<Record<OptionalOp, string>>> = {
  optimizerStep: 'no fused kernel yet: the step runs as its f32 elementwise ops',
  denseLinalg: 'WebGPU has no dense factorization library; svd runs its dense steps on the host',
  gruRollout: 'a rollout runs step by step (the recurrence and the projection per step)',
  recordGraph: 'WebGPU has no graph API (render bundles hold no compute passes): gpu.capture runs the function eagerly',
  copyFromPeer: 'WebGPU has no copies between devices: x.to(gpu) goes through the host',
};
