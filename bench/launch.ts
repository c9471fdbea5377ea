/**
 * Launch benchmark: the host cost of one kernel launch through each tier of
 * this library, next to a C program (compiled here with nvcc, linking
 * libcuda) and CuPy's RawKernel, all in one run; plus NVRTC's first compile
 * and the kernel cache's hits.
 *
 * Method, the same for every contender: wall time of N back-to-back launches
 * on one non-blocking stream, then a synchronise, divided by N; the median of
 * several rounds after a warm-up. Kernels (bench/launch/kernels.cu): an empty
 * one, and vector_add(ptr, ptr, ptr, u32). Ours and C launch the same CUBIN;
 * CuPy compiles the same source. Every path's vector_add result is checked
 * on fresh random inputs before it is timed.
 *
 * Run on a CUDA machine: `tsx bench/launch.ts` (python3 with cupy and nvcc
 * are optional: a missing anchor is skipped with a note). Writes
 * bench/results/launch.{json,svg}. GPUCOMPUTE_BENCH_LAUNCHES overrides N.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { ArgPack, bindings, cu, Device, DeviceBuffer, Module, Stream, u32, type Context } from '../src/driver/index.js';
import { openLibcuda } from '../src/driver/library.js';
import { KernelCache, Program, nvrtc } from '../src/nvrtc/index.js';
import { launchProgramOptions, secondProgramOptions } from './launch/program-options.js';
import { median, runPython, tsxCommand, writeReport, type BenchRow } from './report.js';

const here = dirname(fileURLToPath(import.meta.url));
const kernelsPath = join(here, 'launch', 'kernels.cu');
const LAUNCHES = Number(process.env.GPUCOMPUTE_BENCH_LAUNCHES ?? 100_000);
const ROUNDS = 7;
const WARMUP = 20_000;
/** vector_add's element count: 4 blocks of 256 threads. */
const ELEMENTS = 1024;
const TARGET_VS_C = 1.15;

if (!Number.isInteger(LAUNCHES) || LAUNCHES < 1) throw new Error(`GPUCOMPUTE_BENCH_LAUNCHES must be a positive integer, got ${LAUNCHES}`);

const gpu = findGpu();
if (typeof gpu === 'string') {
  console.log(`launch bench: nothing to run, ${gpu}`);
  process.exit(0);
}
const device = gpu;
const ctx = device.primaryContext();
ctx.makeCurrent();
console.log(`device: ${device.name} (${device.arch}), ${LAUNCHES} launches x ${ROUNDS} rounds after ${WARMUP} warm-up launches`);

const scratch = mkdtempSync(join(tmpdir(), 'gpucompute-launch-'));
try {
  run(ctx);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

function run(ctx: Context): void {
  // ------------------------------------------------------------ compile and cache
  const source = readFileSync(kernelsPath, 'utf8');
  const cacheDir = join(scratch, 'kernel-cache');
  let t = performance.now();
  nvrtc.version();
  const nvrtcLoadMs = performance.now() - t;
  const program = new Program(source, { ...launchProgramOptions, cache: new KernelCache({ dir: cacheDir }) });
  const first = program.compile();
  if (first.cacheHit) throw new Error('a fresh cache folder gave a hit');
  t = performance.now();
  const module = Module.load(ctx, first.image);
  const emptyKernel = module.getFunction('empty_kernel');
  const addKernel = module.getFunction('vector_add');
  const moduleLoadMs = performance.now() - t;
  const memoryHitMs = median(
    Array.from({ length: 9 }, () => {
      const hit = program.compile();
      if (!hit.cacheHit) throw new Error('the second compile missed the in-memory cache');
      return hit.compileMs;
    }),
  );
  new Program(source, { ...secondProgramOptions, cache: new KernelCache({ dir: cacheDir }) }).compile();
  const cubinPath = join(scratch, 'launch_kernels.cubin');
  writeFileSync(cubinPath, first.image);
  const child = tsxCommand(join(here, 'launch', 'cache-hit.ts'), [cacheDir, kernelsPath]);
  const diskHit = parseJsonLine(spawnSync(child.command, child.args, { encoding: 'utf8', timeout: 120_000 }), 'cache-hit child') as
    | { nvrtcLoadMs: number; diskHitMs: number; nextDiskHitMs: number; moduleLoadMs: number; memoryHitMs: number }
    | undefined;

  // ------------------------------------------------------------ inputs, checked on every path
  const stream = Stream.create(ctx, { nonBlocking: true });
  const a = DeviceBuffer.alloc(ctx, ELEMENTS * 4);
  const b = DeviceBuffer.alloc(ctx, ELEMENTS * 4);
  const c = DeviceBuffer.alloc(ctx, ELEMENTS * 4);
  const hostA = randomFloats(ELEMENTS);
  const hostB = randomFloats(ELEMENTS);
  a.copyFromHost(hostA);
  b.copyFromHost(hostB);

  const emptyConfig = { grid: 1, block: 1, stream };
  const addConfig = { grid: ELEMENTS / 256, block: 256, stream };
  const emptyBound = emptyKernel.bind([]);
  const addBound = addKernel.bind(['ptr', 'ptr', 'ptr', 'u32']);
  const streamHandle = stream.handle;
  const emptyFn = emptyKernel.handle;
  const addFn = addKernel.handle;
  const addParams = new ArgPack(4).pack([a, b, c, u32(ELEMENTS)], undefined, 'vector_add');
  const { cuLaunchKernel } = bindings;

  interface Variant {
    label: string;
    empty: () => void;
    add: () => void;
  }
  const variants: Variant[] = [
    {
      label: 'raw koffi',
      empty: () => {
        if (cuLaunchKernel(emptyFn, 1, 1, 1, 1, 1, 1, 0, streamHandle, null, null) !== 0) throw new Error('cuLaunchKernel failed');
      },
      add: () => {
        if (cuLaunchKernel(addFn, 4, 1, 1, 256, 1, 1, 0, streamHandle, addParams, null) !== 0) throw new Error('cuLaunchKernel failed');
      },
    },
    {
      label: 'cu.launchKernel',
      empty: () => cu.launchKernel(emptyFn, 1, 1, 1, 1, 1, 1, 0, streamHandle, 0n),
      add: () => cu.launchKernel(addFn, 4, 1, 1, 256, 1, 1, 0, streamHandle, addParams),
    },
    {
      label: 'bind()',
      empty: () => emptyBound(emptyConfig),
      add: () => addBound(addConfig, a, b, c, ELEMENTS),
    },
    {
      label: 'launch()',
      empty: () => emptyKernel.launch(emptyConfig, []),
      // As users write it: a fresh argument list per launch.
      add: () => addKernel.launch(addConfig, [a, b, c, u32(ELEMENTS)]),
    },
  ];

  const expected = Float32Array.from(hostA, (x, i) => x + hostB[i]!);
  const result = new Float32Array(ELEMENTS);
  for (const v of variants) {
    c.fill(0, { dtype: 'u32', stream });
    v.add();
    stream.synchronize();
    c.copyToHost(result);
    const wrong = result.findIndex((x, i) => x !== expected[i]);
    if (wrong >= 0) throw new Error(`${v.label}: vector_add gave c[${wrong}] = ${result[wrong]}, expected ${expected[wrong]}`);
  }
  console.log(`vector_add checked exactly through all ${variants.length} paths`);

  // ------------------------------------------------------------ ours
  const timeLaunches = (launch: () => void): number => {
    for (let i = 0; i < WARMUP; i++) launch();
    stream.synchronize();
    const rounds: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const start = performance.now();
      for (let i = 0; i < LAUNCHES; i++) launch();
      stream.synchronize();
      rounds.push(((performance.now() - start) * 1000) / LAUNCHES);
    }
    return median(rounds);
  };
  const ours = variants.map((v) => {
    const emptyUs = timeLaunches(v.empty);
    const addUs = timeLaunches(v.add);
    console.log(`${v.label.padEnd(16)} empty ${emptyUs.toFixed(3)} us, vector_add ${addUs.toFixed(3)} us`);
    return { label: v.label, emptyUs, addUs };
  });

  // ------------------------------------------------------------ anchors
  const cProgram = runCProgram(cubinPath);
  const cupy = runPython(join(here, 'launch', 'launch_cupy.py'), ['launch', kernelsPath, ...[LAUNCHES, ROUNDS, WARMUP, ELEMENTS].map(String)], 600_000) as
    | { cupy: string; empty_us: number; vector_add_us: number }
    | undefined;
  const cupyCache = join(scratch, 'cupy-cache');
  const cupyFirst = runPython(join(here, 'launch', 'launch_cupy.py'), ['compile', kernelsPath, cupyCache], 300_000) as
    | { compile_ms: number; memory_hit_ms: number }
    | undefined;
  const cupyDisk = cupyFirst
    ? (runPython(join(here, 'launch', 'launch_cupy.py'), ['compile', kernelsPath, cupyCache], 300_000) as { compile_ms: number } | undefined)
    : undefined;

  // ------------------------------------------------------------ report
  const rows: BenchRow[] = [];
  const anchors = [
    { name: 'C (nvcc)', dtype: 'vs C', figures: cProgram && { empty: cProgram.empty_us, add: cProgram.vector_add_us } },
    { name: 'CuPy RawKernel', dtype: 'vs CuPy', figures: cupy && { empty: cupy.empty_us, add: cupy.vector_add_us } },
  ];
  for (const [kernel, op] of [
    ['empty', 'launch empty'],
    ['add', 'launch 4 args'],
  ] as const) {
    const present = anchors.filter((x) => x.figures);
    for (const anchor of present.length ? present : [undefined]) {
      for (const o of ours) {
        rows.push({
          op,
          dtype: anchor?.dtype ?? 'host cost',
          size: o.label,
          unit: 'us',
          ours: kernel === 'empty' ? o.emptyUs : o.addUs,
          ...(anchor ? { anchor: anchor.figures![kernel], anchorName: anchor.name } : { note: 'no anchor ran' }),
        });
      }
    }
  }
  const compileRow = (size: string, oursMs: number, anchorMs: number | undefined, note: string): BenchRow => ({
    op: 'compile+load vector_add',
    dtype: 'vs CuPy',
    size,
    unit: 'ms',
    ours: oursMs,
    ...(anchorMs === undefined ? {} : { anchor: anchorMs, anchorName: 'CuPy RawKernel.compile' }),
    note,
  });
  rows.push(
    compileRow('first', first.compileMs + moduleLoadMs, cupyFirst?.compile_ms, 'NVRTC compile to CUBIN (fresh cache) + Module.load'),
    ...(diskHit
      ? [compileRow('disk hit', diskHit.diskHitMs + diskHit.moduleLoadMs, cupyDisk?.compile_ms, 'new process, context and NVRTC loaded: cache read + Module.load')]
      : []),
    compileRow('memory hit', memoryHitMs, cupyFirst?.memory_hit_ms, 'same process, module not reloaded (median of 9)'),
    { op: 'kernel cache', dtype: 'parts', size: 'NVRTC load', unit: 'ms', ours: nvrtcLoadMs, note: 'dlopen + nvrtcVersion, once per process' },
    { op: 'kernel cache', dtype: 'parts', size: 'Module.load', unit: 'ms', ours: moduleLoadMs, note: 'cuModuleLoadData of the CUBIN + getFunction' },
  );
  if (diskHit) {
    rows.push(
      { op: 'kernel cache', dtype: 'parts', size: 'first disk hit', unit: 'ms', ours: diskHit.diskHitMs, note: 'first Program.compile() served from disk in a new process: one-time process costs included' },
      { op: 'kernel cache', dtype: 'parts', size: 'next disk hit', unit: 'ms', ours: diskHit.nextDiskHitMs, note: "a later module's disk hit in that process (target < 1 ms)" },
    );
  }
  writeReport('launch', rows, {
    meta: {
      device: device.name,
      launches: LAUNCHES,
      rounds: ROUNDS,
      warmup: WARMUP,
      cupy: cupy?.cupy ?? null,
      cDriverVersion: cProgram?.driver ?? null,
      nvrtcFirstCompileMs: first.compileMs,
    },
  });

  // ------------------------------------------------------------ targets
  console.log('\ntargets');
  for (const o of ours.filter((x) => x.label === 'launch()' || x.label === 'bind()')) {
    for (const [kernel, label] of [
      ['emptyUs', 'empty'],
      ['addUs', '4 args'],
    ] as const) {
      const us = o[kernel];
      const vsC = cProgram ? us / (kernel === 'emptyUs' ? cProgram.empty_us : cProgram.vector_add_us) : undefined;
      const vsCupy = cupy ? us / (kernel === 'emptyUs' ? cupy.empty_us : cupy.vector_add_us) : undefined;
      console.log(
        `  safe ${o.label.padEnd(8)} ${label.padEnd(6)} ${us.toFixed(3)} us: ` +
          `${vsC === undefined ? 'no C anchor' : `${vsC.toFixed(3)}x C (target <= ${TARGET_VS_C}: ${vsC <= TARGET_VS_C ? 'met' : 'MISSED'})`}, ` +
          `${vsCupy === undefined ? 'no CuPy anchor' : `${vsCupy.toFixed(3)}x CuPy (target < 1: ${vsCupy < 1 ? 'met' : 'MISSED'})`}`,
      );
    }
  }
  if (diskHit) {
    console.log(
      `  kernel cache disk hit: first in a process ${diskHit.diskHitMs.toFixed(3)} ms, next module ${diskHit.nextDiskHitMs.toFixed(3)} ms ` +
        `(target < 1 ms: ${diskHit.nextDiskHitMs < 1 ? 'met' : 'MISSED'})`,
    );
  }

  stream.synchronize();
  for (const buffer of [a, b, c]) buffer.dispose();
  stream.dispose();
  module.dispose();
  ctx.dispose();
}

// ------------------------------------------------------------ helpers

function findGpu(): Device | string {
  try {
    const count = Device.count();
    return count > 0 ? Device.get(0) : 'the CUDA driver sees no device';
  } catch (err) {
    return `CUDA is unavailable: ${(err instanceof Error ? err.message : String(err)).replace(/\s*\n\s*/g, ' ')}`;
  }
}

function randomFloats(count: number): Float32Array {
  // Values of a few bits of mantissa would hide a swapped operand; full-precision randoms do not.
  return Float32Array.from({ length: count }, () => Math.random() * 2 - 1);
}

/** Builds bench/launch/launch.c with nvcc and runs it on `cubin`; undefined (after a note) when it cannot. */
function runCProgram(cubin: string): { empty_us: number; vector_add_us: number; driver: number } | undefined {
  const cudaHome = process.env.CUDA_HOME || process.env.CUDA_PATH || '/usr/local/cuda';
  const nvcc = [join(cudaHome, 'bin', 'nvcc'), '/usr/local/cuda/bin/nvcc'].find((p) => existsSync(p)) ?? 'nvcc';
  const libcuda = openLibcuda().path;
  const libcudaDir = isAbsolute(libcuda) ? dirname(libcuda) : undefined;
  const libDirs = [
    ...(libcudaDir ? [libcudaDir] : []),
    join(cudaHome, 'lib64', 'stubs'),
    join(cudaHome, 'lib', 'stubs'),
    '/usr/lib/x86_64-linux-gnu',
    '/usr/lib64',
    '/usr/lib',
  ].filter((d) => existsSync(d));
  const exe = join(scratch, 'launch');
  const errors: string[] = [];
  // The unversioned libcuda.so may be missing where only the driver is installed: fall back to the soname.
  for (const lib of ['-lcuda', '-l:libcuda.so.1']) {
    const build = spawnSync(nvcc, ['-O2', '-o', exe, join(here, 'launch', 'launch.c'), ...libDirs.map((d) => `-L${d}`), lib], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    if (build.status === 0) break;
    errors.push(build.error ? build.error.message : build.stderr.trim().split('\n').slice(-2).join(' / '));
  }
  if (!existsSync(exe)) {
    console.log(`note: C anchor skipped: could not build launch.c with ${nvcc}: ${errors.join('; ')}`);
    return undefined;
  }
  // Run against the driver this process loaded, wherever the loader's default search would look.
  const runtimeDir = libcudaDir ?? libDirs.find((d) => !d.endsWith('stubs') && existsSync(join(d, 'libcuda.so.1')));
  const env = { ...process.env, ...(runtimeDir ? { LD_LIBRARY_PATH: [runtimeDir, process.env.LD_LIBRARY_PATH].filter(Boolean).join(':') } : {}) };
  const result = spawnSync(exe, [cubin, ...[LAUNCHES, ROUNDS, WARMUP, ELEMENTS].map(String)], { encoding: 'utf8', timeout: 600_000, env });
  return parseJsonLine(result, 'C anchor') as { empty_us: number; vector_add_us: number; driver: number } | undefined;
}

/** The last JSON line of a child's stdout; undefined (after a note) when it failed. */
function parseJsonLine(result: ReturnType<typeof spawnSync>, what: string): unknown {
  const stdout = String(result.stdout ?? '');
  if (result.status !== 0) {
    const why = result.error?.message ?? `exit ${result.status ?? result.signal}: ${String(result.stderr ?? '').trim().split('\n').slice(-3).join(' / ')}`;
    console.log(`note: ${what} failed: ${why}`);
    return undefined;
  }
  const line = stdout.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(line) as unknown;
  } catch {
    console.log(`note: ${what} printed no JSON: ${line}`);
    return undefined;
  }
}
