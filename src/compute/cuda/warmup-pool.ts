/**
 * Compiles a list of kernel modules into the kernel cache in parallel: the ones the cache holds
 * already are found on the calling thread (a lookup costs about a millisecond), the others go to
 * a pool of child processes, longest sources first, each compiling one module at a time through
 * NVRTC. Processes, not worker threads: NVRTC scales poorly across the threads of one process
 * (H200 host, 16 cores, 116 one-kernel modules: 3.36 s on 16 worker threads, 1.93 s on 16
 * processes, each process ready 0.1-0.16 s after its start). Needs NVRTC, not a GPU. A module
 * that fails is reported and the others go on.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { KernelCache } from '../../nvrtc/kernel-cache.js';
import type { Logger } from '../core/logger.js';
import { formatProgress, type ProgressEvent, type ProgressListener, type ProgressOutcome } from '../core/progress.js';
import { KernelSources, moduleKey, type ModuleSpec } from '../gpu/kernel-sources.js';
import { cachedKernelModule } from './kernel-compile.js';
import { WarmupError } from './warmup-error.js';
import type { WorkerData, WorkerJob, WorkerReply } from './warmup-protocol.js';
import type { WarmupTarget } from './warmup-target.js';

/** How {@link compileModules} runs. */
export interface CompileModulesOptions {
  /** Compile processes at most (fewer when fewer modules are missing). */
  readonly jobs: number;
  /** Kernel cache folder; default the shared cache's (`GPUCOMPUTE_CACHE_DIR`, else the platform's). */
  readonly cacheDir?: string;
  /** The `kernels/` folder; default the package's. */
  readonly kernelsDir?: string;
  /** Receives one event per module, cached ones included, in the order they finish. */
  readonly onProgress?: ProgressListener;
  /** Receives an info line per module compiled and a warning per module that failed. */
  readonly logger?: Logger;
}

/** What a warmup did. */
export interface WarmupResult {
  /** The device arch warmed for, e.g. `sm_90`. */
  readonly arch: string;
  /** The arch the modules were compiled for (`sm_90`; `compute_XY` PTX on a device newer than NVRTC). */
  readonly compileArch: string;
  /** NVRTC's version, e.g. `12.8`. */
  readonly nvrtcVersion: string;
  /** The kernel cache folder filled. */
  readonly cacheDir: string;
  /** Compile processes started (0 when every module was cached already). */
  readonly jobs: number;
  /** Modules in the warmup. */
  readonly total: number;
  /** Modules compiled now. */
  readonly compiled: number;
  /** Modules the cache held already. */
  readonly cached: number;
  /** Modules that did not compile, each naming its module. */
  readonly failed: readonly WarmupError[];
  /** Milliseconds from start to finish. */
  readonly wallMs: number;
}

/**
 * Compiles `specs` (module specs of the package's `kernels/`) for `target` into the kernel cache,
 * on up to `options.jobs` child processes.
 * @throws WarmupError (no module) when the kernel cache is off or not writable.
 */
export async function compileModules(specs: readonly ModuleSpec[], target: WarmupTarget, options: CompileModulesOptions): Promise<WarmupResult> {
  const started = performance.now();
  const arch = target.deviceArch;
  const cache = new KernelCache({ memoryEntries: 1, ...(options.cacheDir === undefined ? {} : { dir: options.cacheDir }) });
  if (cache.mode !== 'disk') {
    const reason = cache.mode === 'off' ? 'the kernel cache is off (GPUCOMPUTE_CACHE=0), so nothing compiled would be kept' : (cache.fallbackReason ?? 'the kernel cache is not on disk');
    throw new WarmupError({ arch, reason });
  }
  const unique = new Map<string, ModuleSpec>();
  for (const spec of specs) if (!unique.has(moduleKey(spec))) unique.set(moduleKey(spec), spec);
  const total = unique.size;
  const failed: WarmupError[] = [];
  let done = 0;
  let compiled = 0;
  let cached = 0;
  const report = (key: string, outcome: ProgressOutcome, ms: number, error?: WarmupError) => {
    if (outcome === 'done') compiled++;
    else if (outcome === 'cached') cached++;
    else failed.push(error!);
    const event: ProgressEvent = { phase: 'compile', done: ++done, total, what: key, outcome, ms };
    if (options.onProgress) {
      try {
        options.onProgress(event);
      } catch (err) {
        options.logger?.warn(`onProgress threw: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    if (outcome === 'failed') options.logger?.warn(error!.message);
    else if (outcome === 'done' && options.logger?.enabled('info')) options.logger.info(formatProgress(event));
  };

  const sources = new KernelSources(options.kernelsDir);
  const missing: { key: string; spec: ModuleSpec }[] = [];
  for (const [key, spec] of unique) {
    const lookup = performance.now();
    try {
      if (cachedKernelModule(spec, sources, { deviceArch: arch, cache })) report(key, 'cached', performance.now() - lookup);
      else missing.push({ key, spec });
    } catch (err) {
      // An arch NVRTC refuses, a missing source: the compile would fail the same way.
      report(key, 'failed', performance.now() - lookup, moduleError(key, arch, err));
    }
  }
  // Longest first (the source length stands for the compile time), so no long compile starts last.
  missing.sort((a, b) => sources.source(b.spec.file).length - sources.source(a.spec.file).length);

  const jobs = Math.min(options.jobs, missing.length);
  if (jobs > 0) {
    await runPool(missing, jobs, { cacheDir: cache.dir, kernelsDir: sources.dir, deviceArch: arch }, (job, reply) => {
      if (reply.ok) report(job.key, reply.cacheHit ? 'cached' : 'done', reply.ms);
      else report(job.key, 'failed', reply.ms, new WarmupError({ module: job.key, arch, reason: reply.message, errorName: reply.errorName }));
    });
  }
  return {
    arch,
    compileArch: target.compileArch,
    nvrtcVersion: target.nvrtcVersion,
    cacheDir: cache.dir,
    jobs,
    total,
    compiled,
    cached,
    failed,
    wallMs: performance.now() - started,
  };
}

function moduleError(module: string, arch: string, err: unknown): WarmupError {
  const error = err instanceof Error ? err : new Error(String(err));
  return new WarmupError({ module, arch, reason: error.message, errorName: error.name }, { cause: err });
}

interface PoolJob {
  readonly key: string;
  readonly spec: ModuleSpec;
}

type Outcome = Extract<WorkerReply, { id: number }>;

/**
 * Runs `queue` on `size` worker processes; `finished` gets every job's outcome. A worker that
 * dies (a crash, an exit) fails the job it held and is replaced while it had finished jobs
 * before; one that dies before finishing any (it could not start) is not, and when no worker is
 * left the jobs still queued fail with its error (and the end of what it wrote to stderr).
 */
function runPool(queue: PoolJob[], size: number, data: WorkerData, finished: (job: PoolJob, outcome: Outcome) => void): Promise<void> {
  return new Promise((resolve) => {
    let nextId = 0;
    let live = 0;
    let lastError = 'the compile workers stopped';
    const pending: PoolJob[] = [...queue];

    const settleIfDone = () => {
      if (live > 0) return;
      // No worker left: whatever is still queued cannot run.
      for (const job of pending.splice(0)) finished(job, { id: -1, ok: false, errorName: 'Worker', message: lastError, ms: 0 });
      resolve();
    };

    const start = () => {
      live++;
      let current: PoolJob | undefined;
      let completed = 0;
      let ended = false;
      let worker: ChildProcess;
      let stderr = '';
      try {
        worker = spawnWorker(data);
      } catch (err) {
        live--;
        lastError = `could not start a compile worker: ${err instanceof Error ? err.message : String(err)}`;
        settleIfDone();
        return;
      }
      const next = () => {
        current = pending.shift();
        if (current) worker.send({ id: nextId++, spec: current.spec } satisfies WorkerJob);
        // Closing the channel lets the process exit (warmup-worker.ts).
        else worker.disconnect();
      };
      const end = (message: string) => {
        if (ended) return;
        ended = true;
        const said = stderr.trim();
        if (said) message += `: ${said.slice(-1000)}`;
        lastError = message;
        if (current) finished(current, { id: -1, ok: false, errorName: 'Worker', message, ms: 0 });
        current = undefined;
        live--;
        if (completed > 0 && pending.length > 0) start();
        settleIfDone();
      };
      worker.on('message', (reply: WorkerReply) => {
        if (reply.ready) {
          next();
          return;
        }
        const job = current!;
        current = undefined;
        completed++;
        finished(job, reply);
        next();
      });
      worker.stderr?.setEncoding('utf8');
      worker.stderr?.on('data', (text: string) => {
        stderr = (stderr + text).slice(-4000);
      });
      // 'error': the process could not start, or a message could not reach it. A worker that
      // crashes, or exits once its channel closes, ends with 'exit'.
      worker.on('error', (err) => end(`compile worker failed: ${err.message}`));
      worker.on('exit', (code, signal) => end(`compile worker exited with ${signal ?? `code ${code}`}`));
    };
    for (let i = 0; i < size; i++) start();
  });
}

/**
 * A process running `warmup-worker`: the compiled `.js` next to this file, or, when running from
 * the TypeScript sources (tsx, vitest), the `.ts` through tsx's ESM loader (a dev dependency).
 * It gets its data as its one argument, and stderr comes back for the failure messages.
 */
function spawnWorker(data: WorkerData): ChildProcess {
  const fromSources = import.meta.url.endsWith('.ts');
  const entry = fileURLToPath(new URL(fromSources ? './warmup-worker.ts' : './warmup-worker.js', import.meta.url));
  return fork(entry, [JSON.stringify(data)], {
    execArgv: fromSources ? ['--import', tsxLoader()] : [],
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
}

/**
 * tsx's ESM loader module (`tsx/esm`): through `import.meta.resolve` where the loader has it, else
 * from tsx's package.json (vitest's module runner, which runs the GPU tests' global setup, has no
 * `import.meta.resolve`).
 */
function tsxLoader(): string {
  try {
    return import.meta.resolve('tsx/esm');
  } catch {
    const manifest = createRequire(import.meta.url).resolve('tsx/package.json');
    const exports = (JSON.parse(readFileSync(manifest, 'utf8')) as { exports: Record<string, string> }).exports;
    return pathToFileURL(join(dirname(manifest), exports['./esm']!)).href;
  }
}
