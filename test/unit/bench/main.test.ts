import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tsxCommand } from '../../../bench/report.js';
import { gpuAvailable } from '../../gpu/gpu-available.js';

const root = resolve(import.meta.dirname, '../../..');

function bench(args: string[]) {
  const { command, args: argv } = tsxCommand(join(root, 'bench/main.ts'), args);
  const r = spawnSync(command, argv, { cwd: root, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('bench/main.ts', () => {
  it('refuses an unknown bench name with exit code 2', () => {
    const r = bench(['launch', 'warp-speed']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown bench 'warp-speed'");
    expect(r.stderr).toContain('names: launch, ops, matmul');
  });

  it('prints usage for --help', () => {
    const r = bench(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: npm run bench');
  });

  it.skipIf(gpuAvailable)('skips a named GPU bench where no GPU answers, saying why, exiting 0', () => {
    const r = bench(['launch', 'svd']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^no CUDA GPU \(.+\)$/m);
    expect(r.stdout).toMatch(/^launch +skipped: no CUDA GPU$/m);
    expect(r.stdout).toMatch(/^svd +skipped: no CUDA GPU$/m);
    expect(r.stdout).not.toContain('=== bench');
  });

  it.skipIf(gpuAvailable)('skips the all-reduce bench below 2 CUDA GPUs, saying how many there are', () => {
    const r = bench(['allreduce']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^allreduce +skipped: needs 2 CUDA GPUs, 0 here$/m);
  });
});

describe('tsxCommand', () => {
  it("runs a script with this checkout's tsx under the current Node", () => {
    const { command, args } = tsxCommand('/x/y.ts', ['a']);
    expect(command).toBe(process.execPath);
    expect(args).toEqual([join(root, 'node_modules/tsx/dist/cli.mjs'), '/x/y.ts', 'a']);
  });
});
