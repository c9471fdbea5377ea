/**
 * A process that used the WebGPU backend exits by itself, whatever it left open: a live device,
 * unsubmitted work, a read in flight, process.exit() with all of these. Dawn's known troubles at
 * exit (no exit while its GPU object is referenced; "The futex facility returned an unexpected
 * error code" from process.exit() with a live device) must not show.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { skipReason, suite } from './setup.js';

const CHILD = join(import.meta.dirname, 'fixtures', 'exit-child.ts');
/** Long enough for a cold start on a loaded machine; a hang shows as the limit. */
const LIMIT_MS = 60_000;

function runChild(mode: string): Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string; ms: number }> {
  return new Promise((resolve) => {
    const start = Date.now();
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, mode], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), LIMIT_MS);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - start });
    });
  });
}

describe.skipIf(skipReason)(suite('WebGPU process exit'), () => {
  it.each(['natural', 'sync', 'pending', 'exit', 'disposed'])('a script ending %s exits by itself, cleanly', async (mode) => {
    const r = await runChild(mode);
    expect(r.signal, `${mode}: killed after ${LIMIT_MS} ms (hung); stderr: ${r.stderr}`).toBeNull();
    expect(r.code, `${mode}: stderr: ${r.stderr}`).toBe(0);
    expect(r.stdout).toMatch(/result (1\.6487|exiting)/);
    expect(r.stderr).not.toMatch(/futex|Promise not resolved/i);
  }, LIMIT_MS + 10_000);
});
