import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ExitCode, runCli, usage } from '../../../src/cli/cli.js';
import { probeAll, type InfoReport } from '../../../src/cli/probe.js';
import { fakeReport } from './fake-report.js';

const root = resolve(import.meta.dirname, '../../..');
const tsx = join(root, 'node_modules', '.bin', 'tsx');

function cli(args: string[], env: NodeJS.ProcessEnv = {}) {
  const result = spawnSync(tsx, [join(root, 'src/cli/main.ts'), ...args], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

async function capture(args: string[], probe: () => InfoReport = fakeReport) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) }, { probe });
  return { code, stdout, stderr };
}

describe('runCli (in process)', () => {
  it('prints help for help, --help and info --help', async () => {
    for (const args of [['help'], ['--help'], ['-h'], ['info', '--help']]) {
      const r = await capture(args);
      expect(r.code).toBe(ExitCode.ok);
      expect(r.stdout).toBe(usage);
      expect(r.stderr).toBe('');
    }
  });

  it('refuses a missing or unknown command and an unknown option with usage and exit code 2', async () => {
    for (const [args, message] of [
      [[], 'no command given'],
      [['infos'], "unknown command 'infos'"],
      [['info', '--jsn'], "unknown option '--jsn'"],
    ] as const) {
      const r = await capture([...args]);
      expect(r.code).toBe(ExitCode.usage);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(message);
      expect(r.stderr).toContain('Usage: gpucompute <command>');
    }
  });

  it('prints the probe as text, or as one JSON document with --json', async () => {
    const text = await capture(['info']);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('NVIDIA H100 80GB HBM3');
    const json = await capture(['info', '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(JSON.parse(JSON.stringify(fakeReport())));
  });

  it('prints the package version', async () => {
    const r = await capture(['--version']);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe('gpucompute (spawned through tsx)', () => {
  it('exits 0 for info and prints every backend', () => {
    const r = cli(['info']);
    expect(r.code).toBe(0);
    for (const name of ['CUDA', 'HIP', 'Metal', 'CPU']) expect(r.stdout).toMatch(new RegExp(`^  ${name}\\s+(available|unavailable)`, 'm'));
    expect(r.stdout).toContain('Devices');
  });

  it('exits 2 with usage on stderr for an unknown command', () => {
    const r = cli(['frobnicate']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown command 'frobnicate'");
    expect(r.stdout).toBe('');
  });

  it('prints JSON that parses and matches the in-process probe on this machine', async () => {
    const r = cli(['info', '--json']);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as InfoReport;
    const here = await probeAll();
    expect(Object.keys(report)).toEqual(Object.keys(here));
    expect(report.backends.cuda.available).toBe(here.backends.cuda.available);
    expect(report.devices.length).toBe(here.devices.length);
  });
});

const cc = ['/usr/bin/cc', '/usr/bin/gcc', '/usr/bin/clang'].find((p) => existsSync(p));

describe.skipIf(!cc)('with stand-in runtimes (a driver that finds no GPU, a HIP runtime with two)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gpucompute-fake-rt-'));
  const lib = join(dir, 'libfake-runtimes.so');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reports cuInit\'s error, the HIP devices, and renders them', () => {
    const build = spawnSync(cc!, ['-shared', '-fPIC', '-o', lib, join(import.meta.dirname, 'fixtures/fake-runtimes.c')], { encoding: 'utf8' });
    expect(build.stderr).toBe('');
    expect(build.status).toBe(0);
    const env = { GPUCOMPUTE_LIBCUDA: lib, GPUCOMPUTE_LIBHIP: lib };

    const json = cli(['info', '--json'], env);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as InfoReport;
    const { cuda, hip } = report.backends;
    expect(cuda.library).toEqual({ found: true, path: lib, tried: [] });
    expect(cuda.init).toEqual({ call: 'cuInit', ok: false, code: 100, name: 'CUDA_ERROR_NO_DEVICE', description: 'no CUDA-capable device is detected' });
    expect(cuda.available).toBe(false);
    expect(cuda.reason).toBe('cuInit failed with CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected');
    expect(cuda.driverVersion).toBe('13.0');
    expect(cuda.deviceCount).toBeNull();

    expect(hip.init).toEqual({ call: 'hipInit', ok: true, code: 0, name: 'hipSuccess', description: 'no error' });
    expect(hip.deviceCount).toBe(2);
    expect(hip.runtimeVersion).toBe('6.2.41134');
    expect(hip.available).toBe(true);
    expect(hip.reason).toBeNull();
    expect(report.devices.map((d) => [d.backend, d.ordinal, d.name, d.memoryTotal, d.arch])).toEqual([
      ['hip', 0, 'Fake Instinct MI300X', 192 * 2 ** 30, null],
      ['hip', 1, 'Fake Radeon PRO W7900', 48 * 2 ** 30, null],
    ]);

    const text = cli(['info'], env);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('cuInit returned CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected');
    expect(text.stdout).toMatch(/^ {2}0 +hip +Fake Instinct MI300X +— +— +— +— \/ 192 GiB/m);
    expect(text.stdout).toMatch(/^ {2}1 +hip +Fake Radeon PRO W7900 /m);
  });
});
