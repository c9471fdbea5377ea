/**
 * Attention forward benchmark: `gpu.attention` against PyTorch's scaled_dot_product_attention
 * (`bench/anchors/attention.py`) in the same run, in TFLOP/s with 4·B·H·Sq·Sk·D flops per call
 * (halved for causal). Cases: B4 H16 S4096 D128 bf16 (causal and not), B8 H16 S2048 D64 f16,
 * an f32 case, and a sweep of S from 512 to 16384 at D128 bf16 (16K tokens per batch). Each
 * main case is checked against float64 on sampled rows before it is timed. A tuning table
 * times every tensor-core tile configuration on the main shapes.
 *
 * Run: `tsx bench/attention.ts [--quick | --hopper | --mma]` on a machine with a CUDA GPU (python3
 * with torch for the anchor). Writes bench/results/attention.{json,svg}. `--hopper` / `--mma` time
 * only the four 16-bit main cases (`--hopper`: and the sweep up to S 4096), every Hopper / mma.sync
 * (the sm_80–sm_89 path, forced) tile on them and SDPA, and write no report.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AttentionParams } from '../src/compute/core/attention-params.js';
import { cudaAttention, defaultAttentionConfig } from '../src/compute/cuda/attention/attention.js';
import { attentionConfigName, mmaTuningConfigs, paddedHeadDim, wgmmaTuningConfigs } from '../src/compute/cuda/attention/attention-kernels.js';
import type { CudaBackend } from '../src/compute/cuda/cuda-backend.js';
import { GpuCompute } from '../src/compute/gpu-compute.js';
import type { Tensor } from '../src/compute/tensor/tensor.js';
import { DeviceTimer } from './device-timer.js';
import { runPython, writeReport, type BenchRow } from './report.js';

const here = dirname(fileURLToPath(import.meta.url));
const quick = process.argv.includes('--quick');
const hopperOnly = process.argv.includes('--hopper');
const mmaOnly = process.argv.includes('--mma');
const focused = hopperOnly || mmaOnly;
const gpu = await GpuCompute.create({ backend: 'cuda', logLevel: process.env.GPUCOMPUTE_BENCH_DEBUG ? 'debug' : 'warn' });
const be = gpu.backend as unknown as CudaBackend;
const info = be.info();
console.log(`device: ${info.deviceName} (${info.platform}), ${info.multiprocessorCount} SMs`);
const timer = new DeviceTimer(be.context, be.stream);
const timeDevice = (fn: () => void) => timer.time(fn, { warmup: 2, targetMs: 30, reps: 5 });
/** Dense bf16 tensor-core rate measured by cuBLAS on an H200 (DESIGN.md): the floor's denominator. */
const BF16_ROOF_TFLOPS = 751;

type Dtype = 'f32' | 'f16' | 'bf16';
interface Case {
  key: string;
  dtype: Dtype;
  batch: number;
  heads: number;
  seq: number;
  dim: number;
  causal: boolean;
  /** Checked against float64 on sampled rows before timing. */
  check: boolean;
  sweep?: boolean;
}

const flopsOf = (c: Case) => 4 * c.batch * c.heads * c.seq * c.seq * c.dim * (c.causal ? 0.5 : 1);
const label = (c: Case) => `B${c.batch} H${c.heads} S${c.seq} D${c.dim}${c.causal ? ' causal' : ''}`;

const cases: Case[] = [
  { key: 'bf16-d128', dtype: 'bf16', batch: 4, heads: 16, seq: 4096, dim: 128, causal: false, check: true },
  { key: 'bf16-d128-causal', dtype: 'bf16', batch: 4, heads: 16, seq: 4096, dim: 128, causal: true, check: true },
  { key: 'f16-d64', dtype: 'f16', batch: 8, heads: 16, seq: 2048, dim: 64, causal: false, check: true },
  { key: 'f16-d64-causal', dtype: 'f16', batch: 8, heads: 16, seq: 2048, dim: 64, causal: true, check: true },
  { key: 'f32-d64', dtype: 'f32', batch: 4, heads: 16, seq: 2048, dim: 64, causal: false, check: true },
];
if (focused) cases.splice(cases.findIndex((c) => c.dtype === 'f32'), 1);
// `--hopper` keeps the short end of the sweep, where the persistent launch matters.
for (const seq of mmaOnly ? [] : hopperOnly ? [512, 1024, 2048, 4096] : quick ? [1024, 4096, 16384] : [512, 1024, 2048, 4096, 8192, 16384]) {
  for (const causal of [false, true]) {
    cases.push({ key: `sweep-${seq}${causal ? '-causal' : ''}`, dtype: 'bf16', batch: Math.max(1, 16384 / seq), heads: 16, seq, dim: 128, causal, check: false, sweep: true });
  }
}

/** Compares `rows` sampled query rows of (batch 0, head 0) with float64; returns the worst norm-wise error. */
function sampledError(c: Case, q: Tensor, k: Tensor, v: Tensor, out: Tensor): number {
  const [qv, kv, vv, ov] = [q, k, v, out].map((t) => t.toArraySync() as Float32Array) as [Float32Array, Float32Array, Float32Array, Float32Array];
  const d = c.dim;
  let worst = 0;
  for (const i of [0, 1, 63, 64, c.seq / 2 + 17, c.seq - 1]) {
    const keys = c.causal ? i + 1 : c.seq;
    const s = new Float64Array(keys);
    let max = -Infinity;
    for (let j = 0; j < keys; j++) {
      let dot = 0;
      for (let x = 0; x < d; x++) dot += qv[i * d + x]! * kv[j * d + x]!;
      s[j] = dot / Math.sqrt(d);
      max = Math.max(max, s[j]!);
    }
    const ref = new Float64Array(d);
    let sum = 0;
    for (let j = 0; j < keys; j++) {
      const w = Math.exp(s[j]! - max);
      sum += w;
      for (let x = 0; x < d; x++) ref[x]! += w * vv[j * d + x]!;
    }
    let diff = 0;
    let norm = 0;
    for (let x = 0; x < d; x++) {
      const r = ref[x]! / sum;
      diff += (ov[i * d + x]! - r) ** 2;
      norm += r * r;
    }
    worst = Math.max(worst, Math.sqrt(diff / norm));
  }
  return worst;
}

/** The backend call of case `c` writing into `out`. */
function paramsOf(c: Case, q: Tensor, k: Tensor, v: Tensor, out: Tensor): AttentionParams {
  return {
    q: q.view,
    k: k.view,
    v: v.view,
    out: out.view,
    batch: c.batch,
    heads: c.heads,
    kvHeads: c.heads,
    seqQ: c.seq,
    seqK: c.seq,
    headDim: c.dim,
    scale: 1 / Math.sqrt(c.dim),
    causal: c.causal,
  };
}

const TOL: Record<Dtype, number> = { f32: 1e-5, f16: 2e-3, bf16: 1.2e-2 };
let wrong = 0;
const ours = new Map<string, number>();
const chosen = new Map<string, string>();
for (const c of cases) {
  const shape = [c.batch, c.heads, c.seq, c.dim];
  const q = gpu.randn(shape, { dtype: c.dtype });
  const k = gpu.randn(shape, { dtype: c.dtype });
  const v = gpu.randn(shape, { dtype: c.dtype });
  const run = () => gpu.attention(q, k, v, { causal: c.causal });
  if (c.check) {
    const out = run();
    const err = sampledError(c, q, k, v, out);
    out.dispose();
    if (!(err <= TOL[c.dtype])) {
      console.log(`WRONG RESULT: ${c.key}: sampled error ${err.toExponential(2)} above ${TOL[c.dtype]}`);
      wrong++;
    }
  }
  const us = timeDevice(() => run().dispose());
  ours.set(c.key, (flopsOf(c) / us) * 1e-6);
  // The choice depends on shapes and alignment only: q stands in for the (equally aligned) output.
  chosen.set(c.key, attentionConfigName(defaultAttentionConfig(be, paramsOf(c, q, k, v, q))));
  console.log(`${c.key} (${label(c)} ${c.dtype}): ${ours.get(c.key)!.toFixed(1)} TFLOP/s, ${(us / 1000).toFixed(3)} ms [${chosen.get(c.key)}]`);
  for (const t of [q, k, v]) t.dispose();
}

const anchorCases = cases.map(({ key, dtype, batch, heads, seq, dim, causal }) => ({ key, dtype, batch, heads, seq, dim, causal }));
const torch = runPython(join(here, 'anchors', 'attention.py'), [JSON.stringify(anchorCases)], 600_000) as
  | { device: string; torch: string; tflops: Record<string, number> }
  | undefined;

const rows: BenchRow[] = cases.map((c) => {
  const t = torch?.tflops[c.key];
  return {
    op: c.sweep ? `attention sweep D128 bf16${c.causal ? ' causal' : ''}` : 'attention fwd',
    dtype: c.dtype,
    size: c.sweep ? c.seq : label(c),
    unit: 'TFLOP/s',
    ours: ours.get(c.key)!,
    ...(t === undefined ? {} : { anchor: t, anchorName: 'torch SDPA (same run)' }),
    ...(c.dtype === 'f32' ? {} : { roof: BF16_ROOF_TFLOPS }),
    note: `${chosen.get(c.key)}${c.sweep ? `, ${label(c)}` : ''}`,
  };
});

for (const c of cases) {
  const t = torch?.tflops[c.key];
  const vs = t === undefined ? 'no SDPA figure' : `SDPA ${t.toFixed(1)}, ratio ${(ours.get(c.key)! / t).toFixed(2)}x`;
  console.log(`${c.key.padEnd(18)} ours ${ours.get(c.key)!.toFixed(1)} TFLOP/s [${chosen.get(c.key)}], ${vs}`);
}
if (!focused) writeReport('attention', rows, { meta: { device: info.deviceName, platform: info.platform, torch: torch?.torch } });

// Every tensor-core kernel and tile on the main 16-bit shapes, for choosing the defaults; after the
// report, so a slow or failing candidate cannot cost the main figures.
console.log('\ntensor-core kernel configurations:');
for (const c of cases.filter((x) => (x.check || (hopperOnly && x.sweep)) && x.dtype !== 'f32')) {
  const shape = [c.batch, c.heads, c.seq, c.dim];
  const [q, k, v, out] = [0, 1, 2, 3].map(() => gpu.randn(shape, { dtype: c.dtype })) as [Tensor, Tensor, Tensor, Tensor];
  const params = paramsOf(c, q, k, v, out);
  const hopper = be.device.arch === 'sm_90' && !mmaOnly ? wgmmaTuningConfigs(c.dim, c.dtype) : [];
  const sdpa = torch?.tflops[c.key];
  for (const config of [...hopper, ...(hopperOnly ? [] : mmaTuningConfigs(paddedHeadDim(c.dim)))]) {
    const tflops = (flopsOf(c) / timeDevice(() => cudaAttention(be, params, config))) * 1e-6;
    const ratio = sdpa === undefined ? '' : `  ${(tflops / sdpa).toFixed(2)}x SDPA`;
    console.log(`${c.key.padEnd(18)} ${attentionConfigName(config).padEnd(28)} ${tflops.toFixed(1)} TFLOP/s${ratio}`);
  }
  for (const t of [q, k, v, out]) t.dispose();
}
gpu.dispose();
if (wrong > 0) {
  console.log(`${wrong} case(s) gave wrong results`);
  process.exitCode = 1;
}
