import { hip } from '../bindings.js';
import { check } from '../hip-error.js';
import type { HipDevicePtr, HipHostPtr, HipStreamHandle } from './handles.js';
import { out } from '../../driver/raw/out-params.js';

/** Host memory a synchronous copy reads or writes: a JS view, or the address of pinned memory. */
export type HostMemory = ArrayBufferView | HipHostPtr;

/** hipMalloc on the current device. */
export function malloc(bytes: number): HipDevicePtr {
  check(hip.hipMalloc(out.u64, bytes), 'hipMalloc');
  return out.u64[0]!;
}

/** hipFree. */
export function free(ptr: HipDevicePtr): void {
  check(hip.hipFree(ptr), 'hipFree');
}

/** hipHostMalloc: page-locked host memory, returned as its address (flags: HipHostMallocFlags). */
export function hostMalloc(bytes: number, flags = 0): HipHostPtr {
  check(hip.hipHostMalloc(out.handle, bytes, flags), 'hipHostMalloc');
  return out.handle[0]!;
}

/** hipHostFree. */
export function hostFree(ptr: HipHostPtr): void {
  check(hip.hipHostFree(ptr), 'hipHostFree');
}

/** hipHostRegister: page-locks existing host memory (flags: HipHostMallocFlags.Portable or 0). */
export function hostRegister(ptr: HipHostPtr, bytes: number, flags = 0): void {
  check(hip.hipHostRegister(ptr, bytes, flags), 'hipHostRegister');
}

/** hipHostUnregister. */
export function hostUnregister(ptr: HipHostPtr): void {
  check(hip.hipHostUnregister(ptr), 'hipHostUnregister');
}

/** hipMemcpyHtoD. */
export function memcpyHtoD(dst: HipDevicePtr, src: HostMemory, bytes: number): void {
  check(hip.hipMemcpyHtoD(dst, src, bytes), 'hipMemcpyHtoD');
}

/** hipMemcpyDtoH. */
export function memcpyDtoH(dst: HostMemory, src: HipDevicePtr, bytes: number): void {
  check(hip.hipMemcpyDtoH(dst, src, bytes), 'hipMemcpyDtoH');
}

/** hipMemcpyDtoD. */
export function memcpyDtoD(dst: HipDevicePtr, src: HipDevicePtr, bytes: number): void {
  check(hip.hipMemcpyDtoD(dst, src, bytes), 'hipMemcpyDtoD');
}

/** hipMemcpyHtoDAsync: `src` must stay valid until the copy has run (pinned memory, or a synchronised stream). */
export function memcpyHtoDAsync(dst: HipDevicePtr, src: HostMemory, bytes: number, stream: HipStreamHandle): void {
  check(hip.hipMemcpyHtoDAsync(dst, src, bytes, stream), 'hipMemcpyHtoDAsync');
}

/** hipMemcpyDtoHAsync: `dst` must stay valid until the copy has run. */
export function memcpyDtoHAsync(dst: HostMemory, src: HipDevicePtr, bytes: number, stream: HipStreamHandle): void {
  check(hip.hipMemcpyDtoHAsync(dst, src, bytes, stream), 'hipMemcpyDtoHAsync');
}

/** hipMemcpyDtoDAsync. */
export function memcpyDtoDAsync(dst: HipDevicePtr, src: HipDevicePtr, bytes: number, stream: HipStreamHandle): void {
  check(hip.hipMemcpyDtoDAsync(dst, src, bytes, stream), 'hipMemcpyDtoDAsync');
}

/** hipMemsetD8Async: sets `count` bytes. */
export function memsetD8Async(dst: HipDevicePtr, value: number, count: number, stream: HipStreamHandle): void {
  check(hip.hipMemsetD8Async(dst, value, count, stream), 'hipMemsetD8Async');
}

/** hipMemsetD32Async: sets `count` 32-bit words (`dst` 4-byte aligned). */
export function memsetD32Async(dst: HipDevicePtr, value: number, count: number, stream: HipStreamHandle): void {
  check(hip.hipMemsetD32Async(dst, value | 0, count, stream), 'hipMemsetD32Async');
}
