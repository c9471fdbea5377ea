import { beforeAll, describe, expect, it } from 'vitest';
import { formatHipVersion } from '../../../src/hip/runtime.js';
import { formatCudaVersion, packageVersion, probeAll, probeCpu, probeMetal, type InfoReport } from '../../../src/cli/probe.js';
import { fakeReport } from './fake-report.js';
import { gpuAvailable } from '../../gpu/gpu-available.js';

/** Keys and the types of their values, recursively (arrays by their first element). */
function shape(value: unknown): unknown {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length ? [shape(value[0])] : [];
  if (typeof value === 'object') return Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, shape(v)]));
  return typeof value;
}

describe('probeAll on this machine', () => {
  let report: InfoReport;
  beforeAll(async () => {
    report = await probeAll();
  });

  it('has the documented top-level keys', () => {
    expect(Object.keys(report)).toEqual(['schema', 'tool', 'version', 'generatedAt', 'host', 'backends', 'devices']);
    expect(report.schema).toBe(1);
    expect(report.version).toBe(packageVersion());
    expect(Object.keys(report.backends)).toEqual(['cuda', 'hip', 'webgpu', 'metal', 'cpu']);
    expect(Number.isNaN(Date.parse(report.generatedAt))).toBe(false);
  });

  it('has the same keys as a report of a machine with a GPU (keys are stable; unknown values are null)', () => {
    const withGpu = fakeReport();
    expect(Object.keys(report.backends.cuda)).toEqual(Object.keys(withGpu.backends.cuda));
    expect(Object.keys(report.backends.cuda.nvrtc)).toEqual(Object.keys(withGpu.backends.cuda.nvrtc));
    expect(Object.keys(report.backends.cuda.nccl)).toEqual(Object.keys(withGpu.backends.cuda.nccl));
    expect(Object.keys(report.backends.hip)).toEqual(Object.keys(withGpu.backends.hip));
    expect(shape(report.backends.cpu)).toEqual(shape(withGpu.backends.cpu));
    for (const device of report.devices) expect(Object.keys(device)).toEqual(Object.keys(withGpu.devices[0]!));
  });

  it.skipIf(gpuAvailable)('reports CUDA unavailable, listing every libcuda path tried', () => {
    const cuda = report.backends.cuda;
    expect(cuda.available).toBe(false);
    expect(cuda.reason).toBeTruthy();
    if (!cuda.library.found) {
      const tried = cuda.library.tried.map((t) => t.path);
      expect(tried[0]).toBe(process.env.GPUCOMPUTE_LIBCUDA || 'libcuda.so.1');
      if (!process.env.GPUCOMPUTE_LIBCUDA) expect(tried).toContain('/usr/local/nvidia/lib64/libcuda.so.1');
      for (const t of cuda.library.tried) expect(t.error).not.toBe('');
      expect(cuda.reason).toContain(`none of ${tried.length} candidates loaded`);
      expect(cuda.init).toBeNull();
    } else {
      expect(cuda.init === null || !cuda.init.ok || cuda.deviceCount === 0).toBe(true);
    }
    expect(report.devices.filter((d) => d.backend === 'cuda')).toEqual([]);
  });

  it.skipIf(!gpuAvailable)('reports CUDA available with every device described', () => {
    const cuda = report.backends.cuda;
    expect(cuda.available).toBe(true);
    expect(cuda.deviceCount).toBeGreaterThan(0);
    const devices = report.devices.filter((d) => d.backend === 'cuda');
    expect(devices).toHaveLength(cuda.deviceCount!);
    for (const d of devices) {
      expect(d.error).toBeNull();
      expect(d.arch).toMatch(/^sm_\d+$/);
      expect(d.memoryFree!).toBeLessThanOrEqual(d.memoryTotal!);
    }
  });

  it('says why HIP is unavailable: no runtime (paths tried), or the runtime\'s own error', () => {
    const hip = report.backends.hip;
    expect(hip.available).toBe(false);
    expect(hip.reason).toBeTruthy();
    if (!hip.library.found) {
      expect(hip.library.tried.length).toBeGreaterThan(0);
    } else if (hip.deviceCountCall && !hip.deviceCountCall.ok) {
      // E.g. ROCm 5.2 without an AMD GPU: hipGetDeviceCount → hipErrorNoDevice (100).
      expect(hip.deviceCountCall.name).toMatch(/^hipError/);
      expect(hip.reason).toContain(hip.deviceCountCall.name);
      expect(hip.runtimeVersion).toMatch(/^\d+\.\d+\.\d+$/);
    }
  });

  it('reports NVRTC with its version and targets when it loads, else the paths tried', () => {
    const nccl = report.backends.cuda.nccl;
    if (nccl.available) expect(nccl.version).toMatch(/^2\.\d+\.\d+$/);
    else expect(nccl.reason).toMatch(/^NCCL is not installed: none of \d+ candidates loaded$/);
    const nvrtc = report.backends.cuda.nvrtc;
    if (nvrtc.available) {
      expect(nvrtc.version).toMatch(/^\d+\.\d+$/);
      expect(nvrtc.supportedArchs.length).toBeGreaterThan(0);
      expect(nvrtc.supportedArchs.every((a) => /^sm_\d+$/.test(a))).toBe(true);
    } else {
      expect(nvrtc.library.tried.length + (nvrtc.library.found ? 1 : 0)).toBeGreaterThan(0);
      expect(nvrtc.reason).toBeTruthy();
    }
  });
});

describe('small probes', () => {
  it('CPU is always available with cores and memory', () => {
    const cpu = probeCpu();
    expect(cpu.available).toBe(true);
    expect(cpu.cores).toBeGreaterThan(0);
    expect(cpu.memoryFree).toBeLessThanOrEqual(cpu.memoryTotal);
  });

  it.skipIf(process.platform === 'darwin')('Metal is unavailable off macOS, saying so', async () => {
    const metal = (await probeMetal()).backend;
    expect(metal.available).toBe(false);
    expect(metal.reason).toBe(`Metal exists only on macOS (this is ${process.platform})`);
  });

  it('formats CUDA and HIP version integers', () => {
    expect(formatCudaVersion(13000)).toBe('13.0');
    expect(formatCudaVersion(12040)).toBe('12.4');
    expect(formatCudaVersion(11080)).toBe('11.8');
    expect(formatHipVersion(50221153)).toBe('5.2.21153');
    expect(formatHipVersion(60241134)).toBe('6.2.41134');
  });
});
