import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { kernelCacheKey, type KernelCacheKeyInputs } from '../../../src/nvrtc/cache-key.js';
import { InvalidArgumentError } from '../../../src/errors.js';
import { defaultKernelCacheDir, KernelCache, type KernelCacheEntry } from '../../../src/nvrtc/kernel-cache.js';

const root = mkdtempSync(join(tmpdir(), 'gpucompute-kernel-cache-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirCount = 0;
const freshDir = () => join(root, `cache-${++dirCount}`);

const savedEnv = { ...process.env };
afterEach(() => {
  process.env = { ...savedEnv };
});

function entry(bytes = 4096): KernelCacheEntry {
  return { image: new Uint8Array(randomBytes(bytes)), loweredNames: { 'add<float>': '_Z3addIfEvPT_' }, log: 'a warning' };
}

const baseKey: KernelCacheKeyInputs = {
  source: '__global__ void k() {}',
  name: 'kernel.cu',
  headers: { 'a.cuh': '#define A 1' },
  options: ['--gpu-architecture=sm_80', '--std=c++17'],
  arch: 'sm_80',
  output: 'cubin',
  nvrtcVersion: '11.8',
  nameExpressions: ['k'],
  cudaHeaders: '',
  includeFingerprint: '',
};

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

describe('kernelCacheKey', () => {
  it('is a stable sha256 hex digest, independent of header order', () => {
    const key = kernelCacheKey(baseKey);
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(kernelCacheKey({ ...baseKey })).toBe(key);
    const twoHeaders = { ...baseKey, headers: { 'a.cuh': '1', 'b.cuh': '2' } };
    expect(kernelCacheKey({ ...baseKey, headers: { 'b.cuh': '2', 'a.cuh': '1' } })).toBe(kernelCacheKey(twoHeaders));
  });

  const variants: [string, Partial<KernelCacheKeyInputs>][] = [
    ['source', { source: '__global__ void k() { }' }],
    ['file name', { name: 'other.cu' }],
    ['header contents', { headers: { 'a.cuh': '#define A 2' } }],
    ['header name', { headers: { 'b.cuh': '#define A 1' } }],
    ['an option', { options: ['--gpu-architecture=sm_80', '--std=c++17', '--use_fast_math'] }],
    ['a define', { options: ['--gpu-architecture=sm_80', '--std=c++17', '--define-macro=N=1'] }],
    ['arch', { arch: 'sm_86' }],
    ['output kind', { output: 'ptx' }],
    ['NVRTC version', { nvrtcVersion: '12.8' }],
    ['name expressions', { nameExpressions: ['k', 'j'] }],
    ['CUDA headers identity', { cudaHeaders: '/usr/local/cuda/include\n13000' }],
    ['include folders fingerprint', { includeFingerprint: 'abc' }],
  ];
  it.each(variants)('changes with %s', (_label, change) => {
    expect(kernelCacheKey({ ...baseKey, ...change })).not.toBe(kernelCacheKey(baseKey));
  });

  it('cannot be fooled by moving text between fields', () => {
    const a = kernelCacheKey({ ...baseKey, options: ['-DA', '-DB'] });
    const b = kernelCacheKey({ ...baseKey, options: ['-DA-DB'] });
    const c = kernelCacheKey({ ...baseKey, source: 'ab', name: 'c' });
    const d = kernelCacheKey({ ...baseKey, source: 'a', name: 'bc' });
    expect(a).not.toBe(b);
    expect(c).not.toBe(d);
  });
});

describe('KernelCache', () => {
  it('misses, then hits from memory, then from disk in a new process (instance)', () => {
    const dir = freshDir();
    const key = kernelCacheKey(baseKey);
    const stored = entry();
    const first = new KernelCache({ dir });
    expect(first.mode).toBe('disk');
    expect(first.get(key)).toBeUndefined();
    first.set(key, stored);
    const fromMemory = first.get(key)!;
    expect(fromMemory.image).toEqual(stored.image);
    expect(first.stats()).toEqual({ hits: 1, misses: 1, diskHits: 0, memoryHits: 1, writes: 1, dir, mode: 'disk' });

    const second = new KernelCache({ dir });
    const fromDisk = second.get(key)!;
    expect(Buffer.from(fromDisk.image).equals(Buffer.from(stored.image))).toBe(true);
    expect(fromDisk.loweredNames).toEqual(stored.loweredNames);
    expect(fromDisk.log).toBe('a warning');
    second.get(key);
    expect(second.stats()).toMatchObject({ hits: 2, misses: 0, diskHits: 1, memoryHits: 1, writes: 0 });
  });

  it('hands out copies: changing a returned image does not change the cache', () => {
    const cache = new KernelCache({ dir: freshDir() });
    const stored = entry(64);
    cache.set('k1', stored);
    const original = stored.image.slice();
    stored.image.fill(0);
    cache.get('k1')!.image.fill(1);
    expect(cache.get('k1')!.image).toEqual(original);
  });

  it('writes atomically: one entry file, no temporary files left', () => {
    const dir = freshDir();
    const cache = new KernelCache({ dir });
    for (let i = 0; i < 5; i++) cache.set('same-key', entry(1000 + i));
    cache.set('other-key', entry());
    expect(readdirSync(dir).sort()).toEqual(['other-key.kernel', 'same-key.kernel']);
    expect(new KernelCache({ dir }).get('same-key')!.image.length).toBe(1004);
  });

  it('treats truncated, corrupted, foreign and misplaced entries as misses, and rewrites them', () => {
    const dir = freshDir();
    const stored = entry(2048);
    new KernelCache({ dir }).set('key-a', stored);
    const path = join(dir, 'key-a.kernel');
    const good = readFileSync(path);

    const damaged: [string, Buffer][] = [
      ['truncated', good.subarray(0, good.length - 100)],
      ['truncated header', good.subarray(0, 20)],
      ['empty', Buffer.alloc(0)],
      ['flipped image byte', Buffer.from(good).fill(good[good.length - 1]! ^ 0xff, good.length - 1)],
      ['wrong magic', Buffer.concat([Buffer.from('XXXXXXXX'), good.subarray(8)])],
      ['garbage header length', Buffer.concat([good.subarray(0, 8), Buffer.from([0xff, 0xff, 0xff, 0x7f]), good.subarray(12)])],
    ];
    for (const [label, bytes] of damaged) {
      writeFileSync(path, bytes);
      const cache = new KernelCache({ dir });
      expect(cache.get('key-a'), label).toBeUndefined();
      expect(cache.stats().misses, label).toBe(1);
      cache.set('key-a', stored);
      expect(new KernelCache({ dir }).get('key-a')!.image, label).toEqual(stored.image);
    }

    // A valid entry stored under another key's file name is not that key's entry.
    writeFileSync(join(dir, 'key-b.kernel'), good);
    expect(new KernelCache({ dir }).get('key-b')).toBeUndefined();
  });

  it('falls back to memory when the folder cannot be made', () => {
    const blocker = join(root, 'not-a-folder');
    writeFileSync(blocker, 'a file where the cache folder would go');
    const cache = new KernelCache({ dir: join(blocker, 'kernels') });
    expect(cache.mode).toBe('memory');
    expect(cache.fallbackReason).toMatch(/not writable/);
    cache.set('k', entry(16));
    expect(cache.get('k')).toBeDefined();
    expect(cache.stats()).toMatchObject({ mode: 'memory', hits: 1, memoryHits: 1, writes: 1 });
  });

  it('falls back to memory when a write fails later (folder gone), keeping the entry', () => {
    const dir = freshDir();
    const cache = new KernelCache({ dir });
    expect(cache.mode).toBe('disk');
    rmSync(dir, { recursive: true });
    writeFileSync(dir, 'the folder is now a file');
    const stored = entry(32);
    cache.set('k', stored);
    expect(cache.mode).toBe('memory');
    expect(cache.fallbackReason).toMatch(/writing to .* failed/);
    expect(cache.get('k')!.image).toEqual(stored.image);
  });

  it('GPUCOMPUTE_CACHE=0 turns it off; GPUCOMPUTE_CACHE_DIR moves it', () => {
    const dir = freshDir();
    process.env.GPUCOMPUTE_CACHE_DIR = dir;
    process.env.GPUCOMPUTE_CACHE = '0';
    const off = new KernelCache();
    expect(off.mode).toBe('off');
    off.set('k', entry(16));
    expect(off.get('k')).toBeUndefined();
    expect(off.stats()).toMatchObject({ mode: 'off', hits: 0, misses: 1, writes: 0 });
    expect(existsSync(dir)).toBe(false);

    delete process.env.GPUCOMPUTE_CACHE;
    const on = new KernelCache();
    expect(on.mode).toBe('disk');
    expect(on.dir).toBe(dir);
    on.set('k', entry(16));
    expect(readdirSync(dir)).toEqual(['k.kernel']);
  });

  it.skipIf(process.platform !== 'linux')('defaults to $XDG_CACHE_HOME or ~/.cache on Linux', () => {
    process.env.XDG_CACHE_HOME = '/some/xdg';
    expect(defaultKernelCacheDir()).toBe('/some/xdg/gpucompute/kernels');
    delete process.env.XDG_CACHE_HOME;
    expect(defaultKernelCacheDir()).toMatch(/\/\.cache\/gpucompute\/kernels$/);
  });

  it('refuses keys that are not plain file names', () => {
    const cache = new KernelCache({ dir: freshDir() });
    for (const key of ['', '../escape', 'a/b', 'x'.repeat(129), 'dot.ted']) {
      expect(() => cache.get(key), key).toThrow(InvalidArgumentError);
      expect(() => cache.set(key, entry(16)), key).toThrow(InvalidArgumentError);
    }
  });

  it('clear() removes its entries and leaves other files (and in-flight temp files) alone', () => {
    const dir = freshDir();
    const cache = new KernelCache({ dir });
    cache.set('k1', entry(16));
    cache.set('k2', entry(16));
    writeFileSync(join(dir, 'notes.txt'), 'keep me');
    writeFileSync(join(dir, '.k3.1234.abcdef.tmp'), 'another process is writing');
    cache.clear();
    expect(readdirSync(dir).sort()).toEqual(['.k3.1234.abcdef.tmp', 'notes.txt']);
    expect(cache.get('k1')).toBeUndefined();
    expect(new KernelCache({ dir }).get('k2')).toBeUndefined();
  });

  it('keeps at most memoryEntries in memory, dropping the least recently used', () => {
    const cache = new KernelCache({ dir: freshDir(), memoryEntries: 2 });
    cache.set('a', entry(16));
    cache.set('b', entry(16));
    cache.get('a');
    cache.set('c', entry(16)); // drops b, the least recently used
    cache.get('a');
    cache.get('b');
    expect(cache.stats()).toMatchObject({ memoryHits: 2, diskHits: 1 });
  });

  it('measures a hit of a ~100 KB image from disk and from memory (reported, not asserted)', () => {
    const dir = freshDir();
    const stored = entry(100 * 1024);
    new KernelCache({ dir }).set('big', stored);
    const diskTimes: number[] = [];
    for (let i = 0; i < 200; i++) {
      const cache = new KernelCache({ dir }); // a fresh memory layer: the hit comes from disk
      const start = performance.now();
      const hit = cache.get('big');
      diskTimes.push(performance.now() - start);
      expect(hit!.image.length).toBe(stored.image.length);
    }
    const cache = new KernelCache({ dir });
    cache.get('big');
    const memoryTimes: number[] = [];
    for (let i = 0; i < 200; i++) {
      const start = performance.now();
      cache.get('big');
      memoryTimes.push(performance.now() - start);
    }
    expect(Buffer.from(cache.get('big')!.image).equals(Buffer.from(stored.image))).toBe(true);
    expect(cache.stats()).toMatchObject({ diskHits: 1, memoryHits: 201 });
    console.log(
      `kernel cache hit, 100 KiB image: disk median ${(median(diskTimes) * 1000).toFixed(1)} µs, ` +
        `memory median ${(median(memoryTimes) * 1000).toFixed(1)} µs`,
    );
  });
});
