/**
 * `npm run demo`: opens GpuCompute on the best device, says what it found,
 * then runs a small neural-network-style pipeline and checks every stage:
 *
 *   x = rand → h = x·w + b → gelu → layerNorm → softmax → argmax, plus sum and mean
 *
 * On a GPU each stage is compared with the CPU backend run on the same input;
 * on the CPU it is compared with a float64 reference written out below. The
 * process exits with status 1 if any stage is off.
 *
 * With an empty kernel cache each stage's first run compiles the kernels it
 * launches, one kernel at a time, behind a progress line: 12 modules, 1.1-1.6 s
 * on an H200 with NVRTC 13. The whole run there (kernel cache and
 * ~/.nv/ComputeCache empty, `node --import tsx`, the checker on one thread):
 * 2.6-2.8 s cold, 1.0-1.2 s warm; with the `tsx` command and 16 checker threads,
 * in the same run, 2.4-2.8 s cold, 1.6-1.8 s warm. A first run whose tsx cache was
 * empty as well took 3.3 s with the `tsx` command and 2.8 s with `node --import
 * tsx` (16 checker threads both). Warming the demo's ops ahead
 * (warmupKernels) compiled far more than the stages use and took longer (5.5-5.9
 * s against 3.9 s cold on another H200 host).
 */
import { performance } from 'node:perf_hooks';
import { erf } from '../src/compute/cpu/special-functions.js';
import { GpuCompute, ProgressLine, type Tensor } from '../src/compute/index.js';

const ROWS = 2048;
const COLS = 1024;
/** Norm-wise relative error allowed for f32 results. */
const TOLERANCE = 1e-5;

type Host = Float32Array | Int32Array;

/** One stage: how to run it on a GpuCompute, and its float64 meaning for the CPU-only check. */
interface Stage {
  name: string;
  inputs: string[];
  run(gpu: GpuCompute, inputs: Tensor[]): Tensor;
  reference(inputs: Host[]): ArrayLike<number>;
}

const gelu = (v: number) => 0.5 * v * (1 + erf(v / Math.SQRT2));

const STAGES: Stage[] = [
  {
    name: 'h = x·w + b (broadcast rows)',
    inputs: ['x', 'w', 'b'],
    run: (gpu, [x, w, b]) => {
      using scaled = gpu.mul(x!, w!);
      return gpu.add(scaled, b!);
    },
    reference: ([x, w, b]) => x!.map((v, i) => Math.fround(v * w![i % COLS]!) + b![i % COLS]!),
  },
  {
    name: 'gelu(h)',
    inputs: ['h'],
    run: (gpu, [h]) => gpu.gelu(h!),
    reference: ([h]) => Array.from(h!, gelu),
  },
  {
    name: 'layerNorm(g, gamma, beta)',
    inputs: ['gelu(h)', 'gamma', 'beta'],
    run: (gpu, [g, gamma, beta]) => gpu.layerNorm(g!, gamma!, beta!),
    reference: ([g, gamma, beta]) =>
      mapRows(g!, (row) => {
        const mean = row.reduce((a, v) => a + v, 0) / row.length;
        const variance = row.reduce((a, v) => a + (v - mean) ** 2, 0) / row.length;
        return row.map((v, j) => ((v - mean) / Math.sqrt(variance + 1e-5)) * gamma![j]! + beta![j]!);
      }),
  },
  {
    name: 'softmax (last axis)',
    inputs: ['layerNorm'],
    run: (gpu, [n]) => gpu.softmax(n!),
    reference: ([n]) =>
      mapRows(n!, (row) => {
        const max = Math.max(...row);
        const e = row.map((v) => Math.exp(v - max));
        const total = e.reduce((a, v) => a + v, 0);
        return e.map((v) => v / total);
      }),
  },
  {
    name: 'argmax (last axis)',
    inputs: ['softmax'],
    run: (gpu, [p]) => gpu.argmax(p!, -1),
    reference: ([p]) => Array.from({ length: ROWS }, (_, r) => argmaxOf(p!.subarray(r * COLS, (r + 1) * COLS))),
  },
  {
    name: 'sum over all (= rows)',
    inputs: ['softmax'],
    run: (gpu, [p]) => gpu.sum(p!),
    reference: ([p]) => [Array.from(p!).reduce((a, v) => a + v, 0)],
  },
  {
    name: 'mean of row maxima',
    inputs: ['softmax'],
    run: (gpu, [p]) => {
      using best = gpu.max(p!, -1);
      return gpu.mean(best);
    },
    reference: ([p]) => {
      let total = 0;
      for (let r = 0; r < ROWS; r++) total += Math.max(...p!.subarray(r * COLS, (r + 1) * COLS));
      return [total / ROWS];
    },
  },
];

function mapRows(x: Host, f: (row: number[]) => number[]): number[] {
  const out: number[] = [];
  for (let r = 0; r < x.length / COLS; r++) out.push(...f(Array.from(x.subarray(r * COLS, (r + 1) * COLS))));
  return out;
}

function argmaxOf(row: ArrayLike<number>): number {
  let best = 0;
  for (let j = 1; j < row.length; j++) if (row[j]! > row[best]!) best = j;
  return best;
}

function relativeError(out: ArrayLike<number>, ref: ArrayLike<number>): number {
  let diff = 0;
  let norm = 0;
  for (let i = 0; i < ref.length; i++) {
    diff += (out[i]! - ref[i]!) ** 2;
    norm += ref[i]! ** 2;
  }
  return Math.sqrt(diff / norm);
}

/**
 * argmax may legitimately differ where a row's two best probabilities are
 * within rounding of each other; any other difference is a failure.
 */
function argmaxMismatches(out: ArrayLike<number>, ref: ArrayLike<number>, probabilities: Host): number {
  let bad = 0;
  for (let r = 0; r < ref.length; r++) {
    if (out[r] === ref[r]) continue;
    const row = probabilities.subarray(r * COLS, (r + 1) * COLS);
    if (Math.abs(row[out[r]!]! - row[ref[r]!]!) > 1e-6 * row[ref[r]!]!) bad++;
  }
  return bad;
}

function formatBytes(bytes: number): string {
  return `${(bytes / 2 ** 30).toFixed(1)} GiB`;
}

async function main(): Promise<number> {
  console.log('GpuCompute demo\n');
  // Kernels compiled on first use show on one progress line (the logger leaves those lines out).
  const compiling = new ProgressLine(process.stdout, '  compiling kernels');
  const compiled = { count: 0, ms: 0 };
  const gpu = await GpuCompute.create({
    backend: 'auto',
    logLevel: 'info',
    logger: (level, message) => {
      if (!/^(compile|tune) /.test(message)) console.log(`  [${level}] ${message}`);
    },
    onProgress: (event) => {
      if (event.phase === 'compile') {
        compiled.count++;
        compiled.ms += event.ms;
      }
      compiling.update(event);
    },
  });
  const info = gpu.info;
  console.log(`\nDevice: ${info.deviceName} (${info.backend}:${info.ordinal})`);
  console.log(`  platform      ${info.platform}`);
  if (info.computeCapability) console.log(`  capability    ${info.computeCapability} (${info.arch})`);
  console.log(`  memory        ${formatBytes(info.freeMemory)} free of ${formatBytes(info.totalMemory)}`);
  console.log(`  ${info.backend === 'cpu' ? 'cores' : 'SMs  '}         ${info.multiprocessorCount}`);
  console.log(`  tensor cores  ${info.tensorCores ? 'yes' : 'no'}, native fp16 ${info.fp16 ? 'yes' : 'no'}, bf16 ${info.bf16 ? 'yes' : 'no'}`);
  for (const { backend, reason } of gpu.skipped) console.log(`  skipped ${backend.padEnd(6)}${reason}`);

  // One thread: the checks are few and short, and each SIMD worker started under tsx loads tsx
  // again (16 of them cost 0.4-0.5 s of a warm run on the H200 host).
  const checker = gpu.kind === 'cpu' ? undefined : await GpuCompute.create({ backend: 'cpu', logLevel: 'silent', threads: 1 });
  console.log(
    `\nPipeline on [${ROWS}, ${COLS}] f32, checked against ${checker ? 'the CPU backend' : 'a float64 reference'} (tolerance ${TOLERANCE}):\n`,
  );

  const tensors = new Map<string, Tensor>([
    ['x', gpu.rand([ROWS, COLS], { seed: 1, low: -3, high: 3 })],
    ['w', gpu.randn([COLS], { seed: 2, mean: 1, std: 0.5 })],
    ['b', gpu.randn([COLS], { seed: 3, std: 0.1 })],
    ['gamma', gpu.randn([COLS], { seed: 4, mean: 1, std: 0.2 })],
    ['beta', gpu.randn([COLS], { seed: 5, std: 0.2 })],
  ]);
  const outputNames = ['h', 'gelu(h)', 'layerNorm', 'softmax', 'argmax', 'sum', 'mean'];

  let failures = 0;
  let totalMs = 0;
  for (const [index, stage] of STAGES.entries()) {
    const inputs = stage.inputs.map((name) => tensors.get(name)!);
    // On a GPU the first launch of each kernel compiles it (then the disk cache serves it): time the second.
    if (gpu.kind !== 'cpu') stage.run(gpu, inputs).dispose();
    gpu.synchronize();
    const start = performance.now();
    const out = stage.run(gpu, inputs);
    gpu.synchronize();
    const ms = performance.now() - start;
    totalMs += ms;
    tensors.set(outputNames[index]!, out);

    const hostInputs = await Promise.all(inputs.map((t) => t.toArray()));
    const got = await out.toArray();
    const expected = checker ? await runOn(checker, stage, inputs, hostInputs) : stage.reference(hostInputs);
    let verdict: string;
    let ok: boolean;
    if (stage.name.startsWith('argmax')) {
      const bad = argmaxMismatches(got, expected, hostInputs[0]!);
      ok = bad === 0;
      verdict = `${bad} of ${ROWS} rows differ beyond rounding ties`;
    } else {
      const error = relativeError(got, expected);
      ok = error <= TOLERANCE;
      verdict = `rel. error ${error.toExponential(1)}`;
    }
    if (!ok) failures++;
    compiling.end();
    const progress = `[${index + 1}/${STAGES.length}]`;
    console.log(`  ${progress} ${stage.name.padEnd(30)} ${ms.toFixed(1).padStart(8)} ms   ${ok ? 'ok ' : 'BAD'}  ${verdict}`);
  }

  const sum = (await tensors.get('sum')!.toArray())[0]!;
  const meanMax = (await tensors.get('mean')!.toArray())[0]!;
  const stats = gpu.memoryStats();
  if (compiled.count > 0) console.log(`\n  compiled ${compiled.count} kernel modules on first use in ${(compiled.ms / 1000).toFixed(2)} s (the kernel cache serves them from now on)`);
  console.log(`\n  total ${totalMs.toFixed(1)} ms; softmax rows sum to ${sum.toFixed(3)} (expected ${ROWS}); mean top probability ${meanMax.toFixed(4)}`);
  console.log(`  memory: ${(stats.inUseBytes / 2 ** 20).toFixed(1)} MiB in use, peak ${(stats.peakBytes / 2 ** 20).toFixed(1)} MiB, ${stats.allocations} live allocations`);

  for (const t of tensors.values()) t.dispose();
  checker?.dispose();
  gpu.dispose();
  console.log(failures === 0 ? '\nAll stages match.' : `\n${failures} stage(s) do not match.`);
  return failures === 0 ? 0 : 1;
}

/** The stage on the CPU backend, fed the very values the device used. */
async function runOn(cpu: GpuCompute, stage: Stage, inputs: Tensor[], hostInputs: Host[]): Promise<Host> {
  const copies = inputs.map((t, i) => cpu.tensor(hostInputs[i]! as Float32Array, t.shape, t.dtype));
  using out = stage.run(cpu, copies);
  for (const c of copies) c.dispose();
  return out.toArray();
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
