/**
 * The kernel cache against folders and entries that used to hang the process:
 * a cache folder on procfs, FIFOs and device links at an entry's path, and
 * writers killed mid-write. Whatever could block runs in a child process with
 * a timeout, so a regression fails here instead of hanging the suite.
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { KernelCache } from '../../../src/nvrtc/kernel-cache.js';
import { hipRuntimeAvailable } from '../hip/hip-available.js';
import type { ProbeResult } from './fixtures/cache-probe.js';
import { nvrtcAvailable } from './nvrtc-available.js';

const root = mkdtempSync(join(tmpdir(), 'gpucompute-cache-hazards-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirCount = 0;
const freshDir = () => join(root, `cache-${++dirCount}`);

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
// Generous for a loaded 2-core machine; a hang is what it must catch.
const CHILD_TIMEOUT_MS = 30_000;

/** Runs cache-probe.ts on `cases` in a child; fails (instead of hanging) if it does not finish in time. */
function probe(cases: { dir?: string; key: string }[], env: NodeJS.ProcessEnv = process.env): ProbeResult[] {
  const child = spawnSync(process.execPath, ['--import', 'tsx', fixture('cache-probe.ts'), JSON.stringify(cases)], {
    encoding: 'utf8',
    env,
    timeout: CHILD_TIMEOUT_MS,
    killSignal: 'SIGKILL',
  });
  if (child.error || child.status !== 0) {
    const why = child.error ? `did not finish in ${CHILD_TIMEOUT_MS} ms` : `exited ${child.status}`;
    throw new Error(`cache probe ${why}: ${child.stderr}`);
  }
  return JSON.parse(child.stdout) as ProbeResult[];
}

// FIFOs, device links and mkfifo(1): POSIX.
const posix = process.platform !== 'win32';

describe.skipIf(process.platform !== 'linux')('a cache folder on a pseudo-filesystem', () => {
  it('falls back to memory at once for folders procfs and sysfs will not create, without looping', () => {
    const dirs = ['/proc/gpucompute-test', '/proc/gpucompute-test/kernels', '/proc/self/gpucompute-test', '/sys/gpucompute-test'];
    const results = probe(dirs.map((dir) => ({ dir, key: 'k' })));
    for (const [i, result] of results.entries()) {
      expect(result, dirs[i]).toMatchObject({
        dir: dirs[i],
        mode: 'memory',
        modeAfterSet: 'memory',
        before: false,
        after: true,
        reread: false,
      });
      expect(result.fallbackReason, dirs[i]).toMatch(/^cache folder .* is not writable: (ENOENT|EPERM|EACCES)/);
      // Both the probe's caches said so.
      const memoryOnly = expect.stringMatching(/^kernel cache: memory-only: cache folder/);
      expect(result.debug, dirs[i]).toEqual([memoryOnly, memoryOnly]);
    }
    expect(existsSync('/proc/gpucompute-test')).toBe(false);
  });

  it('GPUCOMPUTE_CACHE_DIR under /proc gives a memory-only cache', () => {
    const [result] = probe([{ key: 'k' }], { ...process.env, GPUCOMPUTE_CACHE_DIR: '/proc/gpucompute-test/kernels' });
    expect(result).toMatchObject({ dir: '/proc/gpucompute-test/kernels', mode: 'memory', after: true });
  });

  it('a folder procfs has but will not write to ends in memory mode after the first write', () => {
    // As root, access(W_OK) passes on /proc, so the refusal comes from the write.
    const [result] = probe([{ dir: '/proc', key: 'k' }]);
    expect(result).toMatchObject({ modeAfterSet: 'memory', before: false, after: true, reread: false });
  });
});

describe('cache folder creation', () => {
  it('creates every missing level of an ordinary folder, and refuses a file at its path', () => {
    const dir = join(freshDir(), 'a', 'b', 'c');
    expect(new KernelCache({ dir }).mode).toBe('disk');
    expect(statSync(dir).isDirectory()).toBe(true);
    const file = join(dir, 'a-file');
    writeFileSync(file, '');
    const cache = new KernelCache({ dir: file });
    expect(cache.mode).toBe('memory');
    expect(cache.fallbackReason).toBe(`cache folder ${file} is not writable: ${file} is not a folder`);
  });
});

describe.skipIf(!posix)('entries that are not regular files', () => {
  it('refuses a FIFO, a link to /dev/zero, a link to a valid entry and an oversized file, then replaces each with a real entry', () => {
    const dir = freshDir();
    const cache = new KernelCache({ dir });
    const path = (key: string) => join(dir, `${key}.kernel`);
    const image = new Uint8Array(64).fill(1);
    for (const key of ['fifo', 'zero', 'link', 'huge']) cache.set(key, { image, loweredNames: {}, log: '' });

    rmSync(path('fifo'));
    expect(spawnSync('mkfifo', [path('fifo')]).status).toBe(0);
    rmSync(path('zero'));
    symlinkSync('/dev/zero', path('zero'));
    // Even a link to this key's own valid entry: entries are only ever files the cache renamed into place.
    renameSync(path('link'), join(dir, 'elsewhere.bin'));
    symlinkSync(join(dir, 'elsewhere.bin'), path('link'));
    // Sparse, so nothing is really written; one byte above the 256 MiB bound.
    truncateSync(path('huge'), 256 * 2 ** 20 + 1);

    const results = probe(['fifo', 'zero', 'link', 'huge'].map((key) => ({ dir, key })));
    const reasons = [/not a regular file/, /ELOOP/, /ELOOP/, /268435457 bytes, larger than the 268435456 an entry may have/];
    for (const [i, key] of ['fifo', 'zero', 'link', 'huge'].entries()) {
      expect(results[i], key).toMatchObject({ mode: 'disk', modeAfterSet: 'disk', before: false, after: true, reread: true });
      expect(results[i]!.debug[0], key).toMatch(new RegExp(`^kernel cache: refused entry .*${key}\\.kernel: ${reasons[i]!.source}`));
      // The store replaced the bad entry with a regular file (and left the link's target alone).
      expect(lstatSync(path(key)).isFile(), key).toBe(true);
    }
    expect(readFileSync(join(dir, 'elsewhere.bin')).length).toBeGreaterThan(64);
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('refuses a folder at an entry path (a miss, nothing thrown)', () => {
    const dir = freshDir();
    mkdirSync(join(dir, 'k.kernel'), { recursive: true });
    const debug: string[] = [];
    const cache = new KernelCache({ dir, logger: (_level, message) => debug.push(message) });
    expect(cache.get('k')).toBeUndefined();
    expect(cache.stats().misses).toBe(1);
    expect(debug).toEqual([expect.stringMatching(/refused entry .*k\.kernel: not a regular file$/)]);
  });
});

describe.skipIf(!posix)('compile() over an entry that is a FIFO or a link to /dev/zero', () => {
  /** Runs compile-probe.ts: two compiles through fresh caches on `dir`; their cacheHit flags. */
  function compileTwice(compiler: 'nvrtc' | 'hip', dir: string): boolean[] {
    const child = spawnSync(process.execPath, ['--import', 'tsx', fixture('compile-probe.ts'), compiler, dir], {
      encoding: 'utf8',
      timeout: CHILD_TIMEOUT_MS,
      killSignal: 'SIGKILL',
    });
    if (child.error || child.status !== 0) {
      const why = child.error ? `did not finish in ${CHILD_TIMEOUT_MS} ms` : `exited ${child.status}`;
      throw new Error(`compile probe ${why}: ${child.stderr}`);
    }
    return JSON.parse(child.stdout) as boolean[];
  }

  const compilers = [
    ['nvrtc', nvrtcAvailable],
    ['hip', hipRuntimeAvailable],
  ] as const;
  for (const [compiler, available] of compilers) {
    it.skipIf(!available)(`${compiler}: recompiles, and the rewritten entry hits`, () => {
      const dir = freshDir();
      expect(compileTwice(compiler, dir)).toEqual([false, true]);
      const [entry] = readdirSync(dir);
      const path = join(dir, entry!);
      for (const replace of [() => expect(spawnSync('mkfifo', [path]).status).toBe(0), () => symlinkSync('/dev/zero', path)]) {
        rmSync(path);
        replace();
        expect(lstatSync(path).isFile()).toBe(false);
        expect(compileTwice(compiler, dir)).toEqual([false, true]);
        expect(lstatSync(path).isFile()).toBe(true);
      }
    });
  }
});

describe('entries larger than the bound', () => {
  it('keeps an entry too large for disk in memory only, without writing it', () => {
    const dir = freshDir();
    const debug: string[] = [];
    const cache = new KernelCache({ dir, logger: (_level, message) => debug.push(message) });
    cache.set('big', { image: new Uint8Array(256 * 2 ** 20), loweredNames: {}, log: '' });
    expect(readdirSync(dir)).toEqual([]);
    expect(debug).toEqual([expect.stringMatching(/not writing entry big: \d+ bytes, larger than the 268435456/)]);
    expect(cache.mode).toBe('disk');
    expect(cache.get('big')?.image.length).toBe(256 * 2 ** 20);
  });
});

/** Starts cache-killed-writer.ts, waits until it stops at `stage`, SIGKILLs it and waits for it to exit. */
async function killWriterAt(dir: string, key: string, stage: 'mid-write' | 'before-rename'): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture('cache-killed-writer.ts'), dir, key, stage], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.on('close', (code, signal) => resolve(signal ?? code)));
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the writer did not reach ${stage} in ${CHILD_TIMEOUT_MS} ms: ${stderr}`)),
        CHILD_TIMEOUT_MS,
      );
      child.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('stopped')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.on('close', () => reject(new Error(`the writer exited before ${stage}: ${stderr}`)));
    });
  } finally {
    child.kill('SIGKILL');
  }
  expect(await exited).toBe('SIGKILL');
}

describe('a writer killed in the middle of a write', () => {
  const temps = (dir: string) => readdirSync(dir).filter((name) => name.endsWith('.tmp'));

  it.each(['mid-write', 'before-rename'] as const)(
    'killed %s: the next process never reads its temp file, keeps the old entry or recompiles, and later removes it',
    async (stage) => {
      const dir = freshDir();
      const old = { image: new Uint8Array(5000).fill(3), loweredNames: { writer: 'old' }, log: '' };
      new KernelCache({ dir }).set('with-old', old);
      await killWriterAt(dir, 'with-old', stage);
      await killWriterAt(dir, 'fresh', stage);

      const left = temps(dir);
      expect(left).toHaveLength(2);
      const encoded = 8 + 4 + 1024 ** 2; // magic, header length, image: the header comes on top
      for (const name of left) {
        const size = statSync(join(dir, name)).size;
        if (stage === 'mid-write') expect(size).toBeLessThan(encoded);
        else expect(size).toBeGreaterThan(encoded);
      }

      // The next process: the old entry is whole, the fresh key misses; the temp files are not entries.
      const next = new KernelCache({ dir });
      expect(next.get('with-old')).toEqual(old);
      expect(next.get('fresh')).toBeUndefined();
      next.set('fresh', old);
      expect(new KernelCache({ dir }).get('fresh')).toEqual(old);
      // Recent temp files may belong to live writers: kept.
      expect(temps(dir)).toEqual(left);

      // Once they are old, the next process that writes removes them; entries stay.
      const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
      for (const name of left) utimesSync(join(dir, name), twoHoursAgo, twoHoursAgo);
      const debug: string[] = [];
      new KernelCache({ dir, logger: (_level, message) => debug.push(message) }).set('another', old);
      expect(temps(dir)).toEqual([]);
      expect(debug.filter((m) => m.includes('removed abandoned temporary file'))).toHaveLength(2);
      expect(readdirSync(dir).sort()).toEqual(['another.kernel', 'fresh.kernel', 'with-old.kernel']);
      expect(new KernelCache({ dir }).get('with-old')).toEqual(old);
    },
  );

  it('clear() removes abandoned temp files too, and keeps recent ones', () => {
    const dir = freshDir();
    const cache = new KernelCache({ dir });
    cache.set('k', { image: new Uint8Array(16), loweredNames: {}, log: '' });
    writeFileSync(join(dir, '.k.1.aaaaaaaaaaaa.tmp'), 'abandoned');
    writeFileSync(join(dir, '.k.2.bbbbbbbbbbbb.tmp'), 'being written');
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
    utimesSync(join(dir, '.k.1.aaaaaaaaaaaa.tmp'), twoHoursAgo, twoHoursAgo);
    cache.clear();
    expect(readdirSync(dir)).toEqual(['.k.2.bbbbbbbbbbbb.tmp']);
  });
});
