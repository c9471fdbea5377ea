import { hip } from '../bindings.js';
import { check } from '../hip-error.js';
import type { HipFunctionAttribute } from '../generated/enums.js';
import type { HipDevicePtr, HipFunctionHandle, HipModuleHandle, HipStreamHandle } from './handles.js';
import { out } from '../../driver/raw/out-params.js';

/** hipModuleLoadData: loads a code object (hiprtc's output) onto the current device. */
export function moduleLoadData(image: Uint8Array): HipModuleHandle {
  check(hip.hipModuleLoadData(out.handle, image), 'hipModuleLoadData');
  return out.handle[0]!;
}

/** hipModuleUnload. */
export function moduleUnload(module: HipModuleHandle): void {
  check(hip.hipModuleUnload(module), 'hipModuleUnload');
}

/** hipModuleGetFunction: a kernel by its (mangled unless `extern "C"`) name. */
export function moduleGetFunction(module: HipModuleHandle, name: string): HipFunctionHandle {
  check(hip.hipModuleGetFunction(out.handle, module, name), 'hipModuleGetFunction');
  return out.handle[0]!;
}

/** hipModuleGetGlobal: address and size of a `__device__` variable. */
export function moduleGetGlobal(module: HipModuleHandle, name: string): { ptr: HipDevicePtr; bytes: number } {
  check(hip.hipModuleGetGlobal(out.u64, out.u64b, module, name), 'hipModuleGetGlobal');
  return { ptr: out.u64[0]!, bytes: Number(out.u64b[0]!) };
}

/** hipFuncGetAttribute. */
export function funcGetAttribute(fn: HipFunctionHandle, attribute: HipFunctionAttribute): number {
  check(hip.hipFuncGetAttribute(out.i32, attribute, fn), 'hipFuncGetAttribute');
  return out.i32[0]!;
}

/**
 * hipModuleLaunchKernel. `params` is the address of the `void *[]` holding one
 * pointer per kernel parameter (ArgPack in ffi/kernel-args), 0n for none.
 */
export function moduleLaunchKernel(
  fn: HipFunctionHandle,
  gridX: number,
  gridY: number,
  gridZ: number,
  blockX: number,
  blockY: number,
  blockZ: number,
  sharedMemBytes: number,
  stream: HipStreamHandle,
  params: bigint,
): void {
  check(
    hip.hipModuleLaunchKernel(fn, gridX, gridY, gridZ, blockX, blockY, blockZ, sharedMemBytes, stream, params, null),
    'hipModuleLaunchKernel',
  );
}

/** hipModuleOccupancyMaxPotentialBlockSize: the block size with the best occupancy and the grid that fills the device. */
export function occupancyMaxPotentialBlockSize(
  fn: HipFunctionHandle,
  dynamicSmemBytes: number,
  blockSizeLimit: number,
): { minGridSize: number; blockSize: number } {
  check(
    hip.hipModuleOccupancyMaxPotentialBlockSize(out.i32, out.i32b, fn, dynamicSmemBytes, blockSizeLimit),
    'hipModuleOccupancyMaxPotentialBlockSize',
  );
  return { minGridSize: out.i32[0]!, blockSize: out.i32b[0]! };
}

/** hipModuleOccupancyMaxActiveBlocksPerMultiprocessor. */
export function occupancyMaxActiveBlocksPerMultiprocessor(fn: HipFunctionHandle, blockSize: number, dynamicSmemBytes: number): number {
  check(
    hip.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(out.i32, fn, blockSize, dynamicSmemBytes),
    'hipModuleOccupancyMaxActiveBlocksPerMultiprocessor',
  );
  return out.i32[0]!;
}
