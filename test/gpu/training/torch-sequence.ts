/**
 * Gradients from torch autograd for the GPU training tests: the cases and their inputs go to a
 * temporary folder as raw f32 files, `torch_sequence_grads.py` writes torch's gradients beside them. Runs
 * where python3 (or GPUCOMPUTE_PYTHON) imports torch with CUDA; `torchAvailable` says whether it does.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gpuAvailable } from '../gpu-available.js';

const python = process.env.GPUCOMPUTE_PYTHON || 'python3';
const script = join(dirname(fileURLToPath(import.meta.url)), 'torch_sequence_grads.py');

/** Whether torch with a CUDA device can be run here (probed once, and only on a machine with a GPU). */
export const torchAvailable: boolean =
  gpuAvailable && spawnSync(python, ['-c', 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)'], { timeout: 120_000 }).status === 0;

/** One case for `torch_sequence_grads.py` (see its docstring): `kind`, `name` and the case's fields; `inputs` are its parts' values. */
export interface TorchCase {
  readonly spec: { readonly kind: 'attention' | 'gru'; readonly name: string; readonly [field: string]: unknown };
  readonly inputs: Readonly<Record<string, ArrayLike<number>>>;
  /** The parts whose gradients to read back. */
  readonly grads: readonly string[];
}

/** torch's gradients of each case, by case name and part. */
export function torchGradients(cases: readonly TorchCase[]): Map<string, Map<string, Float32Array>> {
  const dir = mkdtempSync(join(tmpdir(), 'torch-grads-'));
  try {
    for (const c of cases) {
      for (const [part, values] of Object.entries(c.inputs)) writeFileSync(join(dir, `${c.spec.name}.${part}`), Float32Array.from(values));
    }
    writeFileSync(join(dir, 'cases.json'), JSON.stringify(cases.map((c) => c.spec)));
    const run = spawnSync(python, [script, dir], { encoding: 'utf8', timeout: 600_000, maxBuffer: 16 * 2 ** 20 });
    if (run.status !== 0) throw new Error(`torch_sequence_grads.py failed (${run.status ?? run.signal}): ${run.stderr.trim().split('\n').slice(-5).join(' / ')}`);
    console.log(`torch anchor: ${run.stdout.trim().split('\n').at(-1)}`);
    return new Map(
      cases.map((c) => [
        c.spec.name,
        new Map(c.grads.map((part) => {
          const bytes = readFileSync(join(dir, `${c.spec.name}.grad.${part}`));
          return [part, new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4).slice()];
        })),
      ]),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
