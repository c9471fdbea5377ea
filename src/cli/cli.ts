/**
 * The `gpucompute` command line: argument parsing and dispatch, kept apart
 * from `main.ts` so it can run in-process (tests pass their own output sinks,
 * probe and warmup).
 */
import { BACKENDS } from '../compute/backends.js';
import type { WarmupResult } from '../compute/cuda/warmup-pool.js';
import { warmupKernels, type WarmupOptions } from '../compute/warmup.js';
import { packageVersion, probeAll, type InfoReport } from './probe.js';
import { renderInfo } from './render.js';
import { parseWarmupArgs, runWarmup } from './warmup-command.js';

/** Where the CLI writes. */
export interface CliOutput {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Whether stderr is a terminal (warmup's progress line then updates in place); default false. */
  readonly stderrIsTTY?: boolean;
  /** The terminal's width, to fit the progress line. */
  readonly columns?: number;
}

/** What the commands run on; each defaults to the real one (tests pass fakes). */
export interface CliServices {
  /** What `info` reports. */
  probe?: () => InfoReport | Promise<InfoReport>;
  /** What `warmup` runs. */
  warmup?: (options: WarmupOptions) => Promise<WarmupResult>;
}

/** Exit codes: success, a failure (a warmup module that did not compile), and a command line that could not be understood. */
export const ExitCode = { ok: 0, failed: 1, usage: 2 } as const;

/** The help text. */
export const usage = `Usage: gpucompute <command> [options]

Commands:
  info            Show each backend (${BACKENDS.map((b) => b.title).join(', ')}): available, or why not;
                  then every GPU with its capabilities.
  warmup          Compile this CUDA device's kernels into the kernel cache ahead of time, on
                  every core, so first uses do not wait for them. Shows a progress line on
                  stderr, then the modules compiled, already cached and failed, and the time.
                  Exits 1 when a module failed.
  help            Show this help.

Options:
  --json          With info or warmup: print one JSON document for programs instead of text
                  ("schema": 1; every key is always present, null when unknown).
  --arch sm_XY    With warmup: compile for this arch (NVRTC is enough, no GPU needed);
                  default the present device's.
  -j, --jobs N    With warmup: compile in N processes (default: one per core).
  --ops a,b       With warmup: only these ops' kernels, by GpuCompute method name
                  (e.g. softmax,layerNorm,matmul; default all).
  --dtypes a,b    With warmup: only these dtypes (f32, f16, bf16, i32; default all).
  -h, --help      Show this help.
  -v, --version   Print the version.
`;

/**
 * Runs the CLI on `argv` (without the node and script paths) and resolves to the
 * exit code: 0 on success, 1 when a warmup failed, 2 for an unknown command or option.
 */
export async function runCli(
  argv: readonly string[],
  out: CliOutput = {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    stderrIsTTY: process.stderr.isTTY === true,
    ...(process.stderr.columns === undefined ? {} : { columns: process.stderr.columns }),
  },
  services: CliServices = {},
): Promise<number> {
  const [command, ...rest] = argv;
  if (command === '-h' || command === '--help' || command === 'help') {
    out.stdout(usage);
    return ExitCode.ok;
  }
  if (command === '-v' || command === '--version') {
    out.stdout(`${packageVersion()}\n`);
    return ExitCode.ok;
  }
  if (command === 'warmup') {
    const parsed = parseWarmupArgs(rest);
    if ('help' in parsed) {
      out.stdout(usage);
      return ExitCode.ok;
    }
    if ('error' in parsed) {
      out.stderr(`gpucompute warmup: ${parsed.error}\n\n${usage}`);
      return ExitCode.usage;
    }
    return runWarmup(parsed.args, {
      stdout: (t) => out.stdout(t),
      stderr: (t) => out.stderr(t),
      ...(out.stderrIsTTY === undefined ? {} : { stderrIsTTY: out.stderrIsTTY }),
      ...(out.columns === undefined ? {} : { columns: out.columns }),
      warmup: services.warmup ?? warmupKernels,
    });
  }
  if (command !== 'info') {
    out.stderr(`${command === undefined ? 'gpucompute: no command given' : `gpucompute: unknown command '${command}'`}\n\n${usage}`);
    return ExitCode.usage;
  }
  let json = false;
  for (const option of rest) {
    if (option === '--json') json = true;
    else if (option === '-h' || option === '--help') {
      out.stdout(usage);
      return ExitCode.ok;
    } else {
      out.stderr(`gpucompute info: unknown option '${option}'\n\n${usage}`);
      return ExitCode.usage;
    }
  }
  const report = await (services.probe ?? probeAll)();
  out.stdout(json ? `${JSON.stringify(report, null, 2)}\n` : renderInfo(report));
  return ExitCode.ok;
}
