import { describe, expect, it } from 'vitest';
import { BackendUnavailableError } from '../../../src/compute/backend/registration.js';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { hipRuntimeAvailable } from './hip-available.js';

describe.skipIf(!hipRuntimeAvailable)('selecting HIP with the runtime installed and no AMD GPU', () => {
  it("reports hipInit's no-device error with what it means", async () => {
    const attempt = GpuCompute.create({ backend: 'hip', logLevel: 'silent' });
    await expect(attempt).rejects.toBeInstanceOf(BackendUnavailableError);
    const err = (await attempt.catch((e: unknown) => e)) as BackendUnavailableError;
    expect(err.backend).toBe('hip');
    expect(err.reason).toMatch(/^no HIP device: hipInit returned hipError\w+ \(10[01]\), hipGetDeviceCount returned hipErrorNoDevice \(100: no HIP-capable AMD GPU is visible/);
  });

  it("lets 'auto' skip HIP with the same reason", async () => {
    const gpu = await GpuCompute.create({ logLevel: 'silent' });
    try {
      const hip = gpu.skipped.find((s) => s.backend === 'hip');
      expect(hip?.reason).toMatch(/hipErrorNoDevice/);
    } finally {
      gpu.dispose();
    }
  });
});
