/**
 * `gpucompute warmup`: compiles this device's kernels (or an arch's, given `--arch`) into the
 * kernel cache ahead of time on every core, shows a progress line on stderr, then prints what it
 * did (text, or one JSON document with `--json`).
 */
import { isDType, type DType } from '../compute/core/dtype.js';
import { formatDuration } from '../compute/core/progress.js';
import { WARMUP_OPS, type WarmupOp } from '../compute/core/warmup-ops.js';
import type { WarmupResult } from '../compute/cuda/warmup-pool.js';
import { ProgressLine } from '../compute/progress-line.js';
import type { WarmupOptions } from '../compute/warmup.js';

/** What the command line asked of a warmup. */
export interface WarmupArgs {
  readonly arch?: string;
  readonly jobs?: number;
  readonly ops?: readonly WarmupOp[];
  readonly dtypes?: readonly DType[];
  readonly json: boolean;
}

/** `warmup`'s arguments parsed, a request for help, or what is wrong with them. */
export type ParsedWarmupArgs = { readonly args: WarmupArgs } | { readonly help: true } | { readonly error: string };

/** Where the command writes, and what it runs (tests pass a fake warmup). */
export interface WarmupIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Whether stderr is a terminal: the progress line then updates in place. */
  readonly stderrIsTTY?: boolean;
  /** The terminal's width. */
  readonly columns?: number;
  warmup(options: WarmupOptions): Promise<WarmupResult>;
}

const ARCH = /^sm_\d{2,3}$/;

/** Parses the arguments after `warmup`: `--arch sm_90`, `--jobs N` (`-j`), `--ops a,b`, `--dtypes f32,f16`, `--json`, `--help`. */
export function parseWarmupArgs(argv: readonly string[]): ParsedWarmupArgs {
  let arch: string | undefined;
  let jobs: number | undefined;
  let ops: WarmupOp[] | undefined;
  let dtypes: DType[] | undefined;
  let json = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    const takesValue = ['--arch', '--jobs', '-j', '--ops', '--dtypes'].includes(name);
    if (!takesValue && eq > 0) return { error: `option '${name}' takes no value` };
    let value = '';
    if (takesValue) {
      if (eq > 0) value = arg.slice(eq + 1);
      else if (i + 1 < argv.length) value = argv[++i]!;
      else return { error: `option '${name}' needs a value` };
    }
    switch (name) {
      case '-h':
      case '--help':
        return { help: true };
      case '--json':
        json = true;
        break;
      case '--arch':
        if (!ARCH.test(value)) return { error: `--arch takes a device arch such as sm_90, not '${value}'` };
        arch = value;
        break;
      case '--jobs':
      case '-j': {
        const n = Number(value);
        if (!/^\d+$/.test(value) || n < 1 || n > 256) return { error: `${name} takes a whole number from 1 to 256, not '${value}'` };
        jobs = n;
        break;
      }
      case '--ops': {
        const list = value.split(',').filter(Boolean);
        const unknown = list.find((op) => !(WARMUP_OPS as readonly string[]).includes(op));
        if (unknown !== undefined || list.length === 0) return { error: `--ops takes op names separated by commas (${WARMUP_OPS.join(', ')}), not '${unknown ?? value}'` };
        ops = list as WarmupOp[];
        break;
      }
      case '--dtypes': {
        const list = value.split(',').filter(Boolean);
        const unknown = list.find((d) => !isDType(d));
        if (unknown !== undefined || list.length === 0) return { error: `--dtypes takes f32, f16, bf16 or i32 separated by commas, not '${unknown ?? value}'` };
        dtypes = list as DType[];
        break;
      }
      default:
        return { error: `unknown option '${arg}'` };
    }
  }
  return { args: { ...(arch ? { arch } : {}), ...(jobs ? { jobs } : {}), ...(ops ? { ops } : {}), ...(dtypes ? { dtypes } : {}), json } };
}

/** Runs a parsed warmup: 0 when every module is in the cache at the end, 1 when some failed or the warmup could not run. */
export async function runWarmup(args: WarmupArgs, io: WarmupIo): Promise<number> {
  const line = new ProgressLine(
    { write: (text: string) => io.stderr(text), isTTY: io.stderrIsTTY === true, ...(io.columns === undefined ? {} : { columns: io.columns }) },
    'compiling kernels',
  );
  let result: WarmupResult;
  try {
    const { json: _json, ...selection } = args;
    result = await io.warmup({ ...selection, onProgress: line.update });
  } catch (err) {
    line.end();
    // The library's messages name their function; here the command says it.
    const message = (err instanceof Error ? err.message : String(err)).replace(/^warmupKernels: /, '');
    io.stderr(`gpucompute warmup: ${message}\n`);
    return 1;
  }
  line.end();
  io.stdout(args.json ? `${JSON.stringify(warmupJson(result), null, 2)}\n` : renderWarmup(result));
  return result.failed.length === 0 ? 0 : 1;
}

/** The result as text: what was warmed, the counts and the time, then each failed module. */
export function renderWarmup(r: WarmupResult): string {
  const target = r.compileArch === r.arch ? r.arch : `${r.arch} (as ${r.compileArch})`;
  const lines = [
    `Kernel warmup for ${target} with NVRTC ${r.nvrtcVersion}: ${r.total} modules in ${formatDuration(r.wallMs)}, ${r.jobs === 0 ? 'nothing to compile' : `on ${r.jobs} ${r.jobs === 1 ? 'job' : 'jobs'}`}`,
    `  compiled        ${r.compiled}`,
    `  already cached  ${r.cached}`,
    `  failed          ${r.failed.length}`,
    `  kernel cache    ${r.cacheDir}`,
  ];
  for (const f of r.failed) lines.push(`  FAILED ${f.module ?? '(warmup)'}: ${(f.errorName ? `${f.errorName}: ` : '') + f.reason.split('\n')[0]}`);
  return `${lines.join('\n')}\n`;
}

/** The result as `--json` prints it (`"schema": 1`; every key always present). */
export function warmupJson(r: WarmupResult): object {
  return {
    schema: 1,
    arch: r.arch,
    compileArch: r.compileArch,
    nvrtcVersion: r.nvrtcVersion,
    cacheDir: r.cacheDir,
    jobs: r.jobs,
    total: r.total,
    compiled: r.compiled,
    cached: r.cached,
    failed: r.failed.map((f) => ({ module: f.module ?? null, error: f.errorName ?? null, reason: f.reason })),
    wallSeconds: Math.round(r.wallMs) / 1000,
  };
}
