import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

describe('FinalizationRegistry safety net', () => {
  it('frees the storage of tensors that were never disposed and warns once', () => {
    const script = fileURLToPath(new URL('./fixtures/leak-script.ts', import.meta.url));
    const output = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', script], {
      cwd: fileURLToPath(new URL('../../..', import.meta.url)),
      encoding: 'utf8',
    });
    const result = JSON.parse(output.trim().split('\n').pop()!) as {
      leaked: number;
      inUseAfterLeak: number;
      stats: { inUseBytes: number; allocations: number };
      warnings: string[];
      viewStillReadable: number[];
    };
    expect(result.leaked).toBeGreaterThan(1024);
    expect(result.inUseAfterLeak).toBe(result.leaked * 4000 + 40);
    // Only the reshape view (still referenced) keeps its storage.
    expect(result.stats).toMatchObject({ inUseBytes: 40, allocations: 1 });
    expect(result.viewStillReadable).toEqual(new Array(10).fill(1));
    expect(result.warnings).toHaveLength(1);
    expect(result.warnings[0]).toMatch(/^Tensor\(f32 \[1000\]\) was garbage-collected without dispose\(\); its memory was freed late\./);
  });
});
