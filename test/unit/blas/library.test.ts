import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Blas } from '../../../src/blas/blas.js';
import { blasSpec, openBlas } from '../../../src/blas/library.js';
import { probeBlas } from '../../../src/blas/probe.js';
import { LibraryNotFoundError } from '../../../src/errors.js';
import { resetLibraryCache } from '../../../src/ffi/library.js';
import { blasAvailable, needsBlas } from './blas-available.js';

const override = process.env.GPUCOMPUTE_LIBBLAS;
const DEBIAN_OPENBLAS = '/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0';
// Debian's ILP64 OpenBLAS (libopenblas64-0-pthread), when installed: loads, but takes 64-bit integers.
const DEBIAN_OPENBLAS_ILP64 = '/usr/lib/x86_64-linux-gnu/openblas64-pthread/libopenblas64.so.0';

afterEach(() => {
  vi.unstubAllEnvs();
  resetLibraryCache();
});

function notFound(open: () => unknown): LibraryNotFoundError {
  try {
    open();
  } catch (err) {
    expect(err).toBeInstanceOf(LibraryNotFoundError);
    return err as LibraryNotFoundError;
  }
  return expect.unreachable('the library loaded');
}

describe('BLAS discovery', () => {
  it('on Linux tries threaded OpenBLAS first, then MKL, BLIS and any CBLAS, with Debian, conda and MKLROOT folders', () => {
    if (process.platform !== 'linux' || process.arch !== 'x64') return;
    vi.stubEnv('MKLROOT', '/custom/mkl');
    vi.stubEnv('CONDA_PREFIX', '/custom/conda');
    const candidates = blasSpec.candidates();
    expect(candidates.slice(0, 3)).toEqual(['libopenblasp.so.0', 'libopenblaso.so.0', 'libopenblas.so.0']);
    const at = (path: string) => {
      expect(candidates).toContain(path);
      return candidates.indexOf(path);
    };
    const debianOpenblas = at(DEBIAN_OPENBLAS);
    expect(debianOpenblas).toBeLessThan(at('/usr/lib/x86_64-linux-gnu/openblas-serial/libopenblas.so.0'));
    expect(debianOpenblas).toBeLessThan(at('/custom/conda/lib/libopenblas.so.0'));
    const mkl = at('libmkl_rt.so.2');
    expect(at('/custom/conda/lib/libopenblas.so.0')).toBeLessThan(mkl);
    expect(mkl).toBeLessThan(at('/custom/mkl/lib/intel64/libmkl_rt.so.2'));
    expect(at('/custom/mkl/lib/libmkl_rt.so.2')).toBeLessThan(at('/opt/intel/oneapi/mkl/latest/lib/intel64/libmkl_rt.so.2'));
    const blis = at('libblis-mt.so.4');
    expect(at('/opt/intel/mkl/lib/intel64/libmkl_rt.so')).toBeLessThan(blis);
    expect(blis).toBeLessThan(at('/usr/lib/x86_64-linux-gnu/blis-pthread/libblis.so.4'));
    expect(candidates.slice(-2)).toEqual(['libcblas.so.3', 'libblas.so.3']);
    expect(new Set(candidates).size).toBe(candidates.length);
  });

  it('lists only GPUCOMPUTE_LIBBLAS when it is set, and reports a missing file', () => {
    const missing = join(tmpdir(), 'gpucompute-no-such-dir', 'libopenblas.so.0');
    vi.stubEnv('GPUCOMPUTE_LIBBLAS', missing);
    const err = notFound(openBlas);
    expect(err.attempts).toEqual([{ path: missing, error: 'no such file' }]);
    expect(err.message).toContain(missing);
    expect(err.message).toContain('GPUCOMPUTE_LIBBLAS is set');
    expect(() => Blas.open()).toThrow(LibraryNotFoundError);
  });

  it('reports the loader error for a file that is not a library', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpucompute-blas-'));
    try {
      const bogus = join(dir, 'libopenblas.so.0');
      writeFileSync(bogus, 'not a shared library');
      vi.stubEnv('GPUCOMPUTE_LIBBLAS', bogus);
      const [attempt] = notFound(openBlas).attempts;
      expect(attempt!.path).toBe(bogus);
      expect(attempt!.error).not.toBe('no such file');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a library without cblas_sgemm, saying so', () => {
    if (process.platform !== 'linux') return;
    vi.stubEnv('GPUCOMPUTE_LIBBLAS', 'libm.so.6');
    expect(notFound(openBlas).attempts).toEqual([{ path: 'libm.so.6', error: expect.stringMatching(/no cblas_sgemm/) }]);
  });

  it.skipIf(!existsSync(DEBIAN_OPENBLAS_ILP64))('refuses an ILP64 OpenBLAS (64-bit integers)', () => {
    vi.stubEnv('GPUCOMPUTE_LIBBLAS', DEBIAN_OPENBLAS_ILP64);
    expect(notFound(openBlas).attempts[0]!.error).toMatch(/ILP64 build of OpenBLAS/);
  });

  it.skipIf(!blasAvailable || !!override)(`the default search finds a BLAS, Debian's OpenBLAS where it is installed${needsBlas}`, () => {
    const blas = Blas.open();
    expect(blas.path.length).toBeGreaterThan(0);
    if (existsSync(DEBIAN_OPENBLAS)) {
      expect(blas.vendor).toBe('openblas');
      expect(blas.version).toMatch(/^OpenBLAS \d+\.\d+\.\d+/);
    }
  });
});

describe('probeBlas', () => {
  it('describes a missing BLAS as data, listing what was tried, without throwing', () => {
    const missing = join(tmpdir(), 'gpucompute-no-such-dir', 'libblas.so.3');
    vi.stubEnv('GPUCOMPUTE_LIBBLAS', missing);
    expect(probeBlas()).toEqual({
      found: false,
      path: null,
      vendor: null,
      version: null,
      threads: null,
      tried: [{ path: missing, error: 'no such file' }],
      reason: expect.stringMatching(/none of 1 candidates/),
    });
  });

  it.skipIf(!blasAvailable)(`describes the BLAS found: path, vendor, version, threads${needsBlas}`, () => {
    const blas = Blas.open({ threads: 1 });
    const probe = probeBlas();
    expect(probe).toMatchObject({ found: true, path: blas.path, vendor: blas.vendor, version: blas.version, reason: null });
    // The probe reads the thread count without changing it.
    expect(probe.threads).toBe(blas.threads);
    expect(probe.tried.every((t) => t.path !== blas.path)).toBe(true);
    expect(JSON.parse(JSON.stringify(probe))).toEqual(probe);
  });
});
