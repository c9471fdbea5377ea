/**
 * The package as npm users get it: `tsc -p tsconfig.build.json` (what `npm install` runs through
 * `prepare`) into a scratch package laid out like this one (dist/ beside kernels/), then loaded by
 * plain Node, without tsx. TypeScript lowers some class code differently from tsx (a class's own
 * name inside a `static {}` block became a variable set only after the block ran), so the built
 * output is checked itself.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
let scratch: string;

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'gpucompute-package-'));
  execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.build.json'), '--outDir', join(scratch, 'dist')], { stdio: 'pipe' });
  cpSync(join(root, 'package.json'), join(scratch, 'package.json'));
  symlinkSync(join(root, 'kernels'), join(scratch, 'kernels'));
  symlinkSync(join(root, 'node_modules'), join(scratch, 'node_modules'));
}, 120_000);

afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('the built package', () => {
  it('loads in plain Node and runs an op on the CPU backend, tensors and their grad accessor included', () => {
    const script = `
      const { GpuCompute } = await import(${JSON.stringify(join(scratch, 'dist', 'index.js'))});
      const gpu = await GpuCompute.create({ backend: 'cpu' });
      const t = gpu.tensor([1, 2, 3]);
      console.log(JSON.stringify({ sum: Array.from(gpu.sum(t).toArraySync()), grad: t.grad === undefined }));
      gpu.dispose();`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', env: { ...process.env, GPUCOMPUTE_CPU_THREADS: '1' } });
    expect(JSON.parse(out.trim().split('\n').at(-1)!)).toEqual({ sum: [6], grad: true });
  });

  it("runs the CLI's entry point", () => {
    const out = execFileSync(process.execPath, [join(scratch, 'dist', 'cli', 'main.js'), '--help'], { encoding: 'utf8' });
    expect(out).toMatch(/warmup/);
  });
});
