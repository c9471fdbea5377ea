import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { KernelCache } from '../../../src/nvrtc/kernel-cache.js';

const dir = mkdtempSync(join(tmpdir(), 'gpucompute-cache-concurrency-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const writerScript = fileURLToPath(new URL('./fixtures/cache-writer.ts', import.meta.url));

function runWriter(id: number, rounds: number): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', writerScript, dir, 'shared-key', String(id), String(rounds)], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('KernelCache across processes', () => {
  it('four processes writing and reading one key never see a torn entry or leave temp files', async () => {
    const results = await Promise.all([0, 1, 2, 3].map((id) => runWriter(id, 150)));
    for (const result of results) expect(result, result.stderr).toMatchObject({ code: 0 });
    expect(readdirSync(dir)).toEqual(['shared-key.kernel']);
    const survivor = new KernelCache({ dir }).get('shared-key');
    expect(survivor?.loweredNames.seed).toMatch(/^[0-3]-\d+$/);
  });
});
