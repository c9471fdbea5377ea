/** The capability record of a HIP device, shared by the HIP backend's `info()` and its probe. */
import type { HipDevice } from '../../hip/device.js';
import { driverGetVersion, runtimeGetVersion } from '../../hip/raw/device.js';
import { formatHipVersion } from '../../hip/runtime.js';
import type { DeviceInfo } from '../backend/backend.js';

export function hipDeviceInfo(device: HipDevice): DeviceInfo {
  const { free, total } = device.memoryInfo();
  return {
    backend: 'hip',
    platform: `HIP ${formatHipVersion(runtimeGetVersion())}`,
    deviceName: device.name,
    ordinal: device.ordinal,
    arch: device.target,
    totalMemory: total,
    freeMemory: free,
    multiprocessorCount: device.multiprocessorCount,
    // Matrix cores exist on CDNA (gfx908 on), but no kernel here uses them.
    tensorCores: false,
    fp16: true,
    bf16: true,
    pciBusId: device.pciBusId,
    warpSize: device.warpSize,
    maxThreadsPerBlock: device.maxThreadsPerBlock,
    clockKHz: device.clockRateKHz,
    sharedMemoryPerBlock: device.sharedMemoryPerBlock,
    l2CacheSize: device.l2CacheSize,
    cooperativeLaunch: device.cooperativeLaunch,
    clusterLaunch: false,
    driverVersion: formatHipVersion(driverGetVersion()),
  };
}
