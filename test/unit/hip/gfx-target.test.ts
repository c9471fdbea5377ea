import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../src/errors.js';
import { checkCompilableTarget, defaultWavefrontSize, knownProcessors, parseGfxTarget } from '../../../src/hip/gfx-target.js';

const HIP_5_2 = 50_221_153;
const HIP_6_2 = 60_241_134;

describe('gfx targets', () => {
  it('parses target IDs with their feature settings', () => {
    expect(parseGfxTarget('gfx90a:sramecc+:xnack-')).toEqual({ processor: 'gfx90a', features: ['sramecc+', 'xnack-'], id: 'gfx90a:sramecc+:xnack-' });
    expect(parseGfxTarget('gfx1030').features).toEqual([]);
    for (const bad of ['sm_90', 'gfx', 'gfx90a:fast+', 'gfx90a:xnack', '']) expect(() => parseGfxTarget(bad)).toThrow(InvalidArgumentError);
  });

  it("knows a release's processors and refuses later ones before hiprtc is asked", () => {
    expect(knownProcessors(HIP_5_2)).toEqual(expect.arrayContaining(['gfx90a', 'gfx908', 'gfx1030', 'gfx1036']));
    expect(knownProcessors(HIP_5_2)).not.toContain('gfx940');
    expect(() => checkCompilableTarget('gfx1100', HIP_5_2)).toThrow(/HIP 5\.2 does not know the target gfx1100/);
    expect(() => checkCompilableTarget('gfx942:sramecc+:xnack-', HIP_5_2)).toThrow(InvalidArgumentError);
    expect(checkCompilableTarget('gfx942:sramecc+:xnack-', HIP_6_2).processor).toBe('gfx942');
    expect(checkCompilableTarget('gfx1201', HIP_6_2).id).toBe('gfx1201');
  });

  it('gives CDNA/GCN 64-wide and RDNA 32-wide wavefronts', () => {
    expect(defaultWavefrontSize('gfx90a')).toBe(64);
    expect(defaultWavefrontSize('gfx942')).toBe(64);
    expect(defaultWavefrontSize('gfx803')).toBe(64);
    expect(defaultWavefrontSize('gfx1030')).toBe(32);
    expect(defaultWavefrontSize('gfx1100')).toBe(32);
  });
});
