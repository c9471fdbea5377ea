/**
 * examples/nccl-multiprocess.ts end to end: one process per GPU, the communicator's id passed in
 * an environment variable, each rank all-reducing through NCCL and checking the sum. Each child
 * must get NCCL_NVLS_ENABLE=0 (each prints it back), even where the parent was started with 1.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { deviceCount, skipReason } from './multi-gpu.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const skip = skipReason(2, true);

describe.skipIf(skip !== '')(`examples/nccl-multiprocess.ts ${skip}`, () => {
  it(`all-reduces across one process per GPU (${deviceCount} GPUs)`, () => {
    const ranks = Math.min(deviceCount, 4);
    const run = spawnSync(join(root, 'node_modules', '.bin', 'tsx'), [join(root, 'examples', 'nccl-multiprocess.ts'), '--ranks', String(ranks), '--elements', '100000'], {
      cwd: root,
      encoding: 'utf8',
      timeout: 240_000,
      env: { ...process.env, NCCL_NVLS_ENABLE: '1' },
    });
    const output = `${run.stdout}${run.stderr}`;
    expect(run.status, output).toBe(0);
    for (let r = 0; r < ranks; r++) expect(output).toMatch(new RegExp(`rank ${r}/${ranks} on .*all-reduce of 100000 f32 gives ${(ranks * (ranks + 1)) / 2} everywhere \\(NCCL_NVLS_ENABLE=0\\)`));
    expect(output).toContain(`all ${ranks} ranks agree`);
  });
});
