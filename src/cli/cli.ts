/**
 * The `gpucompute` command line: argument parsing and dispatch, kept apart
 * from `main.ts` so it can run in-process (tests pass their own output sinks
 * and probe).
 */
import { BACKENDS } from '../compute/backends.js';
import { packageVersion, probeAll, type InfoReport } from './probe.js';
import { renderInfo } from './render.js';

/** Where the CLI writes. */
export interface CliOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** Exit codes: success, and a command line that could not be understood. */
export const ExitCode = { ok: 0, usage: 2 } as const;

/** The help text. */
export const usage = `Usage: gpucompute <command> [options]

Commands:
  info            Show each backend (${BACKENDS.map((b) => b.title).join(', ')}): available, or why not;
                  then every GPU with its capabilities.
  help            Show this help.

Options:
  --json          With info: print one JSON document for programs instead of text
                  ("schema": 1; every key is always present, null when unknown).
  -h, --help      Show this help.
  -v, --version   Print the version.
`;

/**
 * Runs the CLI on `argv` (without the node and script paths) and resolves to the
 * exit code: 0 on success, 2 for an unknown command or option.
 */
export async function runCli(
  argv: readonly string[],
  out: CliOutput = { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t) },
  probe: () => InfoReport | Promise<InfoReport> = probeAll,
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
  const report = await probe();
  out.stdout(json ? `${JSON.stringify(report, null, 2)}\n` : renderInfo(report));
  return ExitCode.ok;
}
