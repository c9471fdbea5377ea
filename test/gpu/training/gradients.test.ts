/**
 * Gradients on CUDA: every case of `cases.ts` in f32, f16 and bf16, the forward and each input's
 * gradient against the CPU backend's (itself checked against float64 finite differences in
 * test/unit/autograd) and, where torch is installed, against torch autograd on the same GPU with
 * the same inputs and seed. Dropout's gradient is compared bit for bit with the CPU's (one Philox
 * mask). Norm-wise bounds: f32 a few roundings through chains of ops and long sums (1e-4), 16-bit
 * the dtype's rounding of the forward's intermediates (f16 1e-2, bf16 6e-2).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gpuAvailable } from '../gpu-available.js';
import { closePair, freshSeed, openPair, randomValues, relError, type Pair } from '../compute/setup.js';
import { roundTo } from '../../unit/compute/helpers.js';
import { CASES, runCase, type CaseInput, type FloatDType } from './cases.js';
import { torchGradients, type TorchCase } from './torch.js';

const DTYPES: readonly FloatDType[] = ['f32', 'f16', 'bf16'];
const AGAINST_CPU: Record<FloatDType, number> = { f32: 1e-4, f16: 1e-2, bf16: 6e-2 };
const AGAINST_TORCH: Record<FloatDType, number> = { f32: 2e-4, f16: 2e-2, bf16: 8e-2 };

describe.skipIf(!gpuAvailable)('training on CUDA: gradients', () => {
  let pair: Pair;
  beforeAll(async () => {
    pair = await openPair();
  });
  afterAll(() => closePair(pair));

  /** Every case's inputs, seed and CUDA results, for the torch comparison at the end. */
  const ran: (TorchCase & { cuda: { output: number[]; grads: number[][] } })[] = [];

  for (const c of CASES) {
    for (const dtype of DTYPES) {
      it(`${c.name} in ${dtype}: CUDA against the CPU`, () => {
        const seed = freshSeed();
        const inputs: CaseInput[] = c.inputs(seed, dtype);
        // The output's size: a forward on the CPU tells it.
        const outSize = pair.cpu.scope(() => {
          const t = inputs.map((input) => pair.cpu.tensor(input.int ? Int32Array.from(input.values) : Float32Array.from(input.values), input.shape, input.int ? 'i32' : dtype));
          return c.forward(pair.cpu, t).size;
        });
        const r = randomValues(outSize, seed + 99).map(roundTo(dtype));
        const cpu = runCase(pair.cpu, c, inputs, r, dtype);
        const cuda = runCase(pair.cuda, c, inputs, r, dtype);
        const label = `${c.name} ${dtype} (seed ${seed})`;
        expect(relError(cuda.output, cpu.output, dtype), `${label}: output`).toBeLessThanOrEqual(AGAINST_CPU[dtype]);
        cuda.grads.forEach((grad, i) => expect(relError(grad, cpu.grads[i]!, dtype), `${label}: gradient ${i}`).toBeLessThanOrEqual(AGAINST_CPU[dtype]));
        ran.push({ name: c.name, op: c.torch, dtype, inputs, seed: r, cuda });
      });
    }
  }

  for (const dtype of DTYPES) {
    it(`dropout's gradient in ${dtype} is the CPU's, bit for bit`, () => {
      const values = randomValues(5000, freshSeed(), 2).map(roundTo(dtype));
      const seed = randomValues(5000, freshSeed()).map(roundTo(dtype));
      const run = (g: typeof pair.cuda) => {
        using x = g.tensor(values, [50, 100], dtype).requiresGrad_();
        using s = g.tensor(seed, [50, 100], dtype);
        using out = g.dropout(x, 0.3, 1234);
        out.backward(s);
        return Array.from(x.grad!.toArraySync() as Float32Array);
      };
      expect(run(pair.cuda)).toEqual(run(pair.cpu));
    });
  }

  it('CUDA against torch autograd (skipped where torch is not installed)', () => {
    const torch = torchGradients(ran.map(({ cuda: _, ...c }) => c));
    if (torch === undefined) return;
    console.log(`torch autograd on ${torch.device}: ${torch.results.length} cases`);
    torch.results.forEach((t, i) => {
      const ours = ran[i]!;
      const dtype = ours.dtype;
      const label = `${ours.name} ${dtype} against torch`;
      expect(t.name).toBe(ours.name);
      expect(relError(ours.cuda.output, t.output, dtype), `${label}: output`).toBeLessThanOrEqual(AGAINST_TORCH[dtype]);
      ours.cuda.grads.forEach((grad, j) => expect(relError(grad, t.grads[j]!, dtype), `${label}: gradient ${j}`).toBeLessThanOrEqual(AGAINST_TORCH[dtype]));
    });
  });
});
