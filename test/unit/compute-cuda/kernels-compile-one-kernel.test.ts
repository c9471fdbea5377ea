/**
 * The sources built a kernel at a time (`kernels/kernel_select.cuh`): each one-kernel module
 * compiles under NVRTC and holds its kernel and none of the file's others. One dtype per source,
 * every kernel of it. Skips when no NVRTC loads.
 */
import { describe, expect, it } from 'vitest';
import { compileKernelModule } from '../../../src/compute/cuda/kernel-compile.js';
import { KernelSources, moduleKey, type ModuleSpec } from '../../../src/compute/gpu/kernel-sources.js';
import { binarySpec, gradSpec, layerNormSpec, ONE_KERNEL_FILES, oneKernelSpec, portableKernelNames, randomSpec, reduceSpec, softmaxSpec, transposeSpec, unarySpec, wholeSourceSpec } from '../../../src/compute/gpu/kernel-specs.js';
import { nvrtcAvailable } from '../nvrtc/nvrtc-available.js';

const sources = new KernelSources();
const latin1 = new TextDecoder('latin1');
const wholes: ModuleSpec[] = [
  softmaxSpec('f32'),
  layerNormSpec('bf16'),
  reduceSpec('argmax', 'f16'),
  binarySpec('mul', 'i32'),
  unarySpec('gelu', 'f16'),
  gradSpec('siluGrad', 'bf16'),
  randomSpec('f16'),
  transposeSpec('f32'),
];

describe.skipIf(!nvrtcAvailable)('one-kernel modules compile under NVRTC (sm_80)', () => {
  it('cover every source built a kernel at a time', () => {
    expect(new Set(wholes.map((s) => s.file))).toEqual(ONE_KERNEL_FILES);
    for (const whole of wholes) expect(wholeSourceSpec(whole)).toBeUndefined();
  });
  const cases = wholes.flatMap((whole) => portableKernelNames(whole).map((name) => [moduleKey(oneKernelSpec(whole, name)), whole, name] as const));
  it.each(cases)('%s', (_key, whole, name) => {
    const spec = oneKernelSpec(whole, name);
    expect(portableKernelNames(spec)).toEqual([name]);
    expect(wholeSourceSpec(spec)).toEqual(whole);
    const compiled = compileKernelModule(spec, sources, { arch: 'sm_80', cache: false });
    expect(compiled.log.trim()).toBe('');
    const image = latin1.decode(compiled.image);
    for (const other of portableKernelNames(whole)) expect(image.includes(`${other}\0`), other).toBe(other === name);
  });
});
