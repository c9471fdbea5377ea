/**
 * Runs `torch_grads.py` and `torch_optim.py` (PyTorch on the GPU machine's default python3, or
 * `GPUCOMPUTE_PYTHON`), as the benchmarks run their anchors (`bench/report.ts`): undefined, with a
 * note, where python or torch is missing, so the comparison is skipped rather than failed.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** One case as the script takes it. */
export interface TorchCase {
  name: string;
  op: string;
  dtype: 'f32' | 'f16' | 'bf16';
  inputs: { shape: readonly number[]; values: readonly number[]; grad: boolean; int?: boolean }[];
  seed: readonly number[];
}

/** What the script gives back per case. */
export interface TorchResult {
  name: string;
  dtype: string;
  output: number[];
  grads: number[][];
}

/** torch's outputs and gradients for `cases`, or undefined where torch cannot run here. */
export function torchGradients(cases: readonly TorchCase[]): { device: string; results: TorchResult[] } | undefined {
  return runScript('torch_grads.py', { cases }) as { device: string; results: TorchResult[] } | undefined;
}

/** What `torch_optim.py` takes: PyTorch's option names, f32 parameters and each step's gradients. */
export interface TorchOptimizerRun {
  rule: 'sgd' | 'adamw';
  options: Record<string, number | boolean | number[]>;
  params: number[][];
  /** grads[step][param]. */
  grads: number[][][];
}

/** The parameters after torch.optim's steps, or undefined where torch cannot run here. */
export function torchOptimizer(run: TorchOptimizerRun): { device: string; params: number[][] } | undefined {
  return runScript('torch_optim.py', run) as { device: string; params: number[][] } | undefined;
}

/** Runs a script of this folder on `input` (as a JSON file) and parses its last line. */
function runScript(name: string, input: unknown): unknown {
  const python = process.env.GPUCOMPUTE_PYTHON || 'python3';
  const dir = mkdtempSync(join(tmpdir(), 'gpucompute-torch-'));
  try {
    const file = join(dir, 'input.json');
    writeFileSync(file, JSON.stringify(input));
    const script = new URL(`./${name}`, import.meta.url).pathname;
    const result = spawnSync(python, [script, file], { encoding: 'utf8', timeout: 600_000, maxBuffer: 512 * 2 ** 20 });
    if (result.error || result.status !== 0) {
      const missing = /No module named '([^']+)'/.exec(result.stderr ?? '');
      const why = missing ? `python module ${missing[1]} is not installed` : (result.error?.message ?? result.stderr.trim().split('\n').slice(-3).join(' / '));
      console.log(`note: the torch comparison (${name}) is skipped: ${why}`);
      return undefined;
    }
    return JSON.parse(result.stdout.trim().split('\n').pop()!) as unknown;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
