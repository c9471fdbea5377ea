/**
 * Matmul benchmark: our kernels (autotuned) against cuBLAS through our own binding, in the
 * same process, and PyTorch (`bench/anchors/matmul.py`) in the same run, for square sizes
 * 1024–8192 in f32 (no TF32), tf32, f16 and bf16, plus the seed shapes (the state-encoding
 * `linear` layer, batch 32, 64 → 128 + ReLU, and GRU-sized products). Every case is checked
 * against a float64 reference on sampled output elements before it is timed. The CPU
 * backend's blocked matmul is timed against NumPy (`bench/numpy_matmul.py`).
 *
 * Run: `tsx bench/matmul.ts [--quick]` on a machine with a CUDA GPU (python3 with torch and
 * numpy for the anchors). Writes bench/results/matmul.{json,svg} and prints the autotuner's
 * per-candidate times.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AutotuneStore } from '../src/compute/gpu/autotune.js';
import { cpuMatmul } from '../src/compute/cpu/matmul.js';
import { CpuBuffer } from '../src/compute/cpu/cpu-buffer.js';
import type { CudaBackend } from '../src/compute/cuda/cuda-backend.js';
import { GpuCompute } from '../src/compute/gpu-compute.js';
import { linear, matmul, type MatmulOptions } from '../src/compute/ops/matmul.js';
import type { Tensor } from '../src/compute/tensor/tensor.js';
import { makeView } from '../src/compute/core/view.js';
import { median, runPython, writeReport, type BenchRow } from './report.js';
import { DeviceTimer } from './device-timer.js';

const here = dirname(fileURLToPath(import.meta.url));
const quick = process.argv.includes('--quick');
const gpu = await GpuCompute.create({ backend: 'cuda', logLevel: process.env.GPUCOMPUTE_BENCH_DEBUG ? 'debug' : 'warn' });
const be = gpu.backend as CudaBackend;
const info = be.info();
console.log(`device: ${info.deviceName} (${info.platform}), ${info.multiprocessorCount} SMs`);

const timer = new DeviceTimer(be.context, be.stream);
/** Median µs per call of `fn` on the backend's stream. */
const timeDevice = (fn: () => void) => timer.time(fn, { warmup: 2, targetMs: 30, reps: 5 });

type Case = 'f32' | 'tf32' | 'f16' | 'bf16';
const DTYPE: Record<Case, 'f32' | 'f16' | 'bf16'> = { f32: 'f32', tf32: 'f32', f16: 'f16', bf16: 'bf16' };
/** Sampled-element tolerance against float64 (relative to the row's scale). */
const TOL: Record<Case, number> = { f32: 1e-4, tf32: 1e-2, f16: 1e-2, bf16: 3e-2 };

/** Host values of a tensor, widened to f32. */
function hostValues(t: Tensor): Float32Array {
  return t.toArraySync() as Float32Array;
}

/** Checks `samples` output elements of out = act(a·opB(b) + bias) against float64 sums. */
function spotCheck(label: string, out: Tensor, a: Float32Array, b: Float32Array, m: number, n: number, k: number, transB: boolean, c: Case, bias?: Float32Array, relu = false): void {
  const got = hostValues(out);
  let worst = 0;
  for (let s = 0; s < 64; s++) {
    const i = (s * 7919) % m;
    const j = (s * 104729) % n;
    let sum = 0;
    let scale = 0;
    for (let p = 0; p < k; p++) {
      const prod = a[i * k + p]! * b[transB ? j * k + p : p * n + j]!;
      sum += prod;
      scale += Math.abs(prod);
    }
    if (bias) sum += bias[j]!;
    if (relu) sum = Math.max(sum, 0);
    worst = Math.max(worst, Math.abs(got[i * n + j]! - sum) / Math.max(scale, 1e-30));
  }
  if (!(worst < TOL[c])) throw new Error(`${label}: sampled error ${worst.toExponential(2)} above ${TOL[c]}`);
}

function options(c: Case, engine: MatmulOptions['engine']): MatmulOptions {
  return { engine, autotune: engine !== 'cublas', precision: c === 'tf32' ? 'tf32' : 'highest' };
}

/** Runs a check; a failure is printed and counted, and the bench goes on to report the rest. */
function checked(check: () => void): number {
  try {
    check();
    return 0;
  } catch (err) {
    console.log(`WRONG RESULT: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}

let wrong = 0;
const rows: BenchRow[] = [];
const anchorCases: { key: string; kind: 'matmul' | 'linear'; dtype: Case; m: number; n: number; k: number }[] = [];

// ------------------------------------------------------------ square and seed products

interface Product {
  key: string;
  label: string;
  size: number | string;
  c: Case;
  m: number;
  n: number;
  k: number;
}

const sizes = quick ? [1024, 4096] : [1024, 2048, 4096, 8192];
const products: Product[] = [];
for (const c of ['f32', 'tf32', 'f16', 'bf16'] as const) {
  for (const s of sizes) products.push({ key: `${c}-${s}`, label: 'matmul', size: s, c, m: s, n: s, k: s });
}
// GRU-sized products: gates of a batch against the stacked recurrent weights (3·hidden wide).
for (const c of ['f32', 'tf32', 'bf16'] as const) {
  products.push({ key: `${c}-gru256`, label: 'gru gates', size: '256x1024·1024x3072', c, m: 256, n: 3072, k: 1024 });
  products.push({ key: `${c}-gru32`, label: 'gru gates', size: '32x256·256x768', c, m: 32, n: 768, k: 256 });
}

const measured = new Map<string, { ours: number; cublas: number }>();
for (const p of products) {
  const dtype = DTYPE[p.c];
  const a = gpu.rand([p.m, p.k], { dtype, low: -1, high: 1 });
  const b = gpu.rand([p.k, p.n], { dtype, low: -1, high: 1 });
  const small = p.m * p.k <= 4096 * 4096;
  const av = small ? hostValues(a) : new Float32Array(0);
  const bv = small ? hostValues(b) : new Float32Array(0);
  const runs = (['kernels', 'cublas'] as const).map((engine) => {
    const o = options(p.c, engine);
    const first = matmul(gpu.session, a, b, o); // tunes on first use
    // Reading 8192² operands back costs more than the check is worth; the kernels are the 4096 ones.
    if (small) wrong += checked(() => spotCheck(`${p.key} ${engine}`, first, av, bv, p.m, p.n, p.k, false, p.c));
    first.dispose();
    return () => matmul(gpu.session, a, b, o).dispose();
  });
  // Ours and cuBLAS in alternating batches, so both run at the same clocks.
  const [kernelsUs, cublasUs] = timer.interleaved(runs, { warmup: 2, targetMs: 30, reps: 5 });
  const times = { kernels: kernelsUs!, cublas: cublasUs! };
  const flops = 2 * p.m * p.n * p.k;
  measured.set(p.key, { ours: flops / times.kernels! / 1e6, cublas: flops / times.cublas! / 1e6 });
  anchorCases.push({ key: p.key, kind: 'matmul', dtype: p.c, m: p.m, n: p.n, k: p.k });
  console.log(`${p.key}: ours ${(flops / times.kernels! / 1e6).toFixed(1)} TFLOP/s, cuBLAS ${(flops / times.cublas! / 1e6).toFixed(1)} TFLOP/s`);
  a.dispose();
  b.dispose();
}

// ------------------------------------------------------------ linear (state encoding)

const linearTimes = new Map<string, number>();
for (const c of ['f32', 'f16', 'bf16'] as const) {
  const dtype = DTYPE[c];
  const x = gpu.rand([32, 64], { dtype, low: -1, high: 1 });
  const w = gpu.rand([128, 64], { dtype, low: -1, high: 1 });
  const bias = gpu.rand([128], { dtype, low: -1, high: 1 });
  const y = linear(gpu.session, x, w, bias, 'relu');
  wrong += checked(() => spotCheck(`linear ${c}`, y, hostValues(x), hostValues(w), 32, 128, 64, true, c, hostValues(bias), true));
  y.dispose();
  linearTimes.set(c, timeDevice(() => linear(gpu.session, x, w, bias, 'relu').dispose()));
  anchorCases.push({ key: `linear-${c}`, kind: 'linear', dtype: c, m: 32, n: 128, k: 64 });
  for (const t of [x, w, bias]) t.dispose();
}

// ------------------------------------------------------------ anchors

const torch = runPython(join(here, 'anchors', 'matmul.py'), [JSON.stringify(anchorCases)], 600_000) as
  | { device: string; torch: string; tflops: Record<string, number>; us: Record<string, number> }
  | undefined;

for (const p of products) {
  const m = measured.get(p.key)!;
  const t = torch?.tflops[p.key];
  rows.push({
    op: p.label,
    dtype: p.c,
    size: p.size,
    unit: 'TFLOP/s',
    ours: m.ours,
    anchor: m.cublas,
    anchorName: 'cuBLAS (same process)',
    note: t === undefined ? '' : `torch ${t.toFixed(1)} TFLOP/s (ours/torch ${(m.ours / t).toFixed(2)}x)`,
  });
}
for (const c of ['f32', 'f16', 'bf16'] as const) {
  const ours = linearTimes.get(c)!;
  const t = torch?.us[`linear-${c}`];
  rows.push({
    op: 'linear 32x64→128 +relu',
    dtype: c,
    size: '32x64→128',
    unit: 'us',
    ours,
    ...(t === undefined ? {} : { anchor: t, anchorName: 'torch F.linear + relu' }),
    note: 'one fused kernel; µs per call, events around back-to-back calls',
  });
}

// ------------------------------------------------------------ CPU backend vs NumPy

const cpuSizes = quick ? [256] : [256, 512];
const numpy = runPython(join(here, 'numpy_matmul.py'), [JSON.stringify(cpuSizes)], 300_000) as { gflops: Record<string, number> } | undefined;
for (const s of cpuSizes) {
  const mk = () => {
    const buf = new CpuBuffer(s * s * 4);
    for (let i = 0; i < s * s; i++) buf.f32[i] = Math.random() * 2 - 1;
    return makeView(buf, 'f32', [s, s]);
  };
  const [a, b, out] = [mk(), mk(), mk()];
  const io = { elements: (v: typeof a) => (v.buffer as CpuBuffer).f32.subarray(v.offset, v.offset + v.size) };
  const params = { a, b, out, m: s, n: s, k: s, batch: 1, aBatchStride: 0, bBatchStride: 0, cBatchStride: 0, transA: false, transB: false, alpha: 1, beta: 0, precision: 'highest', engine: 'auto', autotune: false } as const;
  cpuMatmul(params, io);
  const samples: number[] = [];
  for (let r = 0; r < 3; r++) {
    const t0 = performance.now();
    cpuMatmul(params, io);
    samples.push(performance.now() - t0);
  }
  const gflops = (2 * s ** 3) / median(samples) / 1e6;
  const np = numpy?.gflops[String(s)];
  rows.push({ op: 'cpu matmul', dtype: 'f32', size: s, unit: 'TFLOP/s', ours: gflops / 1000, ...(np === undefined ? {} : { anchor: np / 1000, anchorName: 'numpy' }), note: `${gflops.toFixed(2)} GFLOP/s` });
}

// ------------------------------------------------------------ report

writeReport('matmul', rows, { meta: { device: info.deviceName, platform: info.platform, torch: torch?.torch } });
console.log('\nautotune records (ms per product):');
for (const [key, record] of AutotuneStore.shared().entries()) {
  console.log(`${key} → ${record.choice} ${JSON.stringify(record.candidates)}`);
}
gpu.dispose();
if (wrong > 0) {
  console.log(`${wrong} case(s) gave wrong results`);
  process.exitCode = 1;
}
