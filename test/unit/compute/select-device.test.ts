import { describe, expect, it } from 'vitest';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { selectDevice } from '../../../src/compute/select-device.js';
import { InvalidArgumentError } from '../../../src/errors.js';

describe('selectDevice on a machine without a GPU', () => {
  it('chooses the CPU and says why every other platform lost', async () => {
    const selection = await selectDevice();
    expect(selection.chosen.backend).toBe('cpu');
    expect(selection.options).toEqual({ backend: 'cpu', device: 0 });
    expect(selection.reason).toMatch(/most free memory/);
    const byBackend = Object.fromEntries(selection.rejected.map((r) => [r.backend, r.reason]));
    expect(byBackend.cuda).toMatch(/libcuda/);
    expect(byBackend.hip).toMatch(/^no HIP (runtime|device)/);
    // Metal is WebGPU on macOS, enumerated as WebGPU; here WebGPU has no package, no driver, or only lavapipe.
    expect(byBackend.webgpu).toMatch(/webgpu@0\.6\.2|adapter/);
    // The selection opens as-is.
    const gpu = await GpuCompute.create({ ...selection.options, logLevel: 'silent' });
    expect(gpu.info.deviceName).toBe(selection.chosen.deviceName);
    gpu.dispose();
  });

  it('is reachable as GpuCompute.selectDevice', async () => {
    expect((await GpuCompute.selectDevice({ platforms: ['cpu'] })).chosen.backend).toBe('cpu');
  });

  it('rejects devices that miss a requirement, listing each reason', async () => {
    await expect(selectDevice({ tensorCores: true })).rejects.toThrow(/no local device meets the requirements \(.*cpu:0 .*: no tensor cores/);
    await expect(selectDevice({ bf16: true })).rejects.toThrow(/no native bf16 arithmetic/);
    await expect(selectDevice({ fp16: true })).rejects.toThrow(/no native fp16 arithmetic/);
    await expect(selectDevice({ minMemoryBytes: 2 ** 60 })).rejects.toThrow(/free memory .* GiB is below the required 1073741824\.0 GiB/);
    const err = await selectDevice({ platforms: ['cuda'] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as Error).message).toMatch(/cuda: .*libcuda/);
    expect((err as Error).message).toMatch(/cpu: not in the allowed platforms \(cuda\)/);
  });

  it('accepts a requirement the CPU meets', async () => {
    const selection = await selectDevice({ minMemoryBytes: 1024, platforms: ['cpu', 'cuda'] });
    expect(selection.chosen.backend).toBe('cpu');
    expect(selection.rejected.find((r) => r.backend === 'hip')?.reason).toBe('not in the allowed platforms (cpu, cuda)');
  });

  it('validates requirements', async () => {
    await expect(selectDevice({ minMemoryBytes: -1 })).rejects.toThrow(/minMemoryBytes must be a number ≥ 0/);
    await expect(selectDevice({ platforms: ['tpu' as never] })).rejects.toThrow(/unknown platform tpu/);
  });
});
