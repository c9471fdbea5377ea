import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LibraryNotFoundError } from '../../../src/errors.js';
import { resetLibraryCache } from '../../../src/ffi/library.js';
import { ncclSafeEnv, NCCL_SAFE_ENV } from '../../../src/nccl/environment.js';
import { ncclSpec, openNccl } from '../../../src/nccl/library.js';
import { fakeNcclMissing, fakeNcclPath } from './fake-nccl.js';

afterEach(() => {
  vi.unstubAllEnvs();
  resetLibraryCache();
});

function notFound(): LibraryNotFoundError {
  try {
    openNccl();
  } catch (err) {
    expect(err).toBeInstanceOf(LibraryNotFoundError);
    return err as LibraryNotFoundError;
  }
  return expect.unreachable('NCCL loaded');
}

describe('NCCL discovery', () => {
  it.skipIf(process.platform !== 'linux')('tries the CUDA toolkit roots, the system loader, /usr/local/cuda, in that order', () => {
    vi.stubEnv('CUDA_HOME', '/custom/cuda');
    vi.stubEnv('CUDA_PATH', '');
    const candidates = ncclSpec.candidates();
    expect(candidates.slice(0, 4)).toEqual([
      '/custom/cuda/lib64/libnccl.so.2',
      '/custom/cuda/lib64/libnccl.so',
      '/custom/cuda/lib/libnccl.so.2',
      '/custom/cuda/lib/libnccl.so',
    ]);
    const at = (path: string) => candidates.indexOf(path);
    expect(at('libnccl.so.2')).toBeGreaterThan(3);
    expect(at('/usr/local/cuda/lib64/libnccl.so.2')).toBeGreaterThan(at('libnccl.so.2'));
  });

  it.skipIf(!fakeNcclPath)(`finds the nvidia-nccl wheel's nvidia/nccl/lib in a virtual environment, after the system ${fakeNcclMissing}`, () => {
    const venv = mkdtempSync(join(tmpdir(), 'gpucompute-venv-'));
    try {
      const lib = join(venv, 'lib', 'python3.12', 'site-packages', 'nvidia', 'nccl', 'lib');
      mkdirSync(lib, { recursive: true });
      copyFileSync(fakeNcclPath!, join(lib, 'libnccl.so.2'));
      vi.stubEnv('VIRTUAL_ENV', venv);
      vi.stubEnv('CUDA_HOME', '');
      vi.stubEnv('CUDA_PATH', '');
      const candidates = ncclSpec.candidates();
      expect(candidates.at(-1)).toBe(join(lib, 'libnccl.so.2'));
      expect(candidates.indexOf('libnccl.so.2')).toBeLessThan(candidates.length - 1);
      // No NCCL on the system here: the wheel's is the one that loads.
      const loaded = openNccl();
      if (loaded.path !== join(lib, 'libnccl.so.2')) return; // a machine with a system NCCL takes that one first
      expect(loaded.tried.map((t) => t.path)).toContain('libnccl.so.2');
    } finally {
      rmSync(venv, { recursive: true, force: true });
    }
  });

  it('lists every path tried when NCCL is missing, with the wheel to install', () => {
    const missing = join(tmpdir(), 'no-such-dir', 'libnccl.so.2');
    vi.stubEnv('GPUCOMPUTE_LIBNCCL', missing);
    const error = notFound();
    expect(error.attempts).toEqual([{ path: missing, error: 'no such file' }]);
    expect(error.message).toContain(`Could not load NCCL (libnccl). Tried:\n  - ${missing}: no such file`);
    expect(error.message).toContain('GPUCOMPUTE_LIBNCCL is set');
    expect(error.message).toContain('nvidia-nccl-cu13');
  });

  it.skipIf(process.platform !== 'linux')('without an override lists each candidate with why it did not load', () => {
    vi.stubEnv('GPUCOMPUTE_LIBNCCL', '');
    vi.stubEnv('CUDA_HOME', '/nonexistent/cuda');
    vi.stubEnv('VIRTUAL_ENV', '');
    let error: LibraryNotFoundError;
    try {
      openNccl();
      return; // this machine has NCCL
    } catch (err) {
      error = err as LibraryNotFoundError;
    }
    expect(error).toBeInstanceOf(LibraryNotFoundError);
    expect(error.attempts[0]).toEqual({ path: '/nonexistent/cuda/lib64/libnccl.so.2', error: 'no such file' });
    const bare = error.attempts.find((a) => a.path === 'libnccl.so.2');
    expect(bare?.error).toMatch(/cannot open shared object file/);
    expect(error.message).toContain('Set GPUCOMPUTE_LIBNCCL');
  });

  it('tries nothing off Linux', () => {
    const platform = Object.getOwnPropertyDescriptor(process, 'platform')!;
    Object.defineProperty(process, 'platform', { value: 'darwin' });
    try {
      expect(ncclSpec.candidates()).toEqual([]);
    } finally {
      Object.defineProperty(process, 'platform', platform);
    }
  });
});

describe('NVLink multicast stays off', () => {
  it('sets NCCL_NVLS_ENABLE=0 in this process before loading NCCL, whatever it was', () => {
    vi.stubEnv('NCCL_NVLS_ENABLE', '1');
    vi.stubEnv('GPUCOMPUTE_LIBNCCL', join(tmpdir(), 'no-such-dir', 'libnccl.so.2'));
    notFound();
    expect(process.env.NCCL_NVLS_ENABLE).toBe('0');
  });

  it('gives child processes the same, on top of the environment passed', () => {
    expect(NCCL_SAFE_ENV).toEqual({ NCCL_NVLS_ENABLE: '0' });
    expect(ncclSafeEnv({ PATH: '/bin', NCCL_NVLS_ENABLE: '1', NCCL_DEBUG: 'WARN' })).toEqual({ PATH: '/bin', NCCL_NVLS_ENABLE: '0', NCCL_DEBUG: 'WARN' });
  });
});
