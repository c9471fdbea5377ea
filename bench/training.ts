/**
 * Training benchmark, each figure against torch in the same run (`bench/anchors/training.py`):
 *
 * - attention backward (`attentionBackward` after one forward with the log-sum-exp) against
 *   torch autograd's backward of scaled_dot_product_attention, in TFLOP/s with 10·B·H·S²·D flops
 *   (halved for causal): B4 H16 S4096 D128 bf16 and B8 H16 S2048 D64 f16, causal and not, and
 *   an f32 case (CUDA cores). The issue's target: ≥ 0.8x SDPA at bf16 B4 H16 S4096 D128.
 * - a GRU training step (gruTraining + gruBackward with gradients at the output and the final
 *   state) against torch.nn.GRU's forward + backward (cuDNN), in µs per step, strict f32 against
 *   torch with TF32 off and tf32 against torch's default: batch 32 (in 128, hidden 256, T 10, one
 *   and two layers) and batch 256 (in 512, hidden 1024, T 100). The target: ≥ torch.
 *
 * Before timing, each attention shape is checked on a reduced problem (B1 H2 S256) against the
 * CPU backend, and each GRU case of moderate size against the CPU backend on the same inputs.
 * After the report, every attention backward tile is timed on the 16-bit shapes.
 *
 * Run: `tsx bench/training.ts [--quick]` on a machine with a CUDA GPU (python3 with torch for the
 * anchors). Writes bench/results/training.{json,svg}. `--quick` drops the batch-256 GRU case and
 * the tile table.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AttentionBackwardParams } from '../src/compute/core/attention-backward-params.js';
import { cudaAttentionBackward, defaultBackwardConfig } from '../src/compute/cuda/attention/attention-backward.js';
import {
  backwardConfigName,
  backwardMmaCandidates,
  backwardSimtCandidates,
  backwardSharedBytes,
  wgmmaBackwardHeadDim,
  type BackwardConfig,
} from '../src/compute/cuda/attention/attention-backward-kernels.js';
import { paddedHeadDim } from '../src/compute/cuda/attention/attention-kernels.js';
import type { CudaBackend } from '../src/compute/cuda/cuda-backend.js';
import { GpuCompute } from '../src/compute/gpu-compute.js';
import { attentionBackward } from '../src/compute/ops/attention-backward.js';
import { gruBackward, gruTraining, type GruGradients } from '../src/compute/ops/gru-backward.js';
import type { GruLayerWeights } from '../src/compute/ops/gru.js';
import type { Tensor } from '../src/compute/tensor/tensor.js';
import { DeviceTimer } from './device-timer.js';
import { runPython, writeReport, type BenchRow } from './report.js';

const here = dirname(fileURLToPath(import.meta.url));
const quick = process.argv.includes('--quick');
const gpu = await GpuCompute.create({ backend: 'cuda', logLevel: process.env.GPUCOMPUTE_BENCH_DEBUG ? 'debug' : 'warn' });
const cpu = await GpuCompute.create({ backend: 'cpu', logLevel: 'warn' });
const be = gpu.backend as unknown as CudaBackend;
const info = be.info();
console.log(`device: ${info.deviceName} (${info.platform}), ${info.multiprocessorCount} SMs`);
const timer = new DeviceTimer(be.context, be.stream);
const timeDevice = (fn: () => void) => timer.time(fn, { warmup: 2, targetMs: 60, reps: 5 });
let wrong = 0;

/** ‖a − b‖ / ‖b‖. */
function relError(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let diff = 0;
  let norm = 0;
  for (let i = 0; i < b.length; i++) {
    diff += (a[i]! - b[i]!) ** 2;
    norm += b[i]! ** 2;
  }
  return Math.sqrt(diff / Math.max(norm, Number.MIN_VALUE));
}

// ---------------------------------------------------------------- attention backward

type Dtype = 'f32' | 'f16' | 'bf16';
interface AttentionCase {
  key: string;
  dtype: Dtype;
  batch: number;
  heads: number;
  seq: number;
  dim: number;
  causal: boolean;
}

const attentionCases: AttentionCase[] = [
  { key: 'bf16-d128', dtype: 'bf16', batch: 4, heads: 16, seq: 4096, dim: 128, causal: false },
  { key: 'bf16-d128-causal', dtype: 'bf16', batch: 4, heads: 16, seq: 4096, dim: 128, causal: true },
  { key: 'f16-d64', dtype: 'f16', batch: 8, heads: 16, seq: 2048, dim: 64, causal: false },
  { key: 'f16-d64-causal', dtype: 'f16', batch: 8, heads: 16, seq: 2048, dim: 64, causal: true },
  { key: 'f32-d64', dtype: 'f32', batch: 2, heads: 16, seq: 1024, dim: 64, causal: false },
];
const flopsOf = (c: AttentionCase) => 10 * c.batch * c.heads * c.seq * c.seq * c.dim * (c.causal ? 0.5 : 1);
const label = (c: AttentionCase) => `B${c.batch} H${c.heads} S${c.seq} D${c.dim}${c.causal ? ' causal' : ''}`;
/** The GPU bounds of the backward against another backend's result (test/unit/attention/backward-cases.ts). */
const TOL: Record<Dtype, number> = { f32: 2e-5, f16: 6e-3, bf16: 4.8e-2 };

/** dq, dk, dv of a reduced problem (B1 H2 S256, the case's dtype, head dim and mask) on CUDA against the CPU backend; the worst error. */
function reducedError(c: AttentionCase): number {
  const shape = [1, 2, 256, c.dim];
  const inputs = [11, 12, 13, 14].map((seed) => cpu.randn(shape, { seed, dtype: c.dtype }));
  const run = (g: GpuCompute) => {
    const [q, k, v, dOut] = inputs.map((t) => g.tensor(t.toArraySync() as Float32Array, shape, c.dtype)) as [Tensor, Tensor, Tensor, Tensor];
    const { out, lse } = g.attention(q, k, v, { causal: c.causal, returnLogSumExp: true });
    const grads = attentionBackward(g.session, q, k, v, out, lse, dOut, { causal: c.causal });
    const values = [grads.dq, grads.dk, grads.dv].map((t) => t.toArraySync() as Float32Array);
    for (const t of [q, k, v, dOut, out, lse, grads.dq, grads.dk, grads.dv]) t.dispose();
    return values;
  };
  const got = run(gpu);
  const want = run(cpu);
  for (const t of inputs) t.dispose();
  return Math.max(...got.map((g, i) => relError(g, want[i]!)));
}

/** The backend call of a case, for timing tiles. */
function paramsOf(c: AttentionCase, t: Record<'q' | 'k' | 'v' | 'out' | 'lse' | 'dOut' | 'dq' | 'dk' | 'dv', Tensor>): AttentionBackwardParams {
  return {
    q: t.q.view,
    k: t.k.view,
    v: t.v.view,
    out: t.out.view,
    lse: t.lse.view,
    dOut: t.dOut.view,
    dq: t.dq.view,
    dk: t.dk.view,
    dv: t.dv.view,
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

const attentionOurs = new Map<string, number>();
const attentionChosen = new Map<string, string>();
for (const c of attentionCases) {
  const err = reducedError(c);
  if (!(err <= TOL[c.dtype])) {
    console.log(`WRONG RESULT: attention backward ${c.key}: error ${err.toExponential(2)} against the CPU backend above ${TOL[c.dtype]}`);
    wrong++;
  }
  const shape = [c.batch, c.heads, c.seq, c.dim];
  const [q, k, v, dOut] = [1, 2, 3, 4].map((seed) => gpu.randn(shape, { seed, dtype: c.dtype })) as [Tensor, Tensor, Tensor, Tensor];
  const { out, lse } = gpu.attention(q, k, v, { causal: c.causal, returnLogSumExp: true });
  const us = timeDevice(() => {
    const g = attentionBackward(gpu.session, q, k, v, out, lse, dOut, { causal: c.causal });
    g.dq.dispose();
    g.dk.dispose();
    g.dv.dispose();
  });
  attentionOurs.set(c.key, (flopsOf(c) / us) * 1e-6);
  attentionChosen.set(c.key, backwardConfigName(defaultBackwardConfig(be, paramsOf(c, { q, k, v, out, lse, dOut, dq: q, dk: k, dv: v }))));
  console.log(`attention bwd ${c.key} (${label(c)} ${c.dtype}): ${attentionOurs.get(c.key)!.toFixed(1)} TFLOP/s, ${(us / 1000).toFixed(3)} ms [${attentionChosen.get(c.key)}]`);
  for (const t of [q, k, v, dOut, out, lse]) t.dispose();
}

// ---------------------------------------------------------------- GRU training step

interface GruCase {
  key: string;
  batch: number;
  input: number;
  hidden: number;
  steps: number;
  layers: number;
  mode: 'f32' | 'tf32';
}

const gruShapes = [
  { name: 'b32_in128_h256_T10', batch: 32, input: 128, hidden: 256, steps: 10, layers: 1 },
  { name: 'b32_in128_h256_T10_L2', batch: 32, input: 128, hidden: 256, steps: 10, layers: 2 },
  ...(quick ? [] : [{ name: 'b256_in512_h1024_T100', batch: 256, input: 512, hidden: 1024, steps: 100, layers: 1 }]),
];
const gruCases: GruCase[] = gruShapes.flatMap((s) => (['f32', 'tf32'] as const).map((mode) => ({ key: `${s.name}_${mode}`, ...s, mode })));

/** One training step's tensors: weights at PyTorch's init scale, x, h0 and the gradients arriving at output and hidden. */
function gruInputs(g: GpuCompute, c: GruCase) {
  const std = 1 / Math.sqrt(c.hidden);
  const layers: GruLayerWeights[] = Array.from({ length: c.layers }, (_, l) => ({
    wIh: g.randn([3 * c.hidden, l === 0 ? c.input : c.hidden], { seed: 10 * l, std }),
    wHh: g.randn([3 * c.hidden, c.hidden], { seed: 10 * l + 1, std }),
    bIh: g.randn([3 * c.hidden], { seed: 10 * l + 2, std }),
    bHh: g.randn([3 * c.hidden], { seed: 10 * l + 3, std }),
  }));
  const state = c.layers === 1 ? [c.batch, c.hidden] : [c.layers, c.batch, c.hidden];
  const x = g.randn([c.batch, c.steps, c.input], { seed: 100 });
  const h0 = g.randn(state, { seed: 101, std: 0.5 });
  const gOut = g.randn([c.batch, c.steps, c.hidden], { seed: 102 });
  const gHidden = g.randn(state, { seed: 103 });
  const all = [...layers.flatMap((l) => [l.wIh, l.wHh, l.bIh!, l.bHh!]), x, h0, gOut, gHidden];
  return { weights: c.layers === 1 ? layers[0]! : layers, x, h0, gOut, gHidden, dispose: () => all.forEach((t) => t.dispose()) };
}

/** One step: forward keeping what the backward needs, then the backward; returns the gradients (the caller disposes them). */
function trainStep(g: GpuCompute, c: GruCase, t: ReturnType<typeof gruInputs>): GruGradients {
  const { output, hidden, saved } = gruTraining(g.session, t.x, t.h0, t.weights, { precision: c.mode === 'tf32' ? 'tf32' : 'highest' });
  try {
    return gruBackward(g.session, saved, { output: t.gOut, hidden: t.gHidden });
  } finally {
    saved.dispose();
    output.dispose();
    hidden.dispose();
  }
}

function gradientTensors(grads: GruGradients): Tensor[] {
  return [grads.x, ...(grads.h0 ? [grads.h0] : []), ...grads.layers.flatMap((l) => Object.values(l) as Tensor[])];
}

const gruOurs = new Map<string, number>();
for (const c of gruCases) {
  const t = gruInputs(gpu, c);
  if (c.batch * c.hidden * c.steps <= 1 << 20) {
    const tc = gruInputs(cpu, { ...c, mode: 'f32' });
    const got = gradientTensors(trainStep(gpu, c, t));
    const want = gradientTensors(trainStep(cpu, { ...c, mode: 'f32' }, tc));
    const err = Math.max(...got.map((g, i) => relError(g.toArraySync() as Float32Array, want[i]!.toArraySync() as Float32Array)));
    const bound = c.mode === 'tf32' ? 2e-2 : 1e-4;
    if (!(err <= bound)) {
      console.log(`WRONG RESULT: gru training step ${c.key}: error ${err.toExponential(2)} against the CPU backend above ${bound}`);
      wrong++;
    }
    for (const x of [...got, ...want]) x.dispose();
    tc.dispose();
  }
  const us = timeDevice(() => gradientTensors(trainStep(gpu, c, t)).forEach((x) => x.dispose()));
  gruOurs.set(c.key, us);
  console.log(`gru train step ${c.key}: ${us.toFixed(1)} µs`);
  t.dispose();
}

// ---------------------------------------------------------------- anchors and report

const anchorInput = {
  attention: attentionCases.map(({ key, dtype, batch, heads, seq, dim, causal }) => ({ key, dtype, batch, heads, seq, dim, causal })),
  gru: gruCases.map(({ key, batch, input, hidden, steps, layers, mode }) => ({ key, batch, input, hidden, steps, layers, mode })),
};
const torch = runPython(join(here, 'anchors', 'training.py'), [JSON.stringify(anchorInput)], 1_200_000) as
  | { device: string; torch: string; attention: Record<string, { tflops: number; us: number }>; gru: Record<string, number> }
  | undefined;

const rows: BenchRow[] = [
  ...attentionCases.map((c): BenchRow => {
    const t = torch?.attention[c.key]?.tflops;
    return {
      op: 'attention bwd',
      dtype: c.dtype,
      size: label(c),
      unit: 'TFLOP/s',
      ours: attentionOurs.get(c.key)!,
      ...(t === undefined ? {} : { anchor: t, anchorName: 'torch SDPA backward (same run)' }),
      note: attentionChosen.get(c.key)!,
    };
  }),
  ...gruCases.map((c): BenchRow => {
    const t = torch?.gru[c.key];
    return {
      op: `gru train step${c.layers > 1 ? ` L${c.layers}` : ''}`,
      dtype: c.mode,
      size: `b${c.batch} in${c.input} h${c.hidden} T${c.steps}`,
      unit: 'us',
      ours: gruOurs.get(c.key)!,
      ...(t === undefined ? {} : { anchor: t, anchorName: 'torch.nn.GRU forward + backward (cuDNN, same run)' }),
    };
  }),
];
for (const c of attentionCases) {
  const t = torch?.attention[c.key]?.tflops;
  console.log(`attention bwd ${c.key.padEnd(18)} ours ${attentionOurs.get(c.key)!.toFixed(1)} TFLOP/s, ${t === undefined ? 'no SDPA figure' : `SDPA ${t.toFixed(1)}, ratio ${(attentionOurs.get(c.key)! / t).toFixed(2)}x`}`);
}
for (const c of gruCases) {
  const t = torch?.gru[c.key];
  console.log(`gru train step ${c.key.padEnd(28)} ours ${gruOurs.get(c.key)!.toFixed(1)} µs, ${t === undefined ? 'no torch figure' : `torch ${t.toFixed(1)} µs, speed-up ${(t / gruOurs.get(c.key)!).toFixed(2)}x`}`);
}
writeReport('training', rows, { meta: { device: info.deviceName, platform: info.platform, torch: torch?.torch } });

// Every attention backward tile on the 16-bit shapes, for choosing the defaults; after the report,
// so a slow or failing candidate cannot cost the main figures.
if (!quick) {
  console.log('\nattention backward tiles:');
  for (const c of attentionCases.filter((x) => x.dtype !== 'f32')) {
    const shape = [c.batch, c.heads, c.seq, c.dim];
    const [q, k, v, dOut] = [1, 2, 3, 4].map((seed) => gpu.randn(shape, { seed, dtype: c.dtype })) as [Tensor, Tensor, Tensor, Tensor];
    const { out, lse } = gpu.attention(q, k, v, { causal: c.causal, returnLogSumExp: true });
    const [dq, dk, dv] = [0, 1, 2].map(() => gpu.empty(shape, c.dtype)) as [Tensor, Tensor, Tensor];
    const params = paramsOf(c, { q, k, v, out, lse, dOut, dq, dk, dv });
    const dp = paddedHeadDim(c.dim);
    const sdpa = torch?.attention[c.key]?.tflops;
    const { major, minor } = be.device.computeCapability;
    const hopper: BackwardConfig[] = major === 9 && minor === 0 && wgmmaBackwardHeadDim(c.dim) !== undefined ? [{ family: 'wgmma' }] : [];
    for (const config of [...hopper, ...backwardMmaCandidates(dp), backwardSimtCandidates(dp)[0]!]) {
      if (backwardSharedBytes(config, config.family === 'wgmma' ? wgmmaBackwardHeadDim(c.dim)! : dp) > be.device.sharedMemoryPerBlockOptin) continue;
      const tflops = (flopsOf(c) / timeDevice(() => cudaAttentionBackward(be, params, config))) * 1e-6;
      console.log(`${c.key.padEnd(18)} ${backwardConfigName(config).padEnd(14)} ${tflops.toFixed(1)} TFLOP/s${sdpa === undefined ? '' : `  ${(tflops / sdpa).toFixed(2)}x SDPA`}`);
    }
    for (const t of [q, k, v, dOut, out, lse, dq, dk, dv]) t.dispose();
  }
}
gpu.dispose();
cpu.dispose();
if (wrong > 0) {
  console.log(`${wrong} case(s) gave wrong results`);
  process.exitCode = 1;
}
