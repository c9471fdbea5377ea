import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cudaIncludeCandidates, findCudaIncludes, readCudaVersion } from '../../../src/nvrtc/cuda-include.js';

const root = mkdtempSync(join(tmpdir(), 'gpucompute-cuda-include-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Lays out a fake toolkit include folder of the given CUDA_VERSION. */
function fakeInclude(name: string, cudaVersion: number, options: { cccl?: boolean; via?: 'runtime' | 'cuda.h' | 'json' } = {}) {
  const dir = join(root, name, 'include');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'cuda_fp16.h'), '// half\n');
  const via = options.via ?? 'runtime';
  if (via === 'runtime') writeFileSync(join(dir, 'cuda_runtime_api.h'), `/* api */\n#define CUDART_VERSION  ${cudaVersion}\n`);
  if (via === 'cuda.h') writeFileSync(join(dir, 'cuda.h'), `#define CUDA_VERSION ${cudaVersion}\n`);
  if (via === 'json') {
    const version = `${Math.floor(cudaVersion / 1000)}.${(cudaVersion % 1000) / 10}.1`;
    writeFileSync(join(root, name, 'version.json'), JSON.stringify({ cuda: { name: 'CUDA SDK', version } }));
  }
  if (options.cccl) mkdirSync(join(dir, 'cccl'), { recursive: true });
  return dir;
}

const cuda13 = fakeInclude('cuda-13.0', 13000, { cccl: true });
const cuda12 = fakeInclude('cuda-12.8', 12080);
const cuda11 = fakeInclude('cuda-11.8', 11080, { via: 'cuda.h' });
const cuda12json = fakeInclude('cuda-12.4-json', 12040, { via: 'json' });
const unversioned = join(root, 'mystery', 'include');
mkdirSync(unversioned, { recursive: true });
writeFileSync(join(unversioned, 'cuda_fp16.h'), '');

describe('readCudaVersion', () => {
  it('reads cuda_runtime_api.h, cuda.h, or version.json', () => {
    expect(readCudaVersion(cuda13)).toBe(13000);
    expect(readCudaVersion(cuda11)).toBe(11080);
    expect(readCudaVersion(cuda12json)).toBe(12040);
    expect(readCudaVersion(unversioned)).toBeUndefined();
  });
});

describe('findCudaIncludes', () => {
  const all = [join(root, 'absent', 'include'), unversioned, cuda13, cuda12, cuda11];

  it('takes the first folder whose CUDA major matches NVRTC and adds include/cccl when present', () => {
    expect(findCudaIncludes(13, all)).toEqual({
      paths: [cuda13, join(cuda13, 'cccl')],
      cudaVersion: 13000,
      rejected: [{ dir: unversioned, reason: 'its CUDA version could not be read' }],
    });
    expect(findCudaIncludes(12, all).paths).toEqual([cuda12]);
  });

  it('never mixes majors: CUDA 13 headers are rejected for NVRTC 11, with the reason', () => {
    const search = findCudaIncludes(11, [cuda13, cuda12]);
    expect(search.paths).toEqual([]);
    expect(search.cudaVersion).toBeUndefined();
    expect(search.rejected).toEqual([
      { dir: cuda13, reason: 'headers are CUDA 13.0, NVRTC is 11.x' },
      { dir: cuda12, reason: 'headers are CUDA 12.8, NVRTC is 11.x' },
    ]);
    expect(findCudaIncludes(11, [cuda13, cuda11]).paths).toEqual([cuda11]);
  });

  it('looks in CUDA_HOME and CUDA_PATH first', () => {
    const saved = { ...process.env };
    try {
      process.env.CUDA_HOME = join(root, 'cuda-12.8');
      process.env.CUDA_PATH = join(root, 'cuda-11.8');
      const candidates = [...cudaIncludeCandidates()];
      expect(candidates.slice(0, 2)).toEqual([cuda12, cuda11]);
      if (process.platform !== 'win32') expect(candidates).toContain('/usr/local/cuda/include');
    } finally {
      process.env = saved;
    }
  });

  // This machine has CUDA 13 headers in /usr/local/cuda/include and NVRTC 11.8:
  // the real layout must be accepted for NVRTC 13 only.
  it.skipIf(!existsSync('/usr/local/cuda/include/cuda_fp16.h'))('judges the real /usr/local/cuda/include by its version', () => {
    const version = readCudaVersion('/usr/local/cuda/include');
    expect(version).toBeGreaterThanOrEqual(11000);
    const major = Math.floor(version! / 1000);
    const matching = findCudaIncludes(major, ['/usr/local/cuda/include']);
    expect(matching.paths[0]).toBe('/usr/local/cuda/include');
    expect(matching.paths.includes('/usr/local/cuda/include/cccl')).toBe(existsSync('/usr/local/cuda/include/cccl'));
    expect(findCudaIncludes(major - 1, ['/usr/local/cuda/include']).paths).toEqual([]);
  });
});
