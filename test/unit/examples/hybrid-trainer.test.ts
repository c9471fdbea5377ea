/**
 * `examples/hybrid-trainer.ts` as `bench/pipeline.ts` runs it, on the CPU backend: the pass, the
 * capture's replay (which the example checks against its eager run) and the figures it reports.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const run = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', join(root, 'examples', 'hybrid-trainer.ts'), '--backend', 'cpu', ...args], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, GPUCOMPUTE_CPU_THREADS: '2' },
  });

describe('examples/hybrid-trainer.ts', () => {
  it('runs every stage and reports its figures as JSON, with the warm-up count asked for', () => {
    const out = run('--warmup', '2', '--json');
    expect(out.status, out.stderr).toBe(0);
    expect(out.stdout).toContain('median of 30 passes after 2 warm-up passes');
    const figures = JSON.parse(out.stdout.trim().split('\n').at(-1)!) as Record<string, number | string>;
    expect(figures.backend).toBe('cpu');
    for (const stage of ['encode_state', 'predict', 'compress_residuals', 'apply_corrections', 'whole pass', 'encode + predict, replayed']) {
      expect(figures[stage], stage).toBeGreaterThan(0);
    }
  }, 60_000);

  it('refuses a warm-up count that is not a whole number', () => {
    const out = run('--warmup', '-3');
    expect(out.status).not.toBe(0);
    expect(out.stderr).toContain('--warmup takes a whole number of passes, got -3');
  }, 60_000);
});
