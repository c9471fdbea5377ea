/**
 * gpu.gru / gruCell / gruRollout on the CPU backend against the float64 reference, on fresh
 * random inputs, plus argument validation (typed errors before any backend call).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DisposedError, InvalidArgumentError } from '../../../src/errors.js';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { freshSeed, TOLERANCE } from '../compute/helpers.js';
import { checkCell, checkGru, checkRollout, read } from './checks.js';
import { randomLayer, randomTensor } from './fixtures.js';

/** f32 over a few dozen chained steps: rounding of each stored state adds up to ~T·2^-24. */
const F32_SEQUENCE = 2e-6;

let gpu: GpuCompute;
beforeAll(async () => {
  gpu = await GpuCompute.create({ backend: 'cpu', logLevel: 'silent' });
});
afterAll(() => gpu.dispose());

describe('gru on the CPU backend', () => {
  it('one layer matches the float64 reference (sequence and final state)', () => {
    const seed = freshSeed();
    const err = checkGru(gpu, { batch: 3, steps: 7, input: 5, hidden: 6, seed });
    expect(err.output, `seed ${seed}`).toBeLessThan(F32_SEQUENCE);
    expect(err.hidden, `seed ${seed}`).toBeLessThan(F32_SEQUENCE);
  });

  it('returnSequences: false returns the last state', () => {
    const seed = freshSeed();
    const err = checkGru(gpu, { batch: 2, steps: 5, input: 4, hidden: 3, returnSequences: false, seed });
    expect(err.output, `seed ${seed}`).toBeLessThan(F32_SEQUENCE);
  });

  it('a three-layer stack with h0 [L, B, H]', () => {
    const seed = freshSeed();
    const err = checkGru(gpu, { batch: 2, steps: 4, input: 5, hidden: 4, layers: 3, seed });
    expect(err.output, `seed ${seed}`).toBeLessThan(F32_SEQUENCE);
    expect(err.hidden, `seed ${seed}`).toBeLessThan(F32_SEQUENCE);
  });

  it('an ensemble of 3 with a shared input and with per-member inputs, two layers', () => {
    const seed = freshSeed();
    for (const perMemberInput of [false, true]) {
      const err = checkGru(gpu, { batch: 2, steps: 3, input: 4, hidden: 5, ensemble: 3, layers: 2, perMemberInput, seed });
      expect(err.output, `seed ${seed} perMember ${perMemberInput}`).toBeLessThan(F32_SEQUENCE);
      expect(err.hidden, `seed ${seed} perMember ${perMemberInput}`).toBeLessThan(F32_SEQUENCE);
    }
  });

  it('layer norm of the carried state', () => {
    const seed = freshSeed();
    const err = checkGru(gpu, { batch: 2, steps: 4, input: 3, hidden: 8, ensemble: 2, layerNorm: true, seed });
    expect(err.output, `seed ${seed}`).toBeLessThan(F32_SEQUENCE);
  });

  it('f16 and bf16 match the reference with the same storage rounding', () => {
    const seed = freshSeed();
    for (const dtype of ['f16', 'bf16'] as const) {
      const err = checkGru(gpu, { batch: 2, steps: 6, input: 5, hidden: 7, dtype, seed });
      expect(err.output, `${dtype} seed ${seed}`).toBeLessThan(TOLERANCE[dtype]);
    }
  });

  it('gruCell is one step (single and ensemble with a shared x)', () => {
    const seed = freshSeed();
    expect(checkCell(gpu, { batch: 3, input: 4, hidden: 5, seed }).error, `seed ${seed}`).toBeLessThan(TOLERANCE.f32);
    expect(checkCell(gpu, { batch: 3, input: 4, hidden: 5, ensemble: 4, seed }).error, `seed ${seed}`).toBeLessThan(TOLERANCE.f32);
  });

  it('gruRollout feeds each projected state back (single, ensemble, two layers)', () => {
    const seed = freshSeed();
    for (const c of [
      { batch: 2, state: 3, hidden: 5, steps: 4, seed },
      { batch: 2, state: 3, hidden: 4, steps: 3, ensemble: 3, seed },
      { batch: 2, state: 3, hidden: 4, steps: 3, layers: 2, seed },
    ]) {
      const err = checkRollout(gpu, c);
      expect(err.states, `seed ${seed} ${JSON.stringify(c)}`).toBeLessThan(F32_SEQUENCE);
      expect(err.hidden, `seed ${seed} ${JSON.stringify(c)}`).toBeLessThan(F32_SEQUENCE);
    }
  });

  it('dropout drops the emitted states with the seeded Philox mask, not the hidden state', () => {
    const seed = freshSeed();
    const layer = randomLayer(gpu, 4, 6, seed, 'f32');
    const x = randomTensor(gpu, [3, 5, 4], seed + 1, 'f32');
    const plain = gpu.gru(x.tensor, undefined, layer.weights);
    const dropped = gpu.gru(x.tensor, undefined, layer.weights, { dropout: { p: 0.3, seed: 11 } });
    const expected = gpu.dropout(plain.output, 0.3, 11);
    expect(read(dropped.output)).toEqual(read(expected));
    expect(read(dropped.hidden)).toEqual(read(plain.hidden));
    expect(read(dropped.output).some((v) => v === 0)).toBe(true);
    for (const t of [...layer.tensors, x.tensor, plain.output, plain.hidden, dropped.output, dropped.hidden, expected]) t.dispose();
  });
});

describe('gru validation', () => {
  it('refuses bad shapes, dtypes, options and dead tensors with typed errors', async () => {
    const seed = freshSeed();
    const layer = randomLayer(gpu, 4, 3, seed, 'f32');
    const x = gpu.zeros([2, 5, 4]);
    const h0 = gpu.zeros([2, 3]);
    const bad = (fn: () => unknown, pattern: RegExp) => expect(fn).toThrow(pattern);
    expect(() => gpu.gru(gpu.zeros([2, 5, 3]), h0, layer.weights)).toThrow(InvalidArgumentError);
    bad(() => gpu.gru(gpu.zeros([2, 5, 3]), h0, layer.weights), /x must be \[batch, time, input\] with input 4/);
    bad(() => gpu.gru(x, gpu.zeros([2, 4]), layer.weights), /h0 must be \[2, 3\]/);
    bad(() => gpu.gru(x, h0, { ...layer.weights, wHh: gpu.zeros([9, 4]) }), /wHh must be \[9, 3\] \(3H, H with H = 3\), got \[9, 4\]/);
    bad(() => gpu.gru(x, h0, { ...layer.weights, wIh: gpu.zeros([8, 4]) }), /wIh must be \[9\] \+ \[in\]/);
    bad(() => gpu.gru(x, h0, { ...layer.weights, bIh: gpu.zeros([3]) }), /bIh must be \[9\]/);
    bad(() => gpu.gru(x, h0, [layer.weights, layer.weights]), /layer 1 takes the previous layer's 3 states/);
    bad(() => gpu.gru(gpu.zeros([2, 5, 4], 'f16'), h0, layer.weights), /dtype mismatch/);
    bad(() => gpu.gru(x, h0, layer.weights, { precision: 'fast' as never }), /precision must be/);
    bad(() => gpu.gru(x, h0, layer.weights, { path: 'cudnn' as never }), /path must be 'auto', 'sequence', 'fused', 'steps' or 'persistent'/);
    bad(() => gpu.gru(x, h0, layer.weights, { dropout: { p: 2 } }), /dropout.p must be in \[0, 1\]/);
    bad(() => gpu.gru(gpu.zeros([2, 0, 4]), h0, layer.weights), /no timesteps/);
    bad(() => gpu.gru(x, h0, []), /at least one layer/);
    bad(() => gpu.gruCell(gpu.zeros([2, 4]), h0, [layer.weights] as never), /one layer's weights/);
    bad(() => gpu.gruRollout(gpu.zeros([2, 4]), h0, layer.weights, { steps: 0, outputProjection: { weight: gpu.zeros([4, 3]) } }), /steps must be/);
    bad(() => gpu.gruRollout(gpu.zeros([2, 4]), h0, layer.weights, { steps: 2, outputProjection: { weight: gpu.zeros([3, 3]) } }), /outputProjection.weight must be \[4, 3\]/);
    bad(() => gpu.gru(x, h0, { ...layer.weights, layerNorm: { eps: -1 } }), /layerNorm.eps must be a finite number ≥ 0, got -1/);
    const other = await GpuCompute.create({ backend: 'cpu', logLevel: 'silent' });
    bad(() => gpu.gru(other.zeros([2, 5, 4]), h0, layer.weights), /belongs to another GpuCompute/);
    other.dispose();
    const dead = gpu.zeros([2, 3]);
    dead.dispose();
    expect(() => gpu.gru(x, dead, layer.weights)).toThrow(DisposedError);
    for (const t of [...layer.tensors, x, h0]) t.dispose();
  });
});
