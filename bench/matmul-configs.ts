/**
 * Tile-configuration sweep for tuning the matmul kernels: every named configuration forced on
 * large square products (no autotuner), each spot-checked against float64 and timed against
 * cuBLAS in the same process, in alternating batches (the part's clocks drop as it warms, so a
 * cuBLAS figure taken once, first, flatters it against every later candidate). For choosing
 * candidates and defaults, not for the report.
 *
 * Run: `tsx bench/matmul-configs.ts <case>...` where a case is `kind:size[:layout][=config,config...]`,
 * kind f32 | tf32 | f16 | bf16, layout nn (default) | nt (B stored n × k), and the configurations
 * are names from `configName` (default: every candidate of every family the device has).
 * Example: `tsx bench/matmul-configs.ts f16:4096=wgmma128x256s4c2,wgmma128x128s6 tf32:8192:nt`.
 */
import type { MatmulParams } from '../src/compute/core/matmul-plan.js';
import type { CudaBackend } from '../src/compute/cuda/cuda-backend.js';
import { candidateConfigs, configName, type MatmulFamily } from '../src/compute/cuda/matmul/matmul-kernels.js';
import { cudaMatmulWithConfig } from '../src/compute/cuda/matmul/matmul.js';
import { GpuCompute } from '../src/compute/gpu-compute.js';
import { matmul } from '../src/compute/ops/matmul.js';
import type { Tensor } from '../src/compute/tensor/tensor.js';
import { DeviceTimer } from './device-timer.js';

type Kind = 'f32' | 'tf32' | 'f16' | 'bf16';
/** Sampled-element tolerance relative to the sum of |products| (as bench/matmul.ts). */
const TOL: Record<Kind, number> = { f32: 1e-4, tf32: 1e-2, f16: 1e-2, bf16: 3e-2 };

const gpu = await GpuCompute.create({ backend: 'cuda', logLevel: 'warn' });
const be = gpu.backend as unknown as CudaBackend;
const { major, minor } = be.device.computeCapability;
const timer = new DeviceTimer(be.context, be.stream);

function familiesFor(kind: Kind): MatmulFamily[] {
  const tensor = kind !== 'f32';
  return [...(tensor && major === 9 && minor === 0 ? (['wgmma'] as const) : []), ...(tensor && major >= 8 ? (['mma'] as const) : []), ...(tensor ? [] : (['simt'] as const))];
}

/** Worst sampled |out − ref| / Σ|products| over 64 elements. */
function sampledError(out: Tensor, a: Float32Array, b: Float32Array, s: number, nt: boolean): number {
  const got = out.toArraySync() as Float32Array;
  let worst = 0;
  for (let q = 0; q < 64; q++) {
    const i = (q * 7919) % s;
    const j = (q * 104729) % s;
    let sum = 0;
    let scale = 0;
    for (let p = 0; p < s; p++) {
      const prod = a[i * s + p]! * b[nt ? j * s + p : p * s + j]!;
      sum += prod;
      scale += Math.abs(prod);
    }
    worst = Math.max(worst, Math.abs(got[i * s + j]! - sum) / Math.max(scale, 1e-30));
  }
  return worst;
}

let wrong = 0;
const summary: string[] = [];
for (const arg of process.argv.slice(2)) {
  const [spec, list] = arg.split('=');
  const [kindText, sizeText, layout = 'nn'] = spec!.split(':');
  const kind = kindText as Kind;
  const s = Number(sizeText);
  const nt = layout === 'nt';
  const dtype = kind === 'tf32' ? 'f32' : kind;
  const configs = list ? list.split(',') : familiesFor(kind).flatMap((f) => candidateConfigs(f, dtype).map(configName));
  const a = gpu.rand([s, s], { dtype, low: -1, high: 1 });
  const b = gpu.rand([s, s], { dtype, low: -1, high: 1 });
  const out = gpu.empty([s, s], dtype);
  const check = s <= 4096;
  const av = check ? (a.toArraySync() as Float32Array) : new Float32Array(0);
  const bv = check ? (b.toArraySync() as Float32Array) : new Float32Array(0);
  const flops = 2 * s ** 3;
  const precision = kind === 'tf32' ? 'tf32' : 'highest';
  const runCublas = () => matmul(gpu.session, a, b, { transB: nt, precision, engine: 'cublas', autotune: false }).dispose();
  const params: MatmulParams = {
    a: a.view, b: b.view, out: out.view, m: s, n: s, k: s, batch: 1, aBatchStride: 0, bBatchStride: 0, cBatchStride: 0,
    transA: false, transB: nt, alpha: 1, beta: 0, precision, engine: 'kernels', autotune: false,
  };
  for (const config of configs) {
    try {
      cudaMatmulWithConfig(be, params, config);
      const err = check ? sampledError(out, av, bv, s, nt) : 0;
      const ok = err < TOL[kind];
      if (!ok) wrong++;
      const [us, cublasUs] = timer.interleaved([() => cudaMatmulWithConfig(be, params, config), runCublas], { warmup: 2, targetMs: 25, reps: 5 });
      const tflops = flops / us! / 1e6;
      const cublas = flops / cublasUs! / 1e6;
      const line = `${kind}:${s}:${layout} ${config}: ${tflops.toFixed(1)} TFLOP/s = ${(tflops / cublas).toFixed(2)}x cuBLAS ${cublas.toFixed(1)}${check ? ` (sampled error ${err.toExponential(1)}${ok ? '' : ' WRONG'})` : ''}`;
      console.log(line);
      summary.push(line);
    } catch (err) {
      console.log(`${kind}:${s}:${layout} ${config}: failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  for (const t of [a, b, out]) t.dispose();
}
gpu.dispose();
console.log(`\nSUMMARY\n${summary.join('\n')}`);
if (wrong > 0) {
  console.log(`${wrong} configuration(s) gave wrong results`);
  process.exitCode = 1;
}
