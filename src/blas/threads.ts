import { availableParallelism } from 'node:os';
import { InvalidArgumentError } from '../errors.js';
import type { NativeLibrary } from '../ffi/library.js';
import { optionalFunction } from '../ffi/optional-function.js';
import type { BlasVendor } from './vendor.js';

/** Environment variable giving the CPU backend's thread count when no option does. */
export const CPU_THREADS_ENV = 'GPUCOMPUTE_CPU_THREADS';

/** How many threads a loaded BLAS uses, through its vendor's own calls. */
export interface BlasThreadControl {
  /** Asks the library to use `threads` threads in later calls (process-wide; Accelerate: per calling thread). */
  set(threads: number): void;
  /** The count read back from the library; null where it cannot say (see {@link threadControl}). */
  get(): number | null;
}

/**
 * The thread count to use: `option`, else `GPUCOMPUTE_CPU_THREADS`, else
 * `os.availableParallelism()`. Throws {@link InvalidArgumentError} naming the option or the
 * variable when it is not a positive integer.
 */
export function resolveThreadCount(option?: number): number {
  if (option !== undefined) {
    if (!Number.isSafeInteger(option) || option < 1) throw new InvalidArgumentError(`BLAS threads option ${option} is not a positive integer`);
    return option;
  }
  const env = process.env[CPU_THREADS_ENV]?.trim();
  if (env) {
    const threads = /^\d+$/.test(env) ? Number(env) : NaN;
    if (!Number.isSafeInteger(threads) || threads < 1) throw new InvalidArgumentError(`${CPU_THREADS_ENV}=${env} is not a positive integer`);
    return threads;
  }
  return availableParallelism();
}

/**
 * The vendor's thread calls. OpenBLAS caps the count at its build's MAX_THREADS, BLIS reads
 * back null when its loops' ways were set instead (BLIS_JC_NT and the like), and MKL's
 * sequential layer stays at 1: read back to know. Accelerate on macOS 15+ offers only single-
 * or multi-threaded (`BLASSetThreading`, per calling thread) and reads back 1 or null (it picks
 * the count itself; `VECLIB_MAXIMUM_THREADS` caps it at load); before macOS 15 it has no control.
 * A generic CBLAS has none either: `set` does nothing and `get` is null.
 */
export function threadControl(lib: NativeLibrary, vendor: BlasVendor): BlasThreadControl {
  switch (vendor) {
    case 'openblas':
      return pair(lib, 'void openblas_set_num_threads(int threads)', 'int openblas_get_num_threads(void)');
    case 'mkl':
      return pair(lib, 'void MKL_Set_Num_Threads(int threads)', 'int MKL_Get_Max_Threads(void)');
    case 'blis': {
      // dim_t is the build's integer type, 64-bit unless BLIS was configured otherwise; its size,
      // read as int, is right on every 64-bit ABI (the low half of the return register).
      const bits = optionalFunction(lib, 'int bli_info_get_int_type_size(void)')?.() === 32 ? 'int32_t' : 'int64_t';
      return pair(lib, `void bli_thread_set_num_threads(${bits} threads)`, `${bits} bli_thread_get_num_threads(void)`);
    }
    case 'accelerate':
      return accelerate(lib);
    case 'generic':
      return { set: () => undefined, get: () => null };
  }
}

function pair(lib: NativeLibrary, setter: string, getter: string): BlasThreadControl {
  const set = optionalFunction(lib, setter);
  const get = optionalFunction(lib, getter);
  return {
    set: (threads) => void set?.(threads),
    get: () => {
      const threads = get ? Number(get()) : NaN;
      return threads >= 1 ? threads : null;
    },
  };
}

/** BLAS_THREADING values (vecLib's thread_api.h). */
const BLAS_THREADING_MULTI_THREADED = 0;
const BLAS_THREADING_SINGLE_THREADED = 1;

function accelerate(lib: NativeLibrary): BlasThreadControl {
  const set = optionalFunction(lib, 'int BLASSetThreading(int threading)');
  const get = optionalFunction(lib, 'int BLASGetThreading(void)');
  return {
    set: (threads) => void set?.(threads === 1 ? BLAS_THREADING_SINGLE_THREADED : BLAS_THREADING_MULTI_THREADED),
    get: () => (get?.() === BLAS_THREADING_SINGLE_THREADED ? 1 : null),
  };
}
