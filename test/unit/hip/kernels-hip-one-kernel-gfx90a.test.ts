import { describe, expect, it } from 'vitest';
import { KernelSources, moduleKey } from '../../../src/compute/gpu/kernel-sources.js';
import { binarySpec, gradSpec, layerNormSpec, oneKernelSpec, portableKernelNames, randomSpec, reduceSpec, softmaxSpec, unarySpec } from '../../../src/compute/gpu/kernel-specs.js';
import { compileHipKernelModule } from '../../../src/compute/hip/kernel-compile.js';
import { hipRuntimeAvailable } from './hip-available.js';

const sources = new KernelSources();
const cases = [
  [softmaxSpec('f16'), 'softmax_block_vec_4'],
  [layerNormSpec('f32'), 'layernorm_looped'],
  [reduceSpec('sum', 'bf16'), 'reduce_cols_split'],
  [binarySpec('add', 'f32'), 'binary_general_rows64'],
  [unarySpec('gelu', 'f32'), 'unary_scalar'],
  [gradSpec('tanhGrad', 'f16'), 'grad_vec'],
  [randomSpec('bf16'), 'random_normal'],
] as const;

// The ops' one-kernel modules through the real hiprtc (gfx90a): each holds its kernel and no other of its file.
describe.skipIf(!hipRuntimeAvailable)('hiprtc builds one kernel of a source at a time', () => {
  it.each(cases.map(([whole, name]) => [moduleKey(oneKernelSpec(whole, name)), whole, name] as const))('%s', (_key, whole, name) => {
    const bytes = Buffer.from(compileHipKernelModule(oneKernelSpec(whole, name), sources, { target: 'gfx90a', cache: false }).image);
    for (const other of portableKernelNames(whole)) expect(bytes.includes(Buffer.from(`${other}\0`)), other).toBe(other === name);
  });
});
