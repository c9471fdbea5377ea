import type { NativeLibrary } from '../ffi/library.js';
import { optionalFunction } from '../ffi/optional-function.js';

/**
 * Which BLAS implementation loaded, told apart by the entry points only it exports;
 * `generic` is any other CBLAS (netlib's reference, ATLAS, a distribution's default libblas).
 */
export type BlasVendor = 'openblas' | 'blis' | 'mkl' | 'accelerate' | 'generic';

/** A loaded BLAS library's vendor and its own description of itself. */
export interface BlasIdentity {
  readonly vendor: BlasVendor;
  /**
   * The library's version or build string: `openblas_get_config` ("OpenBLAS 0.3.21 DYNAMIC_ARCH
   * NO_AFFINITY Haswell MAX_THREADS=64"), `bli_info_get_version_str` ("0.9.0"),
   * `MKL_Get_Version_String`; null where the library has none (Accelerate, generic CBLAS).
   */
  readonly version: string | null;
}

const identities = new WeakMap<NativeLibrary, BlasIdentity>();

/** Identifies a loaded BLAS from its exported symbols (memoised per library). */
export function identifyBlas(lib: NativeLibrary): BlasIdentity {
  let identity = identities.get(lib);
  if (!identity) {
    identity = inspect(lib);
    identities.set(lib, identity);
  }
  return identity;
}

function inspect(lib: NativeLibrary): BlasIdentity {
  const mklVersion = optionalFunction(lib, 'void MKL_Get_Version_String(_Out_ char *buffer, int length)');
  if (mklVersion) {
    // Intel documents 198 characters as enough.
    const buffer = Buffer.alloc(256);
    mklVersion(buffer, buffer.length);
    return { vendor: 'mkl', version: cString(buffer) };
  }
  const blisVersion = optionalFunction(lib, 'const char *bli_info_get_version_str(void)');
  if (blisVersion) return { vendor: 'blis', version: blisVersion() as string };
  const openblasConfig = optionalFunction(lib, 'const char *openblas_get_config(void)');
  if (openblasConfig) return { vendor: 'openblas', version: (openblasConfig() as string).trim() };
  // Apple's one addition to CBLAS, in Accelerate since macOS 10.10.
  if (optionalFunction(lib, 'void appleblas_sgeadd(void)')) return { vendor: 'accelerate', version: null };
  return { vendor: 'generic', version: null };
}

function cString(buffer: Buffer): string {
  const end = buffer.indexOf(0);
  return buffer.toString('utf8', 0, end < 0 ? buffer.length : end).trim();
}
