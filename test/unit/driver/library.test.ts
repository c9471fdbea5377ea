import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cuda } from '../../../src/driver/bindings.js';
import { Device } from '../../../src/driver/device.js';
import { libcudaSpec, openLibcuda } from '../../../src/driver/library.js';
import { LibraryNotFoundError, MissingSymbolError } from '../../../src/errors.js';
import { resetLibraryCache } from '../../../src/ffi/library.js';
import { lazyFunctions } from '../../../src/ffi/lazy-functions.js';
import { openLibrary, type LibrarySpec } from '../../../src/ffi/library.js';

const LIBC = 'libc.so.6';
const saved = process.env.GPUCOMPUTE_LIBCUDA;
let scratch: string;

beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), 'gpucompute-libcuda-'));
  resetLibraryCache();
});

afterEach(() => {
  if (saved === undefined) delete process.env.GPUCOMPUTE_LIBCUDA;
  else process.env.GPUCOMPUTE_LIBCUDA = saved;
  resetLibraryCache();
  rmSync(scratch, { recursive: true, force: true });
});

describe('libcuda discovery', () => {
  it('lists the Linux sonames and the container, distro and WSL paths', () => {
    if (process.platform !== 'linux') return;
    const candidates = libcudaSpec.candidates();
    expect(candidates[0]).toBe('libcuda.so.1');
    expect(candidates).toEqual(
      expect.arrayContaining([
        'libcuda.so',
        '/usr/lib/libcuda.so.1',
        '/usr/lib/x86_64-linux-gnu/libcuda.so.1',
        '/usr/lib64/libcuda.so.1',
        '/usr/local/nvidia/lib64/libcuda.so.1',
        '/usr/lib/wsl/lib/libcuda.so.1',
      ]),
    );
    expect(libcudaSpec.envVar).toBe('GPUCOMPUTE_LIBCUDA');
  });

  it('tries only GPUCOMPUTE_LIBCUDA when set, and names it in the error', () => {
    const fake = join(scratch, 'missing', 'libcuda.so.1');
    process.env.GPUCOMPUTE_LIBCUDA = fake;
    let error: unknown;
    try {
      openLibcuda();
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(LibraryNotFoundError);
    const notFound = error as LibraryNotFoundError;
    expect(notFound.attempts).toEqual([{ path: fake, error: 'no such file' }]);
    expect(notFound.message).toContain(fake);
    expect(notFound.message).toContain('GPUCOMPUTE_LIBCUDA is set');
  });

  it('reports the loader error for a file that is not a library', () => {
    const bogus = join(scratch, 'libcuda.so.1');
    writeFileSync(bogus, 'not an ELF file');
    process.env.GPUCOMPUTE_LIBCUDA = bogus;
    expect(() => openLibcuda()).toThrow(LibraryNotFoundError);
    try {
      openLibcuda();
    } catch (err) {
      const attempt = (err as LibraryNotFoundError).attempts[0]!;
      expect(attempt.path).toBe(bogus);
      expect(attempt.error).not.toBe('no such file');
      expect(attempt.error.length).toBeGreaterThan(0);
    }
  });

  it('lists every candidate when none loads', () => {
    const spec: LibrarySpec = {
      name: 'a test library',
      envVar: 'GPUCOMPUTE_TEST_NO_SUCH_VAR',
      candidates: () => [join(scratch, 'a.so'), join(scratch, 'b.so'), 'libgpucompute-no-such-soname.so.7'],
    };
    try {
      openLibrary(spec);
      expect.unreachable();
    } catch (err) {
      expect((err as LibraryNotFoundError).attempts.map((a) => a.path)).toEqual(spec.candidates());
    }
  });

  it('surfaces a missing driver from the safe tier as LibraryNotFoundError', () => {
    process.env.GPUCOMPUTE_LIBCUDA = join(scratch, 'none', 'libcuda.so.1');
    expect(() => Device.count()).toThrow(LibraryNotFoundError);
  });
});

describe('lazy symbol binding', () => {
  it('binds what the library has and fails only the missing entry point, by name', () => {
    if (process.platform !== 'linux') return;
    const spec: LibrarySpec = { name: 'libc', envVar: 'GPUCOMPUTE_TEST_LIBC', candidates: () => [LIBC] };
    const fns = lazyFunctions(() => openLibrary(spec), {
      strlen: 'size_t strlen(const char *s)',
      cuNotInLibc: 'int cuNotInLibc(int x)',
    });
    expect(Number(fns.strlen('gpucompute'))).toBe(10);
    let error: unknown;
    try {
      fns.cuNotInLibc(1);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(MissingSymbolError);
    expect((error as MissingSymbolError).symbol).toBe('cuNotInLibc');
    expect((error as Error).message).toContain('cuNotInLibc');
  });

  it('loads a "driver" lacking cuInit and fails only that call, naming it', () => {
    if (process.platform !== 'linux') return;
    process.env.GPUCOMPUTE_LIBCUDA = LIBC;
    expect(openLibcuda().path).toBe(LIBC);
    expect(() => cuda.cuInit).toThrow(MissingSymbolError);
    expect(() => cuda.cuInit).toThrow(/cuInit/);
  });
});
