import koffi from 'koffi';
import { cuda } from '../bindings.js';
import { check, cudaError } from '../cuda-error.js';
import { JitOption } from '../generated/enums.js';
import type { CUdeviceptr, CUfunction, CUmodule } from './handles.js';
import { out } from './out-params.js';

/**
 * A module image: PTX text (a string, NUL-terminated here) or the bytes of a
 * CUBIN, a fatbin, or NUL-terminated PTX.
 */
export type ModuleImage = string | Uint8Array;

/** One extra cuModuleLoadDataEx option and its value (an int or a pointer-sized value). */
export type JitOptionValue = readonly [option: JitOption, value: number | bigint];

const LOG_BYTES = 16 * 1024;

/** cuModuleLoadData: loads a module into the current context. */
export function moduleLoadData(image: ModuleImage): CUmodule {
  check(cuda.cuModuleLoadData(out.handle, imageBytes(image)), 'cuModuleLoadData');
  return out.handle[0]!;
}

/**
 * cuModuleLoadDataEx with the JIT's info and error logs always captured: a
 * failure throws a CudaError carrying the error log (which names the PTX line
 * at fault); success returns the info log next to the module.
 */
export function moduleLoadDataEx(
  image: ModuleImage,
  options: readonly JitOptionValue[] = [],
): { module: CUmodule; infoLog: string } {
  const infoLog = Buffer.alloc(LOG_BYTES);
  const errorLog = Buffer.alloc(LOG_BYTES);
  const all: JitOptionValue[] = [
    [JitOption.INFO_LOG_BUFFER, koffi.address(infoLog)],
    [JitOption.INFO_LOG_BUFFER_SIZE_BYTES, LOG_BYTES],
    [JitOption.ERROR_LOG_BUFFER, koffi.address(errorLog)],
    [JitOption.ERROR_LOG_BUFFER_SIZE_BYTES, LOG_BYTES],
    ...options,
  ];
  const keys = new Int32Array(all.length);
  // Each value is a `void *` slot; integers travel cast to pointer width, as in C.
  const values = new BigUint64Array(all.length);
  all.forEach(([option, value], i) => {
    keys[i] = option;
    values[i] = BigInt(value);
  });
  const result = cuda.cuModuleLoadDataEx(out.handle, imageBytes(image), all.length, keys, values) as number;
  if (result !== 0) {
    const log = logText(errorLog);
    throw cudaError(result, 'cuModuleLoadDataEx', log ? `JIT error log:\n${log}` : undefined);
  }
  return { module: out.handle[0]!, infoLog: logText(infoLog) };
}

/** cuModuleGetFunction: a kernel by its (mangled, unless `extern "C"`) name. */
export function moduleGetFunction(module: CUmodule, name: string): CUfunction {
  check(cuda.cuModuleGetFunction(out.handle, module, name), 'cuModuleGetFunction');
  return out.handle[0]!;
}

/** cuModuleGetGlobal_v2: address and size of a `__device__` / `__constant__` variable. */
export function moduleGetGlobal(module: CUmodule, name: string): { ptr: CUdeviceptr; bytes: number } {
  check(cuda.cuModuleGetGlobal_v2(out.u64, out.u64b, module, name), 'cuModuleGetGlobal_v2');
  return { ptr: out.u64[0]!, bytes: Number(out.u64b[0]!) };
}

/** cuModuleUnload. */
export function moduleUnload(module: CUmodule): void {
  check(cuda.cuModuleUnload(module), 'cuModuleUnload');
}

function imageBytes(image: ModuleImage): Uint8Array {
  return typeof image === 'string' ? Buffer.from(`${image}\0`, 'utf8') : image;
}

function logText(buffer: Buffer): string {
  const end = buffer.indexOf(0);
  return buffer.toString('utf8', 0, end < 0 ? buffer.length : end).trim();
}
