import { cuda } from '../bindings.js';
import { check } from '../cuda-error.js';
import { MemPoolAttribute } from '../generated/enums.js';
import type { CUdeviceptr, CUmemoryPool, CUstream, HostPointer } from './handles.js';
import { out } from './out-params.js';

/**
 * Host memory a synchronous copy reads or writes: a JS view (valid for the
 * duration of the call, which is all a synchronous copy needs) or the address
 * of pinned / registered memory. Asynchronous copies take addresses only,
 * because the driver reads them after the call returns.
 */
export type HostMemory = ArrayBufferView | ArrayBuffer | HostPointer;

/** cuMemAlloc_v2: `bytes` of device memory in the current context. */
export function memAlloc(bytes: number): CUdeviceptr {
  check(cuda.cuMemAlloc_v2(out.u64, bytes), 'cuMemAlloc_v2');
  return out.u64[0]!;
}

/** cuMemFree_v2. */
export function memFree(ptr: CUdeviceptr): void {
  check(cuda.cuMemFree_v2(ptr), 'cuMemFree_v2');
}

/** cuMemAllocAsync: stream-ordered allocation from the device's current memory pool. */
export function memAllocAsync(bytes: number, stream: CUstream): CUdeviceptr {
  check(cuda.cuMemAllocAsync(out.u64, bytes, stream), 'cuMemAllocAsync');
  return out.u64[0]!;
}

/** cuMemFreeAsync: stream-ordered free; the memory returns to its pool when the stream reaches this point. */
export function memFreeAsync(ptr: CUdeviceptr, stream: CUstream): void {
  check(cuda.cuMemFreeAsync(ptr, stream), 'cuMemFreeAsync');
}

const poolValue = new ArrayBuffer(8);
const poolU64 = new BigUint64Array(poolValue);
const poolI32 = new Int32Array(poolValue);

/** Attributes whose value is a cuuint64_t; the others are an int. */
function isU64PoolAttribute(attr: MemPoolAttribute): boolean {
  return attr >= MemPoolAttribute.RELEASE_THRESHOLD;
}

/** cuMemPoolSetAttribute (ints for the reuse flags, byte counts for the rest). */
export function memPoolSetAttribute(pool: CUmemoryPool, attr: MemPoolAttribute, value: bigint): void {
  if (isU64PoolAttribute(attr)) poolU64[0] = value;
  else poolI32[0] = Number(value);
  check(cuda.cuMemPoolSetAttribute(pool, attr, poolValue), 'cuMemPoolSetAttribute');
}

/** cuMemPoolGetAttribute. */
export function memPoolGetAttribute(pool: CUmemoryPool, attr: MemPoolAttribute): bigint {
  poolU64[0] = 0n;
  check(cuda.cuMemPoolGetAttribute(pool, attr, poolValue), 'cuMemPoolGetAttribute');
  return isU64PoolAttribute(attr) ? poolU64[0]! : BigInt(poolI32[0]!);
}

/** cuMemPoolTrimTo: returns the pool's unused memory to the OS down to `minBytesToKeep`. */
export function memPoolTrimTo(pool: CUmemoryPool, minBytesToKeep: number): void {
  check(cuda.cuMemPoolTrimTo(pool, minBytesToKeep), 'cuMemPoolTrimTo');
}

/** cuMemAllocHost_v2: page-locked host memory, returned as its address. */
export function memAllocHost(bytes: number): HostPointer {
  check(cuda.cuMemAllocHost_v2(out.handle, bytes), 'cuMemAllocHost_v2');
  return out.handle[0]!;
}

/** cuMemHostAlloc: page-locked host memory with HostAllocFlags (portable, device-mapped, write-combined). */
export function memHostAlloc(bytes: number, flags: number): HostPointer {
  check(cuda.cuMemHostAlloc(out.handle, bytes, flags), 'cuMemHostAlloc');
  return out.handle[0]!;
}

/** cuMemFreeHost: frees memory from {@link memAllocHost} / {@link memHostAlloc}. */
export function memFreeHost(ptr: HostPointer): void {
  check(cuda.cuMemFreeHost(ptr), 'cuMemFreeHost');
}

/** cuMemHostRegister_v2: page-locks existing host memory (HostRegisterFlags). */
export function memHostRegister(ptr: HostPointer, bytes: number, flags: number): void {
  check(cuda.cuMemHostRegister_v2(ptr, bytes, flags), 'cuMemHostRegister_v2');
}

/** cuMemHostUnregister. */
export function memHostUnregister(ptr: HostPointer): void {
  check(cuda.cuMemHostUnregister(ptr), 'cuMemHostUnregister');
}

/** cuMemHostGetDevicePointer_v2: the device address of device-mapped pinned memory (zero-copy access). */
export function memHostGetDevicePointer(ptr: HostPointer): CUdeviceptr {
  check(cuda.cuMemHostGetDevicePointer_v2(out.u64, ptr, 0), 'cuMemHostGetDevicePointer_v2');
  return out.u64[0]!;
}

/** cuMemcpyHtoD_v2. */
export function memcpyHtoD(dst: CUdeviceptr, src: HostMemory, bytes: number): void {
  check(cuda.cuMemcpyHtoD_v2(dst, src, bytes), 'cuMemcpyHtoD_v2');
}

/** cuMemcpyDtoH_v2. */
export function memcpyDtoH(dst: HostMemory, src: CUdeviceptr, bytes: number): void {
  check(cuda.cuMemcpyDtoH_v2(dst, src, bytes), 'cuMemcpyDtoH_v2');
}

/** cuMemcpyDtoD_v2. */
export function memcpyDtoD(dst: CUdeviceptr, src: CUdeviceptr, bytes: number): void {
  check(cuda.cuMemcpyDtoD_v2(dst, src, bytes), 'cuMemcpyDtoD_v2');
}

/** cuMemcpyHtoDAsync_v2: `src` must be pinned or registered memory that stays valid until the copy runs. */
export function memcpyHtoDAsync(dst: CUdeviceptr, src: HostPointer, bytes: number, stream: CUstream): void {
  check(cuda.cuMemcpyHtoDAsync_v2(dst, src, bytes, stream), 'cuMemcpyHtoDAsync_v2');
}

/** cuMemcpyDtoHAsync_v2: `dst` must be pinned or registered memory that stays valid until the copy runs. */
export function memcpyDtoHAsync(dst: HostPointer, src: CUdeviceptr, bytes: number, stream: CUstream): void {
  check(cuda.cuMemcpyDtoHAsync_v2(dst, src, bytes, stream), 'cuMemcpyDtoHAsync_v2');
}

/** cuMemcpyDtoDAsync_v2. */
export function memcpyDtoDAsync(dst: CUdeviceptr, src: CUdeviceptr, bytes: number, stream: CUstream): void {
  check(cuda.cuMemcpyDtoDAsync_v2(dst, src, bytes, stream), 'cuMemcpyDtoDAsync_v2');
}

/** cuMemsetD8_v2: sets `count` bytes. */
export function memsetD8(dst: CUdeviceptr, value: number, count: number): void {
  check(cuda.cuMemsetD8_v2(dst, value, count), 'cuMemsetD8_v2');
}

/** cuMemsetD16_v2: sets `count` 16-bit words (`dst` 2-byte aligned). */
export function memsetD16(dst: CUdeviceptr, value: number, count: number): void {
  check(cuda.cuMemsetD16_v2(dst, value, count), 'cuMemsetD16_v2');
}

/** cuMemsetD32_v2: sets `count` 32-bit words (`dst` 4-byte aligned). */
export function memsetD32(dst: CUdeviceptr, value: number, count: number): void {
  check(cuda.cuMemsetD32_v2(dst, value, count), 'cuMemsetD32_v2');
}

/** cuMemsetD8Async. */
export function memsetD8Async(dst: CUdeviceptr, value: number, count: number, stream: CUstream): void {
  check(cuda.cuMemsetD8Async(dst, value, count, stream), 'cuMemsetD8Async');
}

/** cuMemsetD16Async. */
export function memsetD16Async(dst: CUdeviceptr, value: number, count: number, stream: CUstream): void {
  check(cuda.cuMemsetD16Async(dst, value, count, stream), 'cuMemsetD16Async');
}

/** cuMemsetD32Async. */
export function memsetD32Async(dst: CUdeviceptr, value: number, count: number, stream: CUstream): void {
  check(cuda.cuMemsetD32Async(dst, value, count, stream), 'cuMemsetD32Async');
}
