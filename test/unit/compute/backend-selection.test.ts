import { afterEach, describe, expect, it, vi } from 'vitest';
import { BackendUnavailableError } from '../../../src/compute/backend/registration.js';
import { probeHip } from '../../../src/compute/hip/probe.js';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { resetLibraryCache } from '../../../src/ffi/library.js';
import { InvalidArgumentError, LibraryNotFoundError, OutOfMemoryError } from '../../../src/errors.js';

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  resetLibraryCache();
});

describe("backend: 'auto' on a machine without a GPU", () => {
  it('picks the CPU and records a specific reason for CUDA, HIP and WebGPU', async () => {
    const logs: [string, string][] = [];
    const gpu = await GpuCompute.create({ logger: (level, message) => logs.push([level, message]), logLevel: 'info' });
    expect(gpu.kind).toBe('cpu');
    expect(gpu.info.backend).toBe('cpu');
    expect(gpu.skipped.map((s) => s.backend)).toEqual(['cuda', 'hip', 'webgpu']);
    const reasons = Object.fromEntries(gpu.skipped.map((s) => [s.backend, s.reason]));
    expect(reasons.cuda).toMatch(/libcuda/);
    expect(reasons.hip).toMatch(/^no HIP (runtime: Could not load the HIP runtime|device: .*hipGetDeviceCount returned)/);
    // No webgpu package, no Vulkan driver, or only a software adapter (CI's lavapipe).
    expect(reasons.webgpu).toMatch(/webgpu@0\.6\.2|adapter/);
    // The fallback is logged at warn, with every reason; the chosen device at info.
    const warnings = logs.filter(([level]) => level === 'warn');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]![1]).toContain("backend 'auto' fell back to cpu (cuda: ");
    expect(warnings[0]![1]).toContain(reasons.hip);
    expect(logs.some(([level, m]) => level === 'info' && m.startsWith('using cpu device 0'))).toBe(true);
    gpu.dispose();
  });

  it('logs the fallback through the console by default, and not at all when silent', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    (await GpuCompute.create()).dispose();
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]![0])).toMatch(/^\[gpucompute\] backend 'auto' fell back to cpu/);
    warn.mockClear();
    (await GpuCompute.create({ logLevel: 'silent' })).dispose();
    expect(warn).not.toHaveBeenCalled();
  });

  it('explains HIP precisely when its runtime is missing', () => {
    vi.stubEnv('GPUCOMPUTE_LIBHIP', '/nonexistent/libamdhip64.so');
    expect(probeHip().backend.reason).toMatch(
      /^no HIP runtime: Could not load the HIP runtime \(libamdhip64\)\. Tried: - \/nonexistent\/libamdhip64\.so: no such file/,
    );
  });
});

describe('explicit backends', () => {
  it("throws a typed error for 'cuda' instead of falling back, with the driver's error as cause", async () => {
    const attempt = GpuCompute.create({ backend: 'cuda', logLevel: 'silent' });
    await expect(attempt).rejects.toBeInstanceOf(BackendUnavailableError);
    const err = (await attempt.catch((e: unknown) => e)) as BackendUnavailableError;
    expect(err.backend).toBe('cuda');
    expect(err.code).toBe('BACKEND_UNAVAILABLE');
    expect(err.message).toMatch(/^The cuda backend is not available: .*libcuda/);
    expect(err.cause).toBeInstanceOf(LibraryNotFoundError);
  });

  it("throws for 'hip' and 'metal' with their reasons", async () => {
    await expect(GpuCompute.create({ backend: 'hip' })).rejects.toThrow(/^The hip backend is not available: no HIP/);
    await expect(GpuCompute.create({ backend: 'metal' })).rejects.toThrow(/^The metal backend is not available: Metal exists only on macOS/);
  });

  it("opens 'cpu' with nothing skipped", async () => {
    const gpu = await GpuCompute.create({ backend: 'cpu', logLevel: 'silent' });
    expect(gpu.skipped).toEqual([]);
    expect(gpu.info).toMatchObject({ backend: 'cpu', ordinal: 0, tensorCores: false, fp16: false, bf16: false });
    expect(gpu.info.totalMemory).toBeGreaterThan(0);
    expect(gpu.info.multiprocessorCount).toBeGreaterThan(0);
    gpu.dispose();
    await expect(GpuCompute.create({ backend: 'cpu', device: 1 })).rejects.toThrow('The cpu backend is not available: the CPU backend has one device (0), not device 1');
  });

  it('validates options', async () => {
    await expect(GpuCompute.create({ backend: 'opencl' as never })).rejects.toThrow(InvalidArgumentError);
    await expect(GpuCompute.create({ device: -1 })).rejects.toThrow(/device must be an integer ≥ 0/);
    await expect(GpuCompute.create({ logLevel: 'loud' as never })).rejects.toThrow(/unknown logLevel loud/);
    await expect(GpuCompute.create({ logger: 'yes' as never })).rejects.toThrow(/logger must be a function/);
    await expect(GpuCompute.create({ poolLimitBytes: 0 })).rejects.toThrow(/poolLimitBytes must be a positive integer/);
  });
});

describe('pool limit', () => {
  it('refuses allocations above poolLimitBytes with OutOfMemoryError details', async () => {
    const gpu = await GpuCompute.create({ backend: 'cpu', poolLimitBytes: 1000, logLevel: 'silent' });
    using small = gpu.zeros([200]);
    const err = (() => {
      try {
        gpu.zeros([100]);
      } catch (e) {
        return e as OutOfMemoryError;
      }
      throw new Error('no throw');
    })();
    expect(err).toBeInstanceOf(OutOfMemoryError);
    expect(err).toMatchObject({ requestedBytes: 400, inUseBytes: 800, limitBytes: 1000 });
    expect(err.deviceTotalBytes).toBeGreaterThan(0);
    expect(gpu.memoryStats()).toMatchObject({ inUseBytes: 800, limitBytes: 1000, allocations: 1 });
    gpu.dispose();
  });

  it('reads GPUCOMPUTE_POOL_LIMIT when the option is absent', async () => {
    vi.stubEnv('GPUCOMPUTE_POOL_LIMIT', '1K');
    const gpu = await GpuCompute.create({ backend: 'cpu', logLevel: 'silent' });
    expect(gpu.memoryStats().limitBytes).toBe(1024);
    expect(() => gpu.zeros([257])).toThrow(OutOfMemoryError);
    gpu.dispose();
    vi.stubEnv('GPUCOMPUTE_POOL_LIMIT', 'lots');
    await expect(GpuCompute.create({ backend: 'cpu' })).rejects.toThrow('GPUCOMPUTE_POOL_LIMIT=lots is not a size (use bytes, or e.g. 512M, 2G, 1.5GiB)');
  });
});
