/**
 * The kernel cache against folders that used to hang the process: a cache
 * folder on procfs. Whatever could block runs in a child process with
 * a timeout, so a regression fails here instead of hanging the suite.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { KernelCache } from '../../../src/nvrtc/kernel-cache.js';
import type { ProbeResult } from './fixtures/cache-probe.js';

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
