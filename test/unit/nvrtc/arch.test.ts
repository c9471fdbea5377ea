import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../src/errors.js';
import { formatArch, parseArch, resolveArch, type ArchContext } from '../../../src/nvrtc/arch.js';

// What NVRTC 11.8 reports (nvrtcGetSupportedArchs), and a CUDA 13-like list.
const nvrtc118 = [35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90];
const nvrtc130 = [75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121];

function context(supported: number[], nvrtcMajor: number, deviceArch: string): ArchContext {
  return { supported, nvrtcMajor, deviceArch: () => deviceArch };
}

const noDevice: ArchContext = {
  supported: nvrtc118,
  nvrtcMajor: 11,
  deviceArch: () => {
    throw new Error('Could not load the CUDA driver (libcuda)');
  },
};

describe('parseArch', () => {
  it('parses real, arch-specific and virtual archs', () => {
    expect(parseArch('sm_90')).toEqual({ kind: 'sm', number: 90, specific: false });
    expect(parseArch('sm_90a')).toEqual({ kind: 'sm', number: 90, specific: true });
    expect(parseArch('compute_80')).toEqual({ kind: 'compute', number: 80, specific: false });
    expect(parseArch('sm_120')).toEqual({ kind: 'sm', number: 120, specific: false });
    expect(formatArch(parseArch('sm_100a'))).toBe('sm_100a');
  });

  it.each(['', 'sm90', 'sm_9', 'SM_90', 'sm_90b', 'gfx90a', 'sm_90 ', 'compute_', 'sm_1000', '90'])(
    'refuses %j with InvalidArgumentError',
    (spelling) => {
      expect(() => parseArch(spelling)).toThrow(InvalidArgumentError);
    },
  );

  it('refuses a non-string', () => {
    expect(() => parseArch(90 as unknown as string)).toThrow(InvalidArgumentError);
  });
});

describe('resolveArch', () => {
  it("defaults to the device's own arch as a CUBIN", () => {
    expect(resolveArch({}, context(nvrtc130, 13, 'sm_90'))).toEqual({ arch: 'sm_90', output: 'cubin' });
    expect(resolveArch({}, context(nvrtc118, 11, 'sm_86'))).toEqual({ arch: 'sm_86', output: 'cubin' });
  });

  it('clamps to the highest supported arch of the same major that is not above the device', () => {
    // NVRTC 13 has no sm_91: a (hypothetical) 9.1 device gets sm_90.
    expect(resolveArch({}, context(nvrtc130, 13, 'sm_91'))).toEqual({ arch: 'sm_90', output: 'cubin' });
    // NVRTC 11.8 has no sm_88: an 8.8 device gets sm_87.
    expect(resolveArch({}, context(nvrtc118, 11, 'sm_88'))).toEqual({ arch: 'sm_87', output: 'cubin' });
  });

  it('falls back to PTX when NVRTC knows no arch of the device major, and refuses an explicit CUBIN then', () => {
    expect(resolveArch({}, context(nvrtc118, 11, 'sm_100'))).toEqual({ arch: 'compute_90', output: 'ptx' });
    expect(() => resolveArch({ output: 'cubin' }, context(nvrtc118, 11, 'sm_100'))).toThrow(/no sm_10x arch/);
  });

  it('refuses a device older than every arch NVRTC supports', () => {
    expect(() => resolveArch({}, context(nvrtc130, 13, 'sm_70'))).toThrow(InvalidArgumentError);
  });

  it('PTX on request uses the virtual arch', () => {
    expect(resolveArch({ output: 'ptx' }, context(nvrtc130, 13, 'sm_90'))).toEqual({ arch: 'compute_90', output: 'ptx' });
    expect(resolveArch({ arch: 'sm_80', output: 'ptx' }, noDevice)).toEqual({ arch: 'compute_80', output: 'ptx' });
    expect(resolveArch({ arch: 'compute_75' }, noDevice)).toEqual({ arch: 'compute_75', output: 'ptx' });
  });

  it('uses an explicit arch without asking the device', () => {
    expect(resolveArch({ arch: 'sm_80' }, noDevice)).toEqual({ arch: 'sm_80', output: 'cubin' });
  });

  it('refuses explicit archs NVRTC does not support, naming the ones it does', () => {
    expect(() => resolveArch({ arch: 'sm_100' }, noDevice)).toThrow(/cannot compile for sm_100; it supports .*sm_90/);
    expect(() => resolveArch({ arch: 'sm_99' }, noDevice)).toThrow(InvalidArgumentError);
  });

  it('refuses compute_XY with CUBIN output and garbage spellings', () => {
    expect(() => resolveArch({ arch: 'compute_80', output: 'cubin' }, noDevice)).toThrow(/virtual arch/);
    expect(() => resolveArch({ arch: 'hopper' }, noDevice)).toThrow(InvalidArgumentError);
    expect(() => resolveArch({ output: 'sass' as 'ptx' }, noDevice)).toThrow(InvalidArgumentError);
  });

  it('gives sm_90a only on request, with NVRTC 12+, on exactly a 9.0 device', () => {
    expect(resolveArch({ arch: 'sm_90a' }, context(nvrtc130, 13, 'sm_90'))).toEqual({ arch: 'sm_90a', output: 'cubin' });
    expect(resolveArch({}, context(nvrtc130, 13, 'sm_90')).arch).toBe('sm_90');
    expect(() => resolveArch({ arch: 'sm_90a' }, context(nvrtc130, 13, 'sm_89'))).toThrow(/only on compute capability 9\.0/);
    expect(() => resolveArch({ arch: 'sm_90a' }, context(nvrtc130, 13, 'sm_100'))).toThrow(InvalidArgumentError);
    expect(() => resolveArch({ arch: 'sm_90a' }, context(nvrtc118, 11, 'sm_90'))).toThrow(/needs NVRTC 12/);
  });

  it('without an arch and without a device, says to pass one', () => {
    expect(() => resolveArch({}, noDevice)).toThrow(/no arch was given .*libcuda.*pass arch explicitly/);
  });
});
