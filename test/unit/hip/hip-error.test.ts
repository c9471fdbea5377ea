import { describe, expect, it } from 'vitest';
import { HipError } from '../../../src/hip/hip-error.js';
import { HipResult, hipResultDescription, hipResultName } from '../../../src/hip/hip-result.js';
import { HipDevice, initHip } from '../../../src/hip/device.js';
import { hipRuntimeAvailable } from './hip-available.js';

describe('HipError', () => {
  it('names the code and describes it from the table (HIP itself returns only names)', () => {
    const err = new HipError(HipResult.hipErrorNoDevice, 'hipInit');
    expect(err.code).toBe('HIP_ERROR');
    expect(err.errorName).toBe('hipErrorNoDevice');
    expect(err.description).toMatch(/no HIP-capable AMD GPU is visible/);
    expect(err.message).toMatch(/^hipInit failed with hipErrorNoDevice \(100\): no HIP-capable AMD GPU/);
    expect(err.sticky).toBe(false);
  });

  it('marks kernel faults as sticky', () => {
    const err = new HipError(HipResult.hipErrorIllegalAddress, 'hipStreamSynchronize');
    expect(err.sticky).toBe(true);
    expect(err.message).toMatch(/illegal memory address.*restart it/);
  });

  it('keeps the first name of aliased codes and reports unknown codes as such', () => {
    expect(hipResultName(2)).toBe('hipErrorOutOfMemory');
    expect(hipResultName(400)).toBe('hipErrorInvalidHandle');
    expect(hipResultName(123456)).toBeUndefined();
    expect(hipResultDescription(123456)).toBe('unknown hipError_t 123456');
  });
});

describe.skipIf(!hipRuntimeAvailable)('the real HIP runtime without an AMD GPU', () => {
  it("maps hipInit's no-device answer to a HipError that says so", () => {
    let caught: unknown;
    try {
      initHip();
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(HipError);
    const err = caught as HipError;
    // ROCm 5.2 answers hipErrorInvalidDevice here; newer releases hipErrorNoDevice.
    expect([HipResult.hipErrorNoDevice, HipResult.hipErrorInvalidDevice]).toContain(err.result);
    expect(err.call).toBe('hipInit');
    expect(err.message).toMatch(/finds no usable AMD GPU/);
  });

  it('counts no devices and refuses to open one with a typed error', () => {
    expect(HipDevice.count()).toBe(0);
    expect(() => HipDevice.get(0)).toThrow(/^No HIP device is available$/);
  });
});
