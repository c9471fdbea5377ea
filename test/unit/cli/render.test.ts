import { describe, expect, it } from 'vitest';
import { bytes, renderDeviceTable, renderInfo } from '../../../src/cli/render.js';
import { fakeH100, fakeReport } from './fake-report.js';

describe('renderInfo', () => {
  it('says per backend whether it is available, and why not', () => {
    const text = renderInfo(fakeReport());
    const lines = text.split('\n');
    expect(lines[0]).toBe('gpucompute 0.1.0 on linux-x64, Node.js v20.19.0');
    expect(lines).toContain('  CUDA   available    1 device, driver 580.65.06, CUDA 13.0');
    expect(lines).toContain('         libcuda loaded from libcuda.so.1');
    expect(lines).toContain('         NVRTC 13.0 loaded from /usr/local/cuda/lib64/libnvrtc.so.13, targets sm_75 to sm_120 (7)');
    expect(lines).toContain('         NCCL 2.27.3 loaded from /usr/lib/python3/dist-packages/nvidia/nccl/lib/libnccl.so.2');
    expect(lines).toContain('  HIP    unavailable  the HIP runtime (libamdhip64) is not installed: none of 2 candidates loaded');
    expect(lines).toContain('         libamdhip64 tried:');
    expect(lines).toContain('           /opt/rocm/lib/libamdhip64.so.6: no such file');
    expect(lines).toContain('  Metal  unavailable  Metal exists only on macOS (this is linux)');
    expect(lines).toContain('  CPU    available    16 cores, AMD EPYC 9454, 128 GiB memory (100 GiB free)');
    expect(text.endsWith('\n')).toBe(true);
  });

  it('reports a failed cuInit and a missing NVRTC', () => {
    const report = fakeReport();
    const cuda = report.backends.cuda;
    cuda.available = false;
    cuda.reason = 'cuInit failed with CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected';
    cuda.init = { call: 'cuInit', ok: false, code: 100, name: 'CUDA_ERROR_NO_DEVICE', description: 'no CUDA-capable device is detected' };
    cuda.deviceCount = null;
    cuda.nvrtc = {
      available: false,
      reason: 'NVRTC is not installed: none of 1 candidates loaded',
      library: { found: false, path: null, tried: [{ path: '/nope/libnvrtc.so', error: 'no such file' }] },
      version: null,
      supportedArchs: [],
    };
    cuda.nccl = {
      available: false,
      reason: 'NCCL is not installed: none of 1 candidates loaded',
      library: { found: false, path: null, tried: [{ path: 'libnccl.so.2', error: 'cannot open shared object file' }] },
      version: null,
    };
    report.devices = [];
    const lines = renderInfo(report).split('\n');
    expect(lines).toContain(
      '  CUDA   unavailable  cuInit failed with CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected (driver 580.65.06, CUDA 13.0)',
    );
    expect(lines).toContain('         cuInit returned CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected');
    expect(lines).toContain('         NVRTC unavailable: NVRTC is not installed: none of 1 candidates loaded');
    expect(lines).toContain('             /nope/libnvrtc.so: no such file');
    expect(lines).toContain('         NCCL unavailable (multi-GPU collectives need it): NCCL is not installed: none of 1 candidates loaded');
    expect(lines).toContain('             libnccl.so.2: cannot open shared object file');
    expect(lines).toContain('  none: no GPU answered');
  });

  it('lists devices whose values could not all be read', () => {
    const report = fakeReport();
    report.devices = [fakeH100({ memoryFree: null, error: 'cuDevicePrimaryCtxRetain failed with CUDA_ERROR_OUT_OF_MEMORY (2)' })];
    const text = renderInfo(report);
    expect(text).toContain('  cuda 0: some values could not be read: cuDevicePrimaryCtxRetain failed');
    expect(text).toContain('— / 79.2 GiB');
  });
});

describe('renderDeviceTable', () => {
  it('aligns a header, a rule and one row per device', () => {
    const table = renderDeviceTable([
      fakeH100(),
      fakeH100({ ordinal: 1, name: 'NVIDIA A100-SXM4-40GB', arch: 'sm_80', computeCapability: '8.0', multiprocessorCount: 108, sharedMemoryPerBlockOptin: 163 * 1024, l2CacheSize: 40 * 2 ** 20, memoryTotal: 40 * 2 ** 30, memoryFree: 39 * 2 ** 30, uuid: 'GPU-1' }),
      fakeH100({ ordinal: 0, backend: 'hip', name: 'MI300X', arch: null, computeCapability: null, multiprocessorCount: null, sharedMemoryPerBlock: null, sharedMemoryPerBlockOptin: null, l2CacheSize: null, tensorCores: null, fp16: null, bf16: null, memoryFree: null, uuid: null, driverVersion: '6.2.41134' }),
    ]);
    expect(table).toHaveLength(5);
    const header = table[0]!;
    for (const column of ['#', 'backend', 'name', 'arch', 'CC', 'SMs', 'memory free / total', 'smem/block (opt-in)', 'L2', 'tensor cores', 'fp16', 'bf16', 'driver', 'UUID']) {
      expect(header).toContain(column);
    }
    expect(table[1]).toMatch(/^-+( {2}-+)+$/);
    // Each column starts at the same offset in every line.
    const starts = (line: string) => [...line.matchAll(/(?:^|\s{2})(\S)/g)].map((m) => m.index! + m[0].length - 1);
    const rule = starts(table[1]!);
    expect(starts(header)).toEqual(rule);
    expect(table[2]).toBe(
      '0  cuda     NVIDIA H100 80GB HBM3  sm_90  9.0  132  78.7 GiB / 79.2 GiB  48 KiB (227 KiB)     50 MiB  yes           yes   yes   13.0       GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9',
    );
    expect(table[3]).toContain('NVIDIA A100-SXM4-40GB  sm_80  8.0  108  39 GiB / 40 GiB');
    expect(table[4]).toBe('0  hip      MI300X                 —      —    —    — / 79.2 GiB         —                    —       —             —     —     6.2.41134  —');
  });
});

describe('bytes', () => {
  it('uses binary units without needless decimals', () => {
    expect(bytes(0)).toBe('0 B');
    expect(bytes(1000)).toBe('1000 B');
    expect(bytes(48 * 1024)).toBe('48 KiB');
    expect(bytes(1.5 * 2 ** 20)).toBe('1.5 MiB');
    expect(bytes(85_045_870_592)).toBe('79.2 GiB');
  });
});
