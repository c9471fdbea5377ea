import { hip } from '../bindings.js';
import { check, HipError } from '../hip-error.js';
import { HipResult } from '../hip-result.js';
import type { HipDeviceAttribute } from '../generated/device-attribute.js';
import { out } from '../../driver/raw/out-params.js';

/** hipInit: initialises the runtime; fails with hipErrorNoDevice where no AMD GPU is visible. */
export function init(flags = 0): void {
  check(hip.hipInit(flags), 'hipInit');
}

/** hipRuntimeGetVersion: HIP_VERSION of the runtime, major·10^7 + minor·10^5 + patch. */
export function runtimeGetVersion(): number {
  check(hip.hipRuntimeGetVersion(out.i32), 'hipRuntimeGetVersion');
  return out.i32[0]!;
}

/** hipDriverGetVersion. */
export function driverGetVersion(): number {
  check(hip.hipDriverGetVersion(out.i32), 'hipDriverGetVersion');
  return out.i32[0]!;
}

/** hipGetDeviceCount. */
export function getDeviceCount(): number {
  check(hip.hipGetDeviceCount(out.i32), 'hipGetDeviceCount');
  return out.i32[0]!;
}

/** hipSetDevice: makes `ordinal` the calling thread's current device (where later calls allocate and launch). */
export function setDevice(ordinal: number): void {
  check(hip.hipSetDevice(ordinal), 'hipSetDevice');
}

/** hipGetDevice: the calling thread's current device. */
export function getDevice(): number {
  check(hip.hipGetDevice(out.i32), 'hipGetDevice');
  return out.i32[0]!;
}

/** hipDeviceGetName. */
export function deviceGetName(ordinal: number): string {
  const buffer = Buffer.alloc(256);
  check(hip.hipDeviceGetName(buffer, buffer.length, ordinal), 'hipDeviceGetName');
  return cString(buffer);
}

/** hipDeviceGetPCIBusId, e.g. "0000:03:00.0". */
export function deviceGetPciBusId(ordinal: number): string {
  const buffer = Buffer.alloc(64);
  check(hip.hipDeviceGetPCIBusId(buffer, buffer.length, ordinal), 'hipDeviceGetPCIBusId');
  return cString(buffer);
}

/** hipDeviceTotalMem: device memory in bytes. */
export function deviceTotalMem(ordinal: number): number {
  check(hip.hipDeviceTotalMem(out.u64, ordinal), 'hipDeviceTotalMem');
  return Number(out.u64[0]!);
}

/** hipDeviceGetAttribute. */
export function deviceGetAttribute(attribute: HipDeviceAttribute, ordinal: number): number {
  check(hip.hipDeviceGetAttribute(out.i32, attribute, ordinal), 'hipDeviceGetAttribute');
  return out.i32[0]!;
}

// hipDeviceProp_t as `hipGetDeviceProperties` fills it (ROCm 5 layout, kept under that
// symbol by ROCm 6): 792 bytes, gcnArchName[256] at byte 396. The buffer is larger so a
// layout that grew cannot write past it.
const PROPS_BYTES = 4096;
const GCN_ARCH_NAME_OFFSET = 396;
const GCN_ARCH_NAME_BYTES = 256;
const TARGET_ID = /gfx[0-9a-f]{3,4}(?::[a-z]+[+-])*/;

/**
 * The device's target ID as the compiler names it, e.g. `gfx90a:sramecc+:xnack-`
 * (`gcnArchName` of hipGetDeviceProperties; no attribute gives it). When the field is
 * not where the ROCm 5 layout puts it, the properties are searched for the target ID.
 */
export function deviceGetArchName(ordinal: number): string {
  const props = Buffer.alloc(PROPS_BYTES);
  check(hip.hipGetDeviceProperties(props, ordinal), 'hipGetDeviceProperties');
  const field = cString(props.subarray(GCN_ARCH_NAME_OFFSET, GCN_ARCH_NAME_OFFSET + GCN_ARCH_NAME_BYTES));
  if (new RegExp(`^${TARGET_ID.source}$`).test(field)) return field;
  const found = TARGET_ID.exec(props.toString('latin1'));
  if (!found) throw new HipError(HipResult.hipErrorInvalidValue, 'hipGetDeviceProperties', `device ${ordinal}: the properties hold no gfx target name`);
  return found[0];
}

/** hipDeviceSynchronize: waits for all work on the current device. */
export function deviceSynchronize(): void {
  check(hip.hipDeviceSynchronize(), 'hipDeviceSynchronize');
}

/** hipMemGetInfo: free and total bytes of the current device. */
export function memGetInfo(): { free: number; total: number } {
  check(hip.hipMemGetInfo(out.u64, out.u64b), 'hipMemGetInfo');
  return { free: Number(out.u64[0]!), total: Number(out.u64b[0]!) };
}

/** hipDeviceGetStreamPriorityRange of the current device (lower numbers are more urgent). */
export function deviceGetStreamPriorityRange(): { least: number; greatest: number } {
  check(hip.hipDeviceGetStreamPriorityRange(out.i32, out.i32b), 'hipDeviceGetStreamPriorityRange');
  return { least: out.i32[0]!, greatest: out.i32b[0]! };
}

function cString(buffer: Buffer): string {
  const end = buffer.indexOf(0);
  return buffer.toString('utf8', 0, end < 0 ? buffer.length : end);
}
