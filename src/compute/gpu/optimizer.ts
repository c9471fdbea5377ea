/**
 * The fused optimizer step on CUDA and HIP (`kernels/optimizer.cu`): a table of the tensors
 * (addresses, sizes, per-tensor scalars, the first chunk each owns) copied to device memory in
 * stream order, then one launch whose blocks each update one chunk of one tensor.
 */
import type { ArgType } from '../../ffi/kernel-args.js';
import type { OptimizerStepParams } from '../core/optimizer-params.js';
import type { TensorView } from '../core/view.js';
import { optimizerSpec } from './kernel-specs.js';
import type { LaunchContext } from './launch-context.js';

/** Bytes of one table entry (`struct OptimizerTensor`): seven 64-bit words, two floats, two ints. */
const ENTRY_BYTES = 72;
/** Elements one block updates (`GC_OPTIMIZER_CHUNK`). */
const CHUNK = 4096;
const BLOCK = 256;
const SGD_SIGNATURE: readonly ArgType[] = ['ptr', 'i32', 'f32', 'f32', 'f32', 'f32', 'i32'];
const ADAMW_SIGNATURE: readonly ArgType[] = ['ptr', 'i32', 'f32', 'f32', 'f32', 'f32', 'f32', 'i32'];

export function optimizerStep<S>(ctx: LaunchContext<S>, params: OptimizerStepParams): void {
  const tensors = params.tensors.filter((t) => t.param.size > 0);
  if (tensors.length === 0) return;
  const dtype = tensors[0]!.param.dtype;
  const table = new ArrayBuffer(tensors.length * ENTRY_BYTES);
  const words = new BigUint64Array(table);
  const floats = new Float32Array(table);
  const ints = new Int32Array(table);
  const views: TensorView[] = [];
  let chunks = 0;
  tensors.forEach((t, i) => {
    const w = (i * ENTRY_BYTES) / 8;
    words[w] = ctx.address(t.param);
    words[w + 1] = ctx.address(t.grad);
    for (let s = 0; s < 3; s++) words[w + 2 + s] = t.state[s] === undefined ? 0n : ctx.address(t.state[s]!);
    words[w + 5] = BigInt(t.param.size);
    words[w + 6] = BigInt(chunks);
    floats[(w + 7) * 2] = t.stepSize;
    floats[(w + 7) * 2 + 1] = t.biasCorrection2Sqrt;
    ints[(w + 8) * 2] = t.first ? 1 : 0;
    views.push(t.param, t.grad, ...t.state);
    chunks += Math.ceil(t.param.size / CHUNK);
  });
  const stream = ctx.enqueue(...views);
  const memory = ctx.upload(new Uint8Array(table));
  try {
    const config = { grid: chunks, block: BLOCK, stream };
    if (params.rule === 'sgd') {
      const k = ctx.kernel(`sgd_step|${dtype}`, () => optimizerSpec(dtype), 'sgd_step', SGD_SIGNATURE);
      k.launch(config, memory.address, tensors.length, params.lr, params.weightDecay, params.momentum, params.dampeningComplement, params.nesterov ? 1 : 0);
    } else {
      const k = ctx.kernel(`adamw_step|${dtype}`, () => optimizerSpec(dtype), 'adamw_step', ADAMW_SIGNATURE);
      k.launch(config, memory.address, tensors.length, params.decay, params.beta1Complement, params.beta2, params.beta2Complement, params.eps, params.amsgrad ? 1 : 0);
    }
  } finally {
    memory.release();
  }
}
