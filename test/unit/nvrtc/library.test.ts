import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LibraryNotFoundError } from '../../../src/errors.js';
import { resetLibraryCache } from '../../../src/ffi/library.js';
import { nvrtcSpec, openNvrtc } from '../../../src/nvrtc/library.js';
import { pythonSitePackages } from '../../../src/ffi/python-sites.js';

const savedEnv = { ...process.env };

afterEach(() => {
  process.env = { ...savedEnv };
  resetLibraryCache();
});

describe('NVRTC discovery', () => {
  it('with GPUCOMPUTE_LIBNVRTC set to a bogus path, tries only it and lists it in the error', () => {
    process.env.GPUCOMPUTE_LIBNVRTC = '/nonexistent/libnvrtc.so.99';
    resetLibraryCache();
    let error: unknown;
    try {
      openNvrtc();
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(LibraryNotFoundError);
    const notFound = error as LibraryNotFoundError;
    expect(notFound.attempts).toEqual([{ path: '/nonexistent/libnvrtc.so.99', error: 'no such file' }]);
    expect(notFound.message).toContain('/nonexistent/libnvrtc.so.99');
    expect(notFound.message).toContain('GPUCOMPUTE_LIBNVRTC');
  });

  it.skipIf(process.platform === 'win32')('orders CUDA_HOME, CUDA_PATH, then per version the loader and /usr/local/cuda', () => {
    process.env.CUDA_HOME = '/opt/cuda-home';
    process.env.CUDA_PATH = '/opt/cuda-path';
    const candidates = nvrtcSpec.candidates();
    const at = (path: string) => candidates.indexOf(path);
    expect(at('/opt/cuda-home/lib64/libnvrtc.so.13')).toBe(0);
    expect(at('/opt/cuda-home/lib64/libnvrtc.so.12')).toBe(1);
    expect(at('/opt/cuda-home/lib/libnvrtc.so.11.2')).toBeGreaterThan(0);
    expect(at('/opt/cuda-path/lib64/libnvrtc.so.13')).toBeGreaterThan(at('/opt/cuda-home/lib/libnvrtc.so'));
    expect(at('libnvrtc.so.13')).toBeGreaterThan(at('/opt/cuda-path/lib/libnvrtc.so'));
    // A CUDA 13 toolkit off the loader's path beats an older NVRTC on it.
    expect(at('/usr/local/cuda/lib64/libnvrtc.so.13')).toBe(at('libnvrtc.so.13') + 1);
    expect(at('libnvrtc.so.12')).toBeGreaterThan(at('/usr/local/cuda/lib/libnvrtc.so.13'));
    expect(at('libnvrtc.so.11.2')).toBeGreaterThan(at('/usr/local/cuda/lib64/libnvrtc.so.12'));
  });

  it.skipIf(process.platform === 'win32')('finds NVRTC in the pip wheel folders of a virtualenv', () => {
    const venv = mkdtempSync(join(tmpdir(), 'gpucompute-venv-'));
    try {
      const site = join(venv, 'lib', 'python3.12', 'site-packages');
      mkdirSync(join(site, 'nvidia', 'cu13', 'lib'), { recursive: true });
      mkdirSync(join(site, 'nvidia', 'cuda_nvrtc', 'lib'), { recursive: true });
      writeFileSync(join(site, 'nvidia', 'cu13', 'lib', 'libnvrtc.so.13'), '');
      writeFileSync(join(site, 'nvidia', 'cu13', 'lib', 'libnvrtc-builtins.so.13.0'), '');
      writeFileSync(join(site, 'nvidia', 'cuda_nvrtc', 'lib', 'libnvrtc.so.12'), '');
      process.env.VIRTUAL_ENV = venv;
      expect(pythonSitePackages()).toContain(site);
      const candidates = nvrtcSpec.candidates();
      expect(candidates).toContain(join(site, 'nvidia', 'cu13', 'lib', 'libnvrtc.so.13'));
      expect(candidates).toContain(join(site, 'nvidia', 'cuda_nvrtc', 'lib', 'libnvrtc.so.12'));
      // The builtins library is NVRTC's helper, not NVRTC itself.
      expect(candidates.some((c) => c.includes('libnvrtc-builtins'))).toBe(false);
    } finally {
      rmSync(venv, { recursive: true, force: true });
    }
  });
});
