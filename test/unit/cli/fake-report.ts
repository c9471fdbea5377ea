import type { InfoDevice as DeviceInfo, InfoReport } from '../../../src/cli/probe.js';

/** An H100 as the CUDA probe would describe it. */
export function fakeH100(overrides: Partial<DeviceInfo> = {}): DeviceInfo {
  return {
    backend: 'cuda',
    ordinal: 0,
    name: 'NVIDIA H100 80GB HBM3',
    uuid: 'GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9',
    pciBusId: '0000:18:00.0',
    arch: 'sm_90',
    computeCapability: '9.0',
    multiprocessorCount: 132,
    warpSize: 32,
    maxThreadsPerBlock: 1024,
    memoryTotal: 85_045_870_592,
    memoryFree: 84_500_000_000,
    memoryBusWidthBits: 5120,
    memoryClockKHz: 2_619_000,
    clockKHz: 1_980_000,
    sharedMemoryPerBlock: 48 * 1024,
    sharedMemoryPerBlockOptin: 227 * 1024,
    l2CacheSize: 50 * 2 ** 20,
    tensorCores: true,
    fp16: true,
    bf16: true,
    cooperativeLaunch: true,
    clusterLaunch: true,
    driverVersion: '13.0',
    error: null,
    ...overrides,
  };
}

/** A probe result of a machine with one H100 and no AMD GPU. */
export function fakeReport(): InfoReport {
  return {
    schema: 1,
    tool: 'gpucompute',
    version: '0.1.0',
    generatedAt: '2026-01-01T00:00:00.000Z',
    host: { platform: 'linux', arch: 'x64', osRelease: '6.8.0', node: 'v20.19.0' },
    backends: {
      cuda: {
        available: true,
        reason: null,
        library: { found: true, path: 'libcuda.so.1', tried: [] },
        init: { call: 'cuInit', ok: true, code: 0, name: 'CUDA_SUCCESS', description: 'no error' },
        driverVersion: '13.0',
        displayDriverVersion: '580.65.06',
        deviceCount: 1,
        nvrtc: {
          available: true,
          reason: null,
          library: { found: true, path: '/usr/local/cuda/lib64/libnvrtc.so.13', tried: [] },
          version: '13.0',
          supportedArchs: ['sm_75', 'sm_80', 'sm_86', 'sm_89', 'sm_90', 'sm_100', 'sm_120'],
        },
      },
      hip: {
        available: false,
        reason: 'the HIP runtime (libamdhip64) is not installed: none of 2 candidates loaded',
        library: {
          found: false,
          path: null,
          tried: [
            { path: 'libamdhip64.so.6', error: 'cannot open shared object file' },
            { path: '/opt/rocm/lib/libamdhip64.so.6', error: 'no such file' },
          ],
        },
        init: null,
        deviceCountCall: null,
        deviceCount: null,
        runtimeVersion: null,
        driverVersion: null,
      },
      metal: { available: false, reason: 'Metal exists only on macOS (this is linux)' },
      cpu: {
        available: true,
        reason: null,
        model: 'AMD EPYC 9454',
        cores: 16,
        memoryTotal: 128 * 2 ** 30,
        memoryFree: 100 * 2 ** 30,
        blas: {
          found: true,
          path: 'libopenblas.so.0',
          vendor: 'openblas',
          version: 'OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Zen MAX_THREADS=64',
          threads: 16,
          tried: [{ path: 'libopenblasp.so.0', error: 'Failed to load shared library: cannot open shared object file: No such file or directory' }],
          reason: null,
          enabled: true,
        },
      },
    },
    devices: [fakeH100()],
  };
}
