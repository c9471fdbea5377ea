import { openBlas } from './library.js';
import { sgemm, type SgemmArgs } from './sgemm.js';
import { resolveThreadCount, threadControl, type BlasThreadControl } from './threads.js';
import { identifyBlas, type BlasVendor } from './vendor.js';

/** What {@link Blas.open} takes. */
export interface BlasOptions {
  /** Threads the library uses; default `GPUCOMPUTE_CPU_THREADS`, else `os.availableParallelism()`. */
  threads?: number;
}

/**
 * The CPU BLAS: the library found by discovery (OpenBLAS, MKL, BLIS, Accelerate or another
 * CBLAS), its thread count, and checked products on Float32Arrays.
 *
 * The library is loaded once per process, and its thread count is process-wide (Accelerate's is
 * per calling thread): every `Blas` shares them, and the last `open` or {@link Blas.setThreads} wins.
 * Calls are synchronous; the matrices may live in a SharedArrayBuffer or a shared WebAssembly
 * memory, at any offset, and are read and written in place.
 */
export class Blas {
  /** Which implementation loaded. */
  readonly vendor: BlasVendor;
  /** Its version or build string (`openblas_get_config`, `bli_info_get_version_str`, `MKL_Get_Version_String`); null where it has none. */
  readonly version: string | null;
  /** The file (or soname) that loaded. */
  readonly path: string;
  readonly #threads: BlasThreadControl;

  private constructor(path: string, vendor: BlasVendor, version: string | null, threads: BlasThreadControl) {
    this.path = path;
    this.vendor = vendor;
    this.version = version;
    this.#threads = threads;
  }

  /**
   * Loads the BLAS (throws LibraryNotFoundError listing every path tried when none loads) and
   * sets its thread count. Throws InvalidArgumentError for a thread count that is not a positive
   * integer, from the option or from `GPUCOMPUTE_CPU_THREADS`.
   */
  static open(options: BlasOptions = {}): Blas {
    const threads = resolveThreadCount(options.threads);
    const { lib, path } = openBlas();
    const { vendor, version } = identifyBlas(lib);
    const blas = new Blas(path, vendor, version, threadControl(lib, vendor));
    blas.setThreads(threads);
    return blas;
  }

  /**
   * The thread count read back from the library: what it really uses, which may differ from
   * the one asked for (a build's cap, a serial build). Null where the library cannot say: a
   * generic CBLAS, or Accelerate when multi-threaded (it picks the count itself).
   */
  get threads(): number | null {
    return this.#threads.get();
  }

  /** Asks the library for `threads` threads in later calls (see {@link Blas.threads} for what it took). */
  setThreads(threads: number): void {
    this.#threads.set(resolveThreadCount(threads));
  }

  /**
   * C = alpha·op(A)·op(B) + beta·C, row-major, in place in `c`. Every argument is checked first
   * (sizes, leading dimensions, that each array holds the range the product touches, that C
   * overlaps neither input); a bad one throws InvalidArgumentError naming it.
   */
  sgemm(args: SgemmArgs): void {
    sgemm(args);
  }
}
