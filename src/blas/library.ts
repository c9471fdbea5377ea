import { join } from 'node:path';
import type { LibrarySpec, LoadedLibrary, NativeLibrary } from '../ffi/library.js';
import { openLibrary } from '../ffi/library.js';
import { optionalFunction } from '../ffi/optional-function.js';
import { identifyBlas } from './vendor.js';

/**
 * Where a CPU BLAS is looked for; `GPUCOMPUTE_LIBBLAS` (a file path) replaces the list.
 *
 * Linux, most preferred first:
 * 1. OpenBLAS: 0.2 µs of call overhead and 4.8 µs for a 32×128×64 product through koffi on a
 *    2-core Zen 4, and full speed on large ones (190+ GFLOP/s). Threaded builds first: Fedora
 *    names them libopenblasp/libopenblaso and its plain libopenblas.so.0 is the serial one;
 *    elsewhere the bare soname is the system's choice (Debian's alternatives), then Debian's
 *    own folders, conda, and OpenBLAS's `make install` prefixes.
 * 2. MKL through its single dynamic library (libmkl_rt): `$MKLROOT`, oneAPI's and older default
 *    folders, conda. After OpenBLAS, which is as fast on AMD and has no separate threading
 *    runtime to find.
 * 3. BLIS: as fast on large products, but 51 µs on tiny ones with 2 threads (it starts its
 *    threads per call).
 * 4. Any other CBLAS: libcblas (ATLAS, netlib), then the system's libblas.so.3.
 *
 * macOS: Accelerate, always present. Windows: an OpenBLAS DLL on the DLL search path (PATH),
 * then conda, vcpkg and MSYS2 folders.
 *
 * A candidate that loads is refused when it lacks `cblas_sgemm` (a Fortran-only BLAS) or
 * takes 64-bit integers (an ILP64 build); see {@link blasRefusal}.
 */
export const blasSpec: LibrarySpec = {
  name: 'a CPU BLAS (OpenBLAS, MKL, BLIS, Accelerate or another CBLAS)',
  envVar: 'GPUCOMPUTE_LIBBLAS',
  candidates: () => {
    if (process.platform === 'darwin') return ['/System/Library/Frameworks/Accelerate.framework/Accelerate'];
    if (process.platform === 'win32') return windowsCandidates();
    return linuxCandidates();
  },
  check: (lib) => blasRefusal(lib),
  hint:
    'Install OpenBLAS: Debian/Ubuntu `apt-get install libopenblas0-pthread`, Fedora `dnf install openblas-threads`, ' +
    'Arch `pacman -S openblas`, Alpine `apk add openblas`, conda `conda install openblas`.',
};

/** Loads the CPU BLAS (cached for the process); throws LibraryNotFoundError listing every path tried. */
export function openBlas(): LoadedLibrary {
  return openLibrary(blasSpec);
}

/** Debian's multiarch folder name for this CPU, e.g. x86_64-linux-gnu. */
const MULTIARCH: Partial<Record<string, string>> = {
  x64: 'x86_64-linux-gnu',
  arm64: 'aarch64-linux-gnu',
  ppc64: 'powerpc64le-linux-gnu',
  riscv64: 'riscv64-linux-gnu',
  s390x: 's390x-linux-gnu',
  loong64: 'loongarch64-linux-gnu',
};

function linuxCandidates(): string[] {
  const triplet = MULTIARCH[process.arch];
  // Debian installs each threading flavour in its own folder and picks one through alternatives.
  const debian = (stem: string, file: string) =>
    triplet ? ['pthread', 'openmp', 'serial'].map((flavour) => `/usr/lib/${triplet}/${stem}-${flavour}/${file}`) : [];
  const conda = process.env.CONDA_PREFIX ? [join(process.env.CONDA_PREFIX, 'lib')] : [];
  const mklRoots = [process.env.MKLROOT, '/opt/intel/oneapi/mkl/latest', '/opt/intel/mkl'].filter((root): root is string => !!root);
  const mklDirs = [...mklRoots.flatMap((root) => [join(root, 'lib', 'intel64'), join(root, 'lib')]), ...conda];
  const mkl = ['libmkl_rt.so.2', 'libmkl_rt.so'];
  return [
    'libopenblasp.so.0',
    'libopenblaso.so.0',
    'libopenblas.so.0',
    ...debian('openblas', 'libopenblas.so.0'),
    ...[...conda, '/opt/OpenBLAS/lib', '/usr/local/lib'].map((dir) => join(dir, 'libopenblas.so.0')),
    'libopenblas.so',
    ...mkl,
    ...mklDirs.flatMap((dir) => mkl.map((name) => join(dir, name))),
    'libblis-mt.so.4',
    'libblis.so.4',
    ...debian('blis', 'libblis.so.4'),
    'libcblas.so.3',
    'libblas.so.3',
  ];
}

function windowsCandidates(): string[] {
  const names = ['libopenblas.dll', 'openblas.dll'];
  const dirs = [
    ...(process.env.CONDA_PREFIX ? [join(process.env.CONDA_PREFIX, 'Library', 'bin')] : []),
    ...(process.env.VCPKG_ROOT ? [join(process.env.VCPKG_ROOT, 'installed', 'x64-windows', 'bin')] : []),
    ...['ucrt64', 'clang64', 'mingw64'].map((env) => join('C:\\msys64', env, 'bin')),
  ];
  return [...names, ...dirs.flatMap((dir) => names.map((name) => join(dir, name)))];
}

/** MKL's interface layer constant for 32-bit integers (mkl_service.h). */
const MKL_INTERFACE_LP64 = 0;

/**
 * Why a loaded library cannot serve this binding, or undefined when it can. Every call here
 * passes 32-bit integers (LP64), so ILP64 builds are refused: MKL's single dynamic library is
 * pinned to LP64 first, before any other MKL call loads its interface layer, whatever
 * `MKL_INTERFACE_LAYER` says; OpenBLAS says USE64BITINT in its config string; BLIS reports its
 * BLAS integer size.
 */
export function blasRefusal(lib: NativeLibrary): string | undefined {
  if (!optionalFunction(lib, 'void cblas_sgemm(void)')) return 'loaded, but exports no cblas_sgemm (a BLAS without the C interface)';
  const setMklLayer = optionalFunction(lib, 'int MKL_Set_Interface_Layer(int layer)');
  if (setMklLayer && setMklLayer(MKL_INTERFACE_LP64) !== MKL_INTERFACE_LP64) {
    return 'loaded, but its MKL interface layer was already set to ILP64 (64-bit integers) in this process';
  }
  const { vendor, version } = identifyBlas(lib);
  if (vendor === 'openblas' && version?.includes('USE64BITINT')) {
    return 'loaded, but is an ILP64 build of OpenBLAS (USE64BITINT: 64-bit integers); the LP64 one is needed';
  }
  if (vendor === 'blis') {
    // A gint_t return read as int: its low 32 bits hold the value on every 64-bit ABI.
    const intSize = optionalFunction(lib, 'int bli_info_get_blas_int_type_size(void)');
    if (intSize && intSize() === 64) return 'loaded, but is an ILP64 build of BLIS (64-bit BLAS integers); an LP64 one is needed';
  }
  return undefined;
}
