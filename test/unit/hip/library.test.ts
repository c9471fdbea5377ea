import { afterEach, describe, expect, it, vi } from 'vitest';
import { LibraryNotFoundError } from '../../../src/errors.js';
import { resetLibraryCache } from '../../../src/ffi/library.js';
import { hipRuntimeSpec, hiprtcSpec, openHipRuntime, openHiprtc } from '../../../src/hip/library.js';

afterEach(() => {
  vi.unstubAllEnvs();
  resetLibraryCache();
});

describe('HIP library discovery', () => {
  it('tries ROCm 6 before ROCm 5, the loader before ROCM_PATH before /opt/rocm', () => {
    vi.stubEnv('ROCM_PATH', '/custom/rocm');
    vi.stubEnv('HIP_PATH', '');
    const runtime = hipRuntimeSpec.candidates();
    expect(runtime.slice(0, 3)).toEqual(['libamdhip64.so.6', 'libamdhip64.so.5', 'libamdhip64.so']);
    expect(runtime.indexOf('/custom/rocm/lib/libamdhip64.so.6')).toBeLessThan(runtime.indexOf('/opt/rocm/lib/libamdhip64.so.6'));
    const rtc = hiprtcSpec.candidates();
    expect(rtc[0]).toBe('libhiprtc.so.6');
    // ROCm 5 has hiprtc inside libamdhip64.
    expect(rtc).toContain('libamdhip64.so.5');
    expect(rtc).toContain('/custom/rocm/lib/libhiprtc.so.6');
  });

  it('lists every path tried, and only the override when one is set', () => {
    vi.stubEnv('GPUCOMPUTE_LIBHIP', '/nowhere/libamdhip64.so.6');
    vi.stubEnv('GPUCOMPUTE_LIBHIPRTC', '/nowhere/libhiprtc.so.6');
    for (const open of [openHipRuntime, openHiprtc]) {
      let caught: unknown;
      try {
        open();
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(LibraryNotFoundError);
      const err = caught as LibraryNotFoundError;
      expect(err.attempts).toHaveLength(1);
      expect(err.attempts[0]!.error).toBe('no such file');
      expect(err.message).toMatch(/is set, so only it was tried/);
    }
  });
});
