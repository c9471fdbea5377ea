/**
 * The warmup's compile processes start from a vitest global setup (the GPU projects' warmup runs
 * there, in vitest's module runner, which lacks `import.meta.resolve`): a vitest run of a fixture
 * whose setup compiles one module for sm_90. Skips where no NVRTC loads.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { nvrtcAvailable } from '../nvrtc/nvrtc-available.js';

describe.skipIf(!nvrtcAvailable)('warmup from a vitest global setup', () => {
  const root = resolve(import.meta.dirname, '../../..');
  const dir = mkdtempSync(join(tmpdir(), 'gpucompute-warmup-vitest-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('compiles in a compile process into the cache', () => {
    const run = spawnSync(join(root, 'node_modules', '.bin', 'vitest'), ['run', '--config', join(import.meta.dirname, 'fixtures', 'global-setup', 'vitest.config.ts')], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, GPUCOMPUTE_FIXTURE_CACHE: join(dir, 'kernels'), GPUCOMPUTE_FIXTURE_RESULT: join(dir, 'result.json') },
      timeout: 60_000,
    });
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
    const result = JSON.parse(readFileSync(join(dir, 'result.json'), 'utf8'));
    expect(result).toMatchObject({ total: 1, compiled: 1, failed: [], jobs: 1 });
    expect(readdirSync(join(dir, 'kernels')).filter((f) => f.endsWith('.kernel'))).toHaveLength(1);
  });
});
