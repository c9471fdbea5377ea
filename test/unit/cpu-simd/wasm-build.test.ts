/**
 * The checked-in modules match their sources: kernels/wasm/manifest.json holds the SHA-256 of every
 * C source and header, of the build script and of each module, with the compiler and flags. Without
 * a compiler, every hash is checked; where clang-19 is installed, the build is rerun into a
 * temporary folder and must reproduce the checked-in bytes exactly (it is byte-reproducible).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { wasmKernelsDir } from '../../../src/compute/cpu/simd/wasm-module.js';

interface Manifest {
  compiler: string;
  cflags: string[];
  ldflags: string[];
  sources: Record<string, string>;
  script: string;
  modules: Record<string, { file: string; extraFlags: string[]; sha256: string }>;
}

const dir = wasmKernelsDir();
const script = join(dir, '..', '..', 'scripts', 'build-wasm.sh');
const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest;
const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
const hasClang = spawnSync('clang-19', ['--version']).status === 0;

describe('kernels/wasm manifest', () => {
  it('lists exactly the C sources and headers, with their current hashes', () => {
    const files = readdirSync(dir).filter((f) => f.endsWith('.c') || f.endsWith('.h')).sort();
    expect(Object.keys(manifest.sources).sort()).toEqual(files);
    for (const f of files) expect(manifest.sources[f], `${f} changed since the modules were built: run scripts/build-wasm.sh`).toBe(sha(join(dir, f)));
  });

  it('records the build script and the modules as they are', () => {
    expect(manifest.script, 'scripts/build-wasm.sh changed since the modules were built').toBe(sha(script));
    expect(Object.keys(manifest.modules).sort()).toEqual(['relaxed-simd', 'simd128']);
    for (const m of Object.values(manifest.modules)) expect(sha(join(dir, m.file)), m.file).toBe(m.sha256);
    expect(manifest.compiler).toMatch(/clang version 19\./);
    expect(manifest.cflags).toContain('-msimd128');
    expect(manifest.modules['relaxed-simd']!.extraFlags).toEqual(['-mrelaxed-simd']);
  });

  it.skipIf(!hasClang)('rebuilds to the same bytes with the installed clang-19', () => {
    const out = mkdtempSync(join(tmpdir(), 'gpucompute-wasm-'));
    try {
      execFileSync('bash', [script, out], { stdio: 'pipe' });
      for (const m of Object.values(manifest.modules)) expect(sha(join(out, m.file)), m.file).toBe(m.sha256);
      const rebuilt = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as Manifest;
      expect(rebuilt.compiler, 'the modules were built by a different clang').toBe(manifest.compiler);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 180_000);
});
