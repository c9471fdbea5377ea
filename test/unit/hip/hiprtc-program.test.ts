import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../src/errors.js';
import { HipProgram } from '../../../src/hip/hip-program.js';
import { HiprtcCompileError } from '../../../src/hip/hiprtc-error.js';
import { hipRuntimeAvailable } from './hip-available.js';

const GOOD = 'extern "C" __global__ void scale(float* x, float a, unsigned n) { unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= a; }';

describe.skipIf(!hipRuntimeAvailable)('HipProgram through the real hiprtc', () => {
  it('compiles to a code object that names the kernel', () => {
    const compiled = new HipProgram(GOOD, { name: 'scale.cu', target: 'gfx90a', cache: false }).compile();
    expect(compiled.target).toBe('gfx90a');
    expect(Buffer.from(compiled.image.subarray(0, 4)).toString('latin1')).toBe('\x7fELF');
    expect(Buffer.from(compiled.image).includes(Buffer.from('scale\0'))).toBe(true);
  });

  it('surfaces a syntax error with its line and the whole log', () => {
    const source = 'extern "C" __global__ void broken(float* x) {\n  x[0] = 1.0f\n}\n';
    let caught: unknown;
    try {
      new HipProgram(source, { name: 'broken.cu', target: 'gfx1030', cache: false }).compile();
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(HiprtcCompileError);
    const err = caught as HiprtcCompileError;
    expect(err.code).toBe('COMPILE_ERROR');
    expect(err.line).toBe(2);
    expect(err.diagnostic).toMatch(/expected ';'/);
    expect(err.log).toMatch(/error: expected ';'/);
    expect(err.message.split('\n')[0]).toMatch(/:2:\d+: error: expected ';'/);
  });

  it('refuses a target this hiprtc does not know without calling it (it would abort the process)', () => {
    for (const target of ['gfx1100', 'gfx942', 'gfx1201']) {
      expect(() => new HipProgram(GOOD, { target, cache: false }).compile()).toThrow(InvalidArgumentError);
    }
    // Still alive, and hiprtc still works.
    expect(new HipProgram(GOOD, { target: 'gfx908', cache: false }).compile().image.length).toBeGreaterThan(0);
  });

  it('rejects malformed options before compiling', () => {
    expect(() => new HipProgram(GOOD, { target: 'sm_90' })).toThrow(InvalidArgumentError);
    expect(() => new HipProgram(GOOD, { extraOptions: ['--offload-arch=gfx90a'] })).toThrow(/target option/);
    expect(() => new HipProgram(GOOD, { defines: { 'bad name': 1 } })).toThrow(/not a macro name/);
  });
});
