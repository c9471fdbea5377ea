import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AutotuneStore, problemClassKey, type AutotuneRecord } from '../../../src/compute/gpu/autotune.js';

function record(choice: string, kernelMs = 1): AutotuneRecord {
  return { choice, kernel: choice === 'cublas' ? 'mma64x64x32w2x2s3' : choice, kernelMs, candidates: { [choice]: kernelMs }, measuredAt: '2026-01-01T00:00:00.000Z' };
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'gc-autotune-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('AutotuneStore', () => {
  it('persists records and reads them back in a new store', () => {
    const path = join(dir, 'autotune.json');
    const store = new AutotuneStore(path);
    store.set('k1', record('wgmma128x256s4', 0.2));
    expect(store.persistent).toBe(true);
    expect(new AutotuneStore(path).get('k1')).toEqual(record('wgmma128x256s4', 0.2));
    // Atomic writes leave no temporary files behind.
    expect(readdirSync(dir)).toEqual(['autotune.json']);
  });

  it('merges what another process wrote meanwhile', () => {
    const path = join(dir, 'autotune.json');
    const first = new AutotuneStore(path);
    const second = new AutotuneStore(path);
    first.set('a', record('cublas'));
    second.set('b', record('mma128x128x32w2x2s4'));
    const reread = new AutotuneStore(path);
    expect(reread.get('a')?.choice).toBe('cublas');
    expect(reread.get('b')?.choice).toBe('mma128x128x32w2x2s4');
    expect(second.get('a')?.choice).toBe('cublas');
  });

  it('drops records of an older file version (measured on older kernels)', () => {
    const path = join(dir, 'autotune.json');
    writeFileSync(path, JSON.stringify({ version: 1, records: { k: record('simt128x128x16w32x64t8x8m1') } }));
    expect(new AutotuneStore(path).entries()).toEqual([]);
    new AutotuneStore(path).set('k', record('simt128x128x8w32x64t8x8m2'));
    expect(new AutotuneStore(path).get('k')?.choice).toBe('simt128x128x8w32x64t8x8m2');
  });

  it('reads a corrupted or foreign file as empty and rewrites it', () => {
    const path = join(dir, 'autotune.json');
    writeFileSync(path, '{"version": 1, "records": {"x": {"choice": 3}}}');
    expect(new AutotuneStore(path).entries()).toEqual([]);
    writeFileSync(path, 'not json');
    const store = new AutotuneStore(path);
    expect(store.entries()).toEqual([]);
    store.set('k', record('simt32x32x16w16x32t4x4m1'));
    expect(JSON.parse(readFileSync(path, 'utf8')).records.k.choice).toBe('simt32x32x16w16x32t4x4m1');
  });

  it('keeps records in memory when the folder cannot be written', () => {
    // A regular file where the folder should be: no user, root included, can create it.
    writeFileSync(join(dir, 'file'), '');
    const store = new AutotuneStore(join(dir, 'file', 'autotune.json'));
    store.set('k', record('cublas'));
    expect(store.get('k')?.choice).toBe('cublas');
    expect(store.persistent).toBe(false);
    expect(readdirSync(dir)).toEqual(['file']);
  });

  it('memory-only store without a path', () => {
    const store = new AutotuneStore(undefined);
    store.set('k', record('cublas'));
    expect(store.get('k')?.choice).toBe('cublas');
    expect(store.persistent).toBe(false);
  });
});

describe('problemClassKey', () => {
  const base = { device: 'NVIDIA H200', dtype: 'f16', precision: 'highest', transA: false, transB: true, m: 4096, n: 4096, k: 4096, batch: 1, alignA: true, alignB: true, vecC: true };
  it('buckets extents by powers of two', () => {
    expect(problemClassKey(base)).toBe('NVIDIA H200|f16|highest|t01|a111|m12n12k12b0');
    expect(problemClassKey({ ...base, m: 3000, n: 2049 })).toBe('NVIDIA H200|f16|highest|t01|a111|m12n12k12b0');
    expect(problemClassKey({ ...base, m: 1 })).toContain('m0n12');
  });
  it('separates everything that selects another kernel', () => {
    const keys = new Set([
      problemClassKey(base),
      problemClassKey({ ...base, device: 'NVIDIA H100 80GB HBM3' }),
      problemClassKey({ ...base, dtype: 'bf16' }),
      problemClassKey({ ...base, transA: true }),
      problemClassKey({ ...base, alignB: false }),
      problemClassKey({ ...base, batch: 8 }),
      problemClassKey({ ...base, precision: 'tf32' }),
    ]);
    expect(keys.size).toBe(7);
  });
});
