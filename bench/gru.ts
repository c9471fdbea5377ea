/**
 * GRU benchmark against torch.nn.GRU (cuDNN) in the same run (`bench/anchors/gru.py`), strict f32
 * against torch with TF32 off and tf32 against torch's default, for the shapes: (b32, in128,
 * h256, T10), (b256, in512, h1024, T100), (b64, in1024, h1024, T512), plus a two-layer stack of the
 * small one and (b256, in256, h512, T20), a product large enough for 'auto' to leave the fused kernel.
 * Every case runs the path `auto` picks, and the sequence, fused, steps and persistent paths where they apply
 * (as `path` options), so the choice can be checked. Proof cases feed identical weights to torch,
 * which writes its output back: the max abs error against ours is printed before any timing.
 *
 * Run: `tsx bench/gru.ts` on a CUDA machine with python3 + torch. Writes bench/results/gru.{json,svg}.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CudaBackend } from '../src/compute/cuda/cuda-backend.js';
import { GpuCompute } from '../src/compute/gpu-compute.js';
import type { GruLayerWeights } from '../src/compute/ops/gru.js';
import type { GruPath } from '../src/compute/core/gru-params.js';
import { InvalidArgumentError } from '../src/errors.js';
import type { Tensor } from '../src/compute/tensor/tensor.js';
import { DeviceTimer } from './device-timer.js';
import { runPython, writeReport, type BenchRow } from './report.js';

const here = dirname(fileURLToPath(import.meta.url));
const gpu = await GpuCompute.create({ backend: 'cuda', logLevel: process.env.GPUCOMPUTE_BENCH_DEBUG ? 'debug' : 'warn' });
const be = gpu.backend as CudaBackend;
const info = be.info();
console.log(`device: ${info.deviceName} (${info.platform}), ${info.multiprocessorCount} SMs`);
const timer = new DeviceTimer(be.context, be.stream);

interface Case {
  name: string;
  batch: number;
  input: number;
  hidden: number;
  steps: number;
  layers: number;
  proof: boolean;
}
const cases: Case[] = [
  { name: 'b32_in128_h256_T10', batch: 32, input: 128, hidden: 256, steps: 10, layers: 1, proof: true },
  { name: 'b32_in128_h256_T10_L2', batch: 32, input: 128, hidden: 256, steps: 10, layers: 2, proof: true },
  { name: 'b256_in256_h512_T20', batch: 256, input: 256, hidden: 512, steps: 20, layers: 1, proof: true },
  { name: 'b256_in512_h1024_T100', batch: 256, input: 512, hidden: 1024, steps: 100, layers: 1, proof: true },
  { name: 'b64_in1024_h1024_T512', batch: 64, input: 1024, hidden: 1024, steps: 512, layers: 1, proof: false },
];

/** Floor of one call: flops at the unit's rate vs bytes at the memory rate (H200 figures of DESIGN.md). */
function floorUs(c: Case, tf32: boolean): number {
  let flops = 0;
  let bytes = 4 * c.batch * c.steps * (c.input + c.hidden * c.layers);
  for (let l = 0; l < c.layers; l++) {
    const input = l === 0 ? c.input : c.hidden;
    flops += 2 * c.batch * c.steps * 3 * c.hidden * (input + c.hidden);
    bytes += 4 * 3 * c.hidden * (input + c.hidden);
  }
  const rate = tf32 ? 396e12 : 51e12;
  return Math.max(flops / rate, bytes / 4.2e12) * 1e6;
}

const dir = mkdtempSync(join(tmpdir(), 'gru-bench-'));
const built = cases.map((c, ci) => {
  const std = 1 / Math.sqrt(c.hidden);
  const layers: GruLayerWeights[] = [];
  for (let l = 0; l < c.layers; l++) {
    const input = l === 0 ? c.input : c.hidden;
    const seed = 1000 * ci + 10 * l;
    layers.push({
      wIh: gpu.randn([3 * c.hidden, input], { seed, std }),
      wHh: gpu.randn([3 * c.hidden, c.hidden], { seed: seed + 1, std }),
      bIh: gpu.randn([3 * c.hidden], { seed: seed + 2, std }),
      bHh: gpu.randn([3 * c.hidden], { seed: seed + 3, std }),
    });
  }
  const x = gpu.randn([c.batch, c.steps, c.input], { seed: 1000 * ci + 500 });
  const h0 = gpu.randn(c.layers === 1 ? [c.batch, c.hidden] : [c.layers, c.batch, c.hidden], { seed: 1000 * ci + 501, std: 0.5 });
  if (c.proof) {
    const save = (t: Tensor, suffix: string) => writeFileSync(join(dir, `${c.name}.${suffix}`), t.toArraySync() as Float32Array);
    save(x, 'x');
    save(h0, 'h0');
    layers.forEach((w, l) => {
      save(w.wIh, `l${l}.wih`);
      save(w.wHh, `l${l}.whh`);
      save(w.bIh!, `l${l}.bih`);
      save(w.bHh!, `l${l}.bhh`);
    });
  }
  return { c, layers, x, h0 };
});
writeFileSync(join(dir, 'cases.json'), JSON.stringify(cases));
const anchor = runPython(join(here, 'anchors', 'gru.py'), [dir], 200_000) as Record<string, { f32_us: number; tf32_us: number }> | undefined;

const run = (b: (typeof built)[number], precision: 'highest' | 'tf32', path: GruPath) =>
  gpu.gru(b.x, b.h0, b.c.layers === 1 ? b.layers[0]! : b.layers, { precision, path });
/** Whether a forced path applies to the case here (a 'sequence', 'fused' or 'persistent' request throws where not). */
const applies = (b: (typeof built)[number], path: GruPath) => {
  try {
    const r = run(b, 'highest', path);
    r.output.dispose();
    r.hidden.dispose();
    return true;
  } catch (err) {
    if (!(err instanceof InvalidArgumentError)) throw err;
    console.log(`${b.c.name}: ${err.message}`);
    return false;
  }
};
const maxAbs = (got: Float32Array, want: Float32Array) => {
  if (got.length !== want.length) throw new Error(`length ${got.length} vs ${want.length}`);
  let worst = 0;
  for (let i = 0; i < got.length; i++) {
    const d = Math.abs(got[i]! - want[i]!);
    if (!(d <= worst)) worst = d; // NaN wins
  }
  return worst;
};

const rows: BenchRow[] = [];
const proofLines: string[] = [];
let wrong = 0;
for (const b of built) {
  const { c } = b;
  const paths = (['auto', 'sequence', 'fused', 'steps', 'persistent'] as const).filter((path) => path === 'auto' || path === 'steps' || applies(b, path));
  for (const path of paths) {
    for (const precision of ['highest', 'tf32'] as const) {
      const mode = precision === 'tf32' ? 'tf32' : 'f32';
      if (c.proof && anchor) {
        const r = run(b, precision, path);
        const out = r.output.toArraySync() as Float32Array;
        const hn = r.hidden.toArraySync() as Float32Array;
        r.output.dispose();
        r.hidden.dispose();
        const torchOut = new Float32Array(readFileSync(join(dir, `${c.name}.torch_out`)).buffer.slice(0));
        const torchHn = new Float32Array(readFileSync(join(dir, `${c.name}.torch_hn`)).buffer.slice(0));
        const eOut = maxAbs(out, torchOut);
        const eHn = maxAbs(hn, torchHn);
        const bound = precision === 'tf32' ? 5e-2 : 1e-4;
        const ok = eOut <= bound && eHn <= bound;
        if (!ok) wrong++;
        proofLines.push(`${ok ? 'ok  ' : 'FAIL'} ${c.name} ${mode} path=${path}: max|ours − torch(f32)| output ${eOut.toExponential(2)}, h_n ${eHn.toExponential(2)}`);
      }
      const us = timer.time(() => {
        const r = run(b, precision, path);
        r.output.dispose();
        r.hidden.dispose();
      }, { warmup: 3, targetMs: 60, reps: 5 });
      const torchUs = anchor?.[c.name]?.[`${mode}_us`];
      rows.push({
        op: `gru ${c.name}`,
        dtype: `${mode} ${path}`,
        size: c.name,
        unit: 'us',
        ours: us,
        ...(torchUs === undefined ? {} : { anchor: torchUs, anchorName: `torch.nn.GRU cuDNN (${mode === 'f32' ? 'TF32 off' : 'TF32 on'})` }),
        note: `floor ${floorUs(c, precision === 'tf32').toFixed(1)} us`,
      });
    }
  }
}
rmSync(dir, { recursive: true, force: true });
writeReport('gru', rows, { meta: { device: info.deviceName } });
console.log('\nproof (identical weights, torch strict f32):');
for (const line of proofLines) console.log(line);
console.log('\nsummary (ours / torch, below 1 is faster):');
for (const r of rows) {
  const ratio = r.anchor ? (r.ours / r.anchor).toFixed(2) : '-';
  console.log(`${r.op.padEnd(34)} ${r.dtype.padEnd(16)} ours ${r.ours.toFixed(1).padStart(9)} us  torch ${r.anchor?.toFixed(1).padStart(9) ?? '        -'} us  ratio ${ratio}  (${r.note})`);
}
gpu.dispose();
process.exit(wrong === 0 ? 0 : 1);
