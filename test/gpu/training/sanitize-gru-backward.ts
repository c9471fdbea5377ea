/**
 * Runs GRU training steps (gruTraining + gruBackward, three backwards per case so the steps run
 * eagerly, then captured in a CUDA graph, then replayed) for compute-sanitizer:
 *
 *   compute-sanitizer --tool memcheck  --target-processes all tsx test/gpu/training/sanitize-gru-backward.ts
 *   compute-sanitizer --tool racecheck --target-processes all tsx test/gpu/training/sanitize-gru-backward.ts
 *
 * Every gradient is checked against the CPU backend on the same inputs (bound 1e-4 of its norm, as
 * the GPU tests); exits non-zero on a wrong result.
 */
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { gruBackward, gruTraining } from '../../../src/compute/ops/gru-backward.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { freshSeed, relError } from '../../unit/compute/helpers.js';
import { describeTrainCase, trainTensors, trainValues, type TrainCase, type TrainValues } from '../../unit/gru/backward-cases.js';

const cases: TrainCase[] = [
  { layers: 2, ensemble: 3, batch: 9, steps: 7, input: 12, hidden: 40, h0: true, returnSequences: true, dropout: { p: 0.25, seed: 9 }, grads: 'both' },
  { layers: 3, batch: 33, steps: 5, input: 5, hidden: 17, biases: [true, false, true], h0: false, returnSequences: false, grads: 'both' },
  { layers: 1, ensemble: 2, sharedInput: true, batch: 4, steps: 3, input: 6, hidden: 520, h0: true, returnSequences: true, grads: 'hidden' },
  { layers: 1, batch: 1, steps: 1, input: 3, hidden: 8, h0: true, returnSequences: true, grads: 'output' },
];

function gradients(g: GpuCompute, c: TrainCase, v: TrainValues, repeats: number): Map<string, number[]>[] {
  const t = trainTensors(g, c, v);
  const { output, hidden, saved } = gruTraining(g.session, t.x, t.h0, t.weights, { returnSequences: c.returnSequences, ...(c.dropout ? { dropout: c.dropout } : {}) });
  const read = (x: Tensor) => Array.from(x.toArraySync() as Float32Array);
  const results = Array.from({ length: repeats }, () => {
    const grads = gruBackward(g.session, saved, { output: t.gOut, hidden: t.gHidden });
    const out = new Map<string, number[]>([['x', read(grads.x)]]);
    if (grads.h0) out.set('h0', read(grads.h0));
    grads.layers.forEach((layer, l) => {
      for (const key of ['wIh', 'wHh', 'bIh', 'bHh'] as const) if (layer[key]) out.set(`layers[${l}].${key}`, read(layer[key]!));
    });
    for (const x of [grads.x, grads.h0, ...grads.layers.flatMap((l) => Object.values(l) as Tensor[])]) x?.dispose();
    return out;
  });
  saved.dispose();
  output.dispose();
  hidden.dispose();
  t.dispose();
  return results;
}

const cuda = await GpuCompute.create({ backend: 'cuda', logLevel: 'warn' });
const cpu = await GpuCompute.create({ backend: 'cpu', logLevel: 'warn' });
const seed = freshSeed();
let checks = 0;
let failures = 0;
for (const c of cases) {
  const v = trainValues(c, seed);
  const [want] = gradients(cpu, c, v, 1);
  gradients(cuda, c, v, 3).forEach((got, run) => {
    for (const [name, values] of got) {
      const error = relError(values, want!.get(name)!);
      const ok = error <= 1e-4;
      checks++;
      if (!ok) failures++;
      console.log(`${ok ? 'ok  ' : 'FAIL'} ${describeTrainCase(c)} run ${run}: ${name} error ${error.toExponential(2)}`);
    }
  });
}
cuda.dispose();
cpu.dispose();
console.log(`gru backward sanitize: ${checks} checks (seed ${seed}), ${failures} wrong`);
process.exit(failures === 0 ? 0 : 1);
