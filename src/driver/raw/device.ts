import { cuda } from '../bindings.js';
import { check } from '../cuda-error.js';
import type { DeviceAttribute } from '../generated/device-attribute.js';
import type { CUdevice, CUmemoryPool } from './handles.js';
import { out } from './out-params.js';

/** cuDeviceGetCount: how many CUDA devices the driver sees. */
export function deviceGetCount(): number {
  check(cuda.cuDeviceGetCount(out.i32), 'cuDeviceGetCount');
  return out.i32[0]!;
}

/** cuDeviceGet: the device handle of an ordinal. */
export function deviceGet(ordinal: number): CUdevice {
  check(cuda.cuDeviceGet(out.i32, ordinal), 'cuDeviceGet');
  return out.i32[0]!;
}

/** cuDeviceGetName: the marketing name, e.g. "NVIDIA H100 80GB HBM3". */
export function deviceGetName(dev: CUdevice): string {
  const buffer = Buffer.alloc(256);
  check(cuda.cuDeviceGetName(buffer, buffer.length, dev), 'cuDeviceGetName');
  return cString(buffer);
}

/** cuDeviceGetUuid_v2: the 16 bytes of the device's UUID. */
export function deviceGetUuid(dev: CUdevice): Uint8Array {
  const uuid = new Uint8Array(16);
  check(cuda.cuDeviceGetUuid_v2(uuid, dev), 'cuDeviceGetUuid_v2');
  return uuid;
}

/** cuDeviceGetPCIBusId: the PCI address, e.g. "0000:18:00.0". */
export function deviceGetPciBusId(dev: CUdevice): string {
  const buffer = Buffer.alloc(64);
  check(cuda.cuDeviceGetPCIBusId(buffer, buffer.length, dev), 'cuDeviceGetPCIBusId');
  return cString(buffer);
}

/** cuDeviceTotalMem_v2: device memory in bytes. */
export function deviceTotalMem(dev: CUdevice): number {
  check(cuda.cuDeviceTotalMem_v2(out.u64, dev), 'cuDeviceTotalMem_v2');
  return Number(out.u64[0]!);
}

/** cuDeviceGetAttribute: one CUdevice_attribute. */
export function deviceGetAttribute(attribute: DeviceAttribute, dev: CUdevice): number {
  check(cuda.cuDeviceGetAttribute(out.i32, attribute, dev), 'cuDeviceGetAttribute');
  return out.i32[0]!;
}

/** cuDeviceGetDefaultMemPool: the pool cuMemAllocAsync draws from on this device. */
export function deviceGetDefaultMemPool(dev: CUdevice): CUmemoryPool {
  check(cuda.cuDeviceGetDefaultMemPool(out.handle, dev), 'cuDeviceGetDefaultMemPool');
  return out.handle[0]!;
}

function cString(buffer: Buffer): string {
  const end = buffer.indexOf(0);
  return buffer.toString('utf8', 0, end < 0 ? buffer.length : end);
}
