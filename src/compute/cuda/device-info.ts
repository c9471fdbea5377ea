/** The capability record of a CUDA device, shared by the CUDA backend's `info()` and its probe. */
import type { Device } from '../../driver/device.js';
import type { DeviceInfo } from '../backend/backend.js';

/** 13000 → "13.0", 12040 → "12.4" (the encoding of cuDriverGetVersion and CUDA_VERSION). */
export function formatCudaVersion(version: number): string {
  return `${Math.floor(version / 1000)}.${Math.floor((version % 1000) / 10)}`;
}

/** Reads `device`'s capabilities; `freeMemory` comes from a context of it (NaN when it was not read). */
export function cudaDeviceInfo(device: Device, driverVersion: number, freeMemory: number | undefined): DeviceInfo {
  const { major, minor } = device.computeCapability;
  const version = formatCudaVersion(driverVersion);
  return {
    backend: 'cuda',
    platform: `CUDA ${version} (driver API)`,
    deviceName: device.name,
    ordinal: device.ordinal,
    computeCapability: `${major}.${minor}`,
    arch: device.arch,
    totalMemory: device.totalMemory,
    freeMemory: freeMemory ?? NaN,
    multiprocessorCount: device.multiprocessorCount,
    tensorCores: device.supportsTensorCores,
    fp16: device.supportsFp16,
    bf16: device.supportsBf16,
    uuid: device.uuid,
    pciBusId: device.pciBusId,
    warpSize: device.warpSize,
    maxThreadsPerBlock: device.maxThreadsPerBlock,
    memoryBusWidthBits: device.memoryBusWidth,
    memoryClockKHz: device.memoryClockRateKHz,
    clockKHz: device.clockRateKHz,
    sharedMemoryPerBlock: device.sharedMemoryPerBlock,
    sharedMemoryPerBlockOptin: device.sharedMemoryPerBlockOptin,
    l2CacheSize: device.l2CacheSize,
    cooperativeLaunch: device.cooperativeLaunch,
    clusterLaunch: device.clusterLaunch,
    driverVersion: version,
  };
}
