/** `gpucompute warmup`: its arguments, its progress line and output with a fake warmup, and one real run through tsx with NVRTC. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ExitCode, runCli } from '../../../src/cli/cli.js';
import { parseWarmupArgs } from '../../../src/cli/warmup-command.js';
import { WarmupError } from '../../../src/compute/cuda/warmup-error.js';
import type { WarmupResult } from '../../../src/compute/cuda/warmup-pool.js';
import type { WarmupOptions } from '../../../src/compute/warmup.js';
import { InvalidArgumentError } from '../../../src/errors.js';
import { nvrtcAvailable } from '../nvrtc/nvrtc-available.js';

const result = (over: Partial<WarmupResult> = {}): WarmupResult => ({
  arch: 'sm_90',
  compileArch: 'sm_90',
  nvrtcVersion: '12.8',
  cacheDir: '/cache/kernels',
  jobs: 2,
  total: 3,
  compiled: 2,
  cached: 1,
  failed: [],
  wallMs: 1234.5,
  ...over,
});

/** A warmup that records its options and reports three modules through onProgress. */
function fakeWarmup(outcome: WarmupResult | Error = result()) {
  const calls: WarmupOptions[] = [];
  const warmup = async (options: WarmupOptions): Promise<WarmupResult> => {
    calls.push(options);
    if (outcome instanceof Error) throw outcome;
    options.onProgress?.({ phase: 'compile', done: 1, total: 3, what: 'fill.cu', outcome: 'cached', ms: 0.3 });
    options.onProgress?.({ phase: 'compile', done: 2, total: 3, what: 'softmax.cu?GC_DTYPE=GC_F32', outcome: 'done', ms: 812 });
    options.onProgress?.({ phase: 'compile', done: 3, total: 3, what: 'layernorm.cu?GC_DTYPE=GC_F32', outcome: 'done', ms: 950 });
    return outcome;
  };
  return { warmup, calls };
}

async function capture(args: string[], warmup: (o: WarmupOptions) => Promise<WarmupResult>, tty = false) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), stderrIsTTY: tty, columns: 80 }, { warmup });
  return { code, stdout, stderr };
}

describe('parseWarmupArgs', () => {
  it('takes --arch, --jobs/-j, --ops, --dtypes (spaced or with =) and --json', () => {
    expect(parseWarmupArgs([])).toEqual({ args: { json: false } });
    expect(parseWarmupArgs(['--arch', 'sm_90', '-j', '4', '--ops=softmax,layerNorm', '--dtypes', 'f32,bf16', '--json'])).toEqual({
      args: { arch: 'sm_90', jobs: 4, ops: ['softmax', 'layerNorm'], dtypes: ['f32', 'bf16'], json: true },
    });
    expect(parseWarmupArgs(['--jobs=16'])).toEqual({ args: { jobs: 16, json: false } });
    expect(parseWarmupArgs(['--help'])).toEqual({ help: true });
  });

  it.each([
    [['--arch', 'sm_90a'], "--arch takes a device arch such as sm_90, not 'sm_90a'"],
    [['--arch'], "option '--arch' needs a value"],
    [['--jobs', '0'], "--jobs takes a whole number from 1 to 256, not '0'"],
    [['-j', 'four'], "-j takes a whole number from 1 to 256, not 'four'"],
    [['--ops', 'softmax,sofmax'], "not 'sofmax'"],
    [['--dtypes', 'f64'], "--dtypes takes f32, f16, bf16 or i32 separated by commas, not 'f64'"],
    [['--json=yes'], "option '--json' takes no value"],
    [['--frobnicate'], "unknown option '--frobnicate'"],
  ])('refuses %j', (args, message) => {
    const parsed = parseWarmupArgs(args);
    expect(parsed).toHaveProperty('error');
    expect((parsed as { error: string }).error).toContain(message);
  });
});

describe('gpucompute warmup (in process, fake warmup)', () => {
  it('passes the options on and prints plain progress lines on stderr, then the counts and time on stdout', async () => {
    const { warmup, calls } = fakeWarmup();
    const r = await capture(['warmup', '--arch', 'sm_90', '--jobs', '2', '--ops', 'softmax,layerNorm', '--dtypes', 'f32'], warmup);
    expect(r.code).toBe(ExitCode.ok);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ arch: 'sm_90', jobs: 2, ops: ['softmax', 'layerNorm'], dtypes: ['f32'] });
    expect(typeof calls[0]!.onProgress).toBe('function');
    expect(r.stderr).toBe('compiling kernels 2/3 softmax.cu?GC_DTYPE=GC_F32 (812 ms)\ncompiling kernels 3/3 layernorm.cu?GC_DTYPE=GC_F32 (950 ms)\n');
    expect(r.stdout).toBe(
      [
        'Kernel warmup for sm_90 with NVRTC 12.8: 3 modules in 1.2 s, on 2 jobs',
        '  compiled        2',
        '  already cached  1',
        '  failed          0',
        '  kernel cache    /cache/kernels',
        '',
      ].join('\n'),
    );
  });

  it('says when everything was cached already, and names the arch compiled for when it differs', async () => {
    const r = await capture(['warmup'], fakeWarmup(result({ jobs: 0, compiled: 0, cached: 3, arch: 'sm_120', compileArch: 'compute_90', wallMs: 12 })).warmup);
    expect(r.stdout.split('\n')[0]).toBe('Kernel warmup for sm_120 (as compute_90) with NVRTC 12.8: 3 modules in 12 ms, nothing to compile');
  });

  it('updates one line on a terminal and clears it before the summary', async () => {
    const r = await capture(['warmup'], fakeWarmup().warmup, true);
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain('\n');
    expect(r.stderr.split('\r\x1b[2K')).toEqual(['', 'compiling kernels 1/3 fill.cu', 'compiling kernels 2/3 softmax.cu?GC_DTYPE=GC_F32', 'compiling kernels 3/3 layernorm.cu?GC_DTYPE=GC_F32', '']);
  });

  it('prints one JSON document with --json', async () => {
    const r = await capture(['warmup', '--json'], fakeWarmup().warmup);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      schema: 1,
      arch: 'sm_90',
      compileArch: 'sm_90',
      nvrtcVersion: '12.8',
      cacheDir: '/cache/kernels',
      jobs: 2,
      total: 3,
      compiled: 2,
      cached: 1,
      failed: [],
      wallSeconds: 1.235,
    });
  });

  it('exits 1 and names each module that failed', async () => {
    const failed = [new WarmupError({ module: 'unary.cu?GC_DTYPE=GC_F32&GC_OP=OpExp', arch: 'sm_90', reason: 'kernels/unary.cu(3): error: boom\nmore', errorName: 'CompileError' })];
    const text = await capture(['warmup'], fakeWarmup(result({ compiled: 1, failed })).warmup);
    expect(text.code).toBe(ExitCode.failed);
    expect(text.stdout).toContain('  failed          1\n');
    expect(text.stdout).toContain('  FAILED unary.cu?GC_DTYPE=GC_F32&GC_OP=OpExp: CompileError: kernels/unary.cu(3): error: boom\n');
    const json = await capture(['warmup', '--json'], fakeWarmup(result({ compiled: 1, failed })).warmup);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout).failed).toEqual([{ module: 'unary.cu?GC_DTYPE=GC_F32&GC_OP=OpExp', error: 'CompileError', reason: 'kernels/unary.cu(3): error: boom\nmore' }]);
  });

  it('exits 1 with the reason when the warmup cannot run', async () => {
    const r = await capture(['warmup'], fakeWarmup(new InvalidArgumentError("warmupKernels: no arch was given and no CUDA device answered (x); pass one, e.g. 'sm_90'")).warmup);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe("gpucompute warmup: no arch was given and no CUDA device answered (x); pass one, e.g. 'sm_90'\n");
  });

  it('exits 2 with usage for a bad argument, and prints usage for --help, without warming', async () => {
    const { warmup, calls } = fakeWarmup();
    const bad = await capture(['warmup', '--jobs', '-1'], warmup);
    expect(bad.code).toBe(ExitCode.usage);
    expect(bad.stderr).toContain("gpucompute warmup: --jobs takes a whole number from 1 to 256, not '-1'");
    expect(bad.stderr).toContain('Usage: gpucompute <command>');
    const help = await capture(['warmup', '-h'], warmup);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('warmup          Compile');
    expect(calls).toHaveLength(0);
  });
});

describe.skipIf(!nvrtcAvailable)('gpucompute warmup (spawned through tsx, real NVRTC)', () => {
  const root = resolve(import.meta.dirname, '../../..');
  const dir = mkdtempSync(join(tmpdir(), 'gpucompute-cli-warmup-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const run = () =>
    spawnSync(join(root, 'node_modules', '.bin', 'tsx'), [join(root, 'src/cli/main.ts'), 'warmup', '--arch', 'sm_90', '--ops', 'fill,neg', '--dtypes', 'i32', '-j', '2', '--json'], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, GPUCOMPUTE_CACHE_DIR: dir },
      timeout: 60_000,
    });

  it('compiles for sm_90 into the cache folder, then finds the modules cached', () => {
    const first = run();
    expect(first.status, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ arch: 'sm_90', cacheDir: dir, total: 2, compiled: 2, cached: 0, failed: [], jobs: 2 });
    expect(first.stderr).toMatch(/^compiling kernels 1\/2 (fill\.cu|unary\.cu\?GC_DTYPE=GC_I32&GC_OP=OpNeg) \(\d+ ms\)$/m);
    const second = run();
    expect(second.status).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ total: 2, compiled: 0, cached: 2, jobs: 0 });
    expect(second.stderr).toBe('');
  });
});
