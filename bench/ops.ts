/**
 * GpuCompute op benchmark on CUDA: achieved GB/s (bytes read + written) per op
 * and size, next to PyTorch timed in the same run (`bench/anchors/ops.py`, CUDA
 * events, median of several repetitions after a warm-up) and the device copy
 * roof: cuMemcpyDtoD moving as many bytes as the op (half read, half written),
 * timed in the same run, so fixed launch and tail costs weigh alike on both
 * (a full sum reads 4 bytes per element, a copy of as many elements moves 8).
 * Every case is checked against
 * a float64 reference on a sample of its output before it is timed. Also: the
 * pool's alloc+free of a cached block against CuPy's pool, for both pool
 * strategies, and the host → device write paths.
 *
 * Run: `tsx bench/ops.ts [key-prefix...]` on a machine with a CUDA GPU (python3
 * with torch and cupy for the anchors); prefixes such as `softmax|f32` keep the
 * cases whose key starts with one of them. Writes bench/results/ops.{json,svg}.
 */
import { performance } from 'node:perf_hooks';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ReducePlan } from '../src/compute/core/reduce-plan.js';
import { planBroadcast } from '../src/compute/core/broadcast.js';
import { createCudaBackend, type CudaBackend } from '../src/compute/cuda/cuda-backend.js';
import { dtypeSize, fromBf16Array, fromF16Array, type DType } from '../src/compute/core/dtype.js';
import { GpuCompute } from '../src/compute/gpu-compute.js';
import type { Tensor } from '../src/compute/tensor/tensor.js';
import { PinnedBuffer } from '../src/driver/pinned-buffer.js';
import { memcpyHtoDAsync } from '../src/driver/raw/memory.js';
import { median, runPython, writeReport, type BenchRow } from './report.js';
import { DeviceTimer } from './device-timer.js';

const here = dirname(fileURLToPath(import.meta.url));
const gpu = await GpuCompute.create({ backend: 'cuda', logLevel: 'warn' });
const be = gpu.backend as CudaBackend;
const device = be.info();
console.log(`device: ${device.deviceName} (${device.platform}), ${device.multiprocessorCount} SMs`);

// ------------------------------------------------------------------ timing

const timer = new DeviceTimer(be.context, be.stream);
/** Median µs per call of `fn` on the backend's stream. */
const timeDevice = (fn: () => void) => timer.time(fn, { warmup: 3, targetMs: 20, reps: 7 });

/** Median µs per call of a host-side `fn` (best of the JIT's steady state). */
function timeHost(fn: () => void, iters: number, reps = 5): number {
  for (let i = 0; i < 10_000; i++) fn();
  const samples: number[] = [];
  for (let r = 0; r < reps; r++) {
    const t = performance.now();
    for (let i = 0; i < iters; i++) fn();
    samples.push(((performance.now() - t) * 1000) / iters);
  }
  return median(samples);
}

const gbps = (bytes: number, us: number) => bytes / us / 1e3;

// ------------------------------------------------------------------ checks

/** The first `n` values of a tensor, widened to f32 (or i32), as stored. */
function readValues(t: Tensor, n = t.size): Float32Array | Int32Array {
  const count = Math.min(n, t.size);
  if (t.dtype === 'f32' || t.dtype === 'i32') {
    const out = t.dtype === 'f32' ? new Float32Array(count) : new Int32Array(count);
    be.read(t.view.buffer, out, 0);
    return out;
  }
  const raw = new Uint16Array(count);
  be.read(t.view.buffer, raw, 0);
  return t.dtype === 'f16' ? fromF16Array(raw) : fromBf16Array(raw);
}

/** The first `n` values as plain numbers (for references computed in float64). */
function prefix(t: Tensor, n: number): number[] {
  return Array.from(readValues(t, n));
}

/** Norm-wise relative error of `got` against `ref`. */
function relError(got: readonly number[], ref: readonly number[]): number {
  let d = 0;
  let r = 0;
  for (let i = 0; i < ref.length; i++) {
    d += (got[i]! - ref[i]!) ** 2;
    r += ref[i]! ** 2;
  }
  return Math.sqrt(d / r);
}

const TOLERANCE: Record<DType, number> = { f32: 1e-5, f16: 1e-3, bf16: 8e-3, i32: 0 };

// ------------------------------------------------------------------ cases

interface Prepared {
  run(): void;
  /** Error of a sample of the output against float64 (must be within the dtype's tolerance). */
  check(): number;
  dispose(): void;
}

interface Case {
  key: string;
  op: string;
  dtype: DType;
  shape: number[];
  /** Bytes read + written per call. */
  bytes: number;
  size: number | string;
  prepare(): Prepared;
}

const seed = () => Math.floor(Math.random() * 2 ** 31);
const randn = (shape: number[], dtype: DType) => gpu.randn(shape, { dtype, seed: seed() });
const elems = (shape: number[]) => shape.reduce((p, d) => p * d, 1);

function elementwiseCase(op: 'add' | 'mul_row' | 'exp' | 'gelu' | 'relu' | 'copy', dtype: DType, shape: number[]): Case {
  const n = elems(shape);
  const size = dtypeSize[dtype];
  const inputs = op === 'add' ? 2 : 1;
  const bytes = n * size * (inputs + 1) + (op === 'mul_row' ? shape[1]! * size : 0);
  return {
    key: `${op}|${dtype}|${shape.join('x')}`,
    op,
    dtype,
    shape,
    bytes,
    size: n,
    prepare() {
      const a = randn(shape, dtype);
      const b = op === 'add' ? randn(shape, dtype) : op === 'mul_row' ? randn([shape[1]!], dtype) : undefined;
      const c = gpu.empty(shape, dtype);
      const plan = b ? planBroadcast(op, shape, b.shape) : undefined;
      const run = () => {
        switch (op) {
          case 'add':
            return be.binary('add', a.view, b!.view, c.view, plan!);
          case 'mul_row':
            return be.binary('mul', a.view, b!.view, c.view, plan!);
          case 'copy':
            return be.copy(c.view, a.view);
          default:
            return be.unary(op, a.view, c.view);
        }
      };
      const f: Record<typeof op, (x: number, y: number) => number> = {
        add: (x, y) => x + y,
        mul_row: (x, y) => x * y,
        copy: (x) => x,
        exp: Math.exp,
        relu: (x) => Math.max(x, 0),
        gelu: (x) => 0.5 * x * (1 + erf(x / Math.SQRT2)),
      };
      return {
        run,
        check() {
          run();
          const k = Math.min(n, op === 'mul_row' ? shape[1]! : 4096);
          const ha = prefix(a, k);
          const hb = b ? prefix(b, k) : [];
          return relError(prefix(c, k), ha.map((x, i) => f[op](x, hb[i] ?? 0)));
        },
        dispose: () => [a, b, c].forEach((t) => t?.dispose()),
      };
    },
  };
}

/** erf to ~1e-15: the Maclaurin series below 3, the Laplace continued fraction above. */
function erf(x: number): number {
  const ax = Math.abs(x);
  if (ax < 3) {
    let sum = 0;
    let term = ax;
    for (let k = 0; k < 60; k++) {
      sum += term / (2 * k + 1);
      term *= (-ax * ax) / (k + 1);
    }
    return Math.sign(x) * (2 / Math.sqrt(Math.PI)) * sum;
  }
  let t = ax;
  for (let k = 60; k >= 1; k--) t = ax + k / 2 / t;
  return Math.sign(x) * (1 - Math.exp(-ax * ax) / Math.sqrt(Math.PI) / t);
}

function rowCase(op: 'softmax' | 'log_softmax' | 'layer_norm', dtype: DType, rows: number, cols: number): Case {
  const size = dtypeSize[dtype];
  return {
    key: `${op}|${dtype}|${rows}x${cols}`,
    op,
    dtype,
    shape: [rows, cols],
    bytes: 2 * rows * cols * size + (op === 'layer_norm' ? 2 * cols * size : 0),
    size: `${rows}x${cols}`,
    prepare() {
      const x = randn([rows, cols], dtype);
      const w = op === 'layer_norm' ? randn([cols], dtype) : undefined;
      const b = op === 'layer_norm' ? randn([cols], dtype) : undefined;
      const y = gpu.empty([rows, cols], dtype);
      const run = () =>
        op === 'layer_norm'
          ? be.layerNorm(x.view, w!.view, b!.view, y.view, rows, cols, 1e-5)
          : be.softmax(x.view, y.view, rows, cols, op === 'log_softmax');
      return {
        run,
        check() {
          run();
          const row = prefix(x, cols);
          const got = prefix(y, cols);
          let ref: number[];
          if (op === 'layer_norm') {
            const hw = prefix(w!, cols);
            const hb = prefix(b!, cols);
            const mean = row.reduce((s, v) => s + v, 0) / cols;
            const variance = row.reduce((s, v) => s + (v - mean) ** 2, 0) / cols;
            ref = row.map((v, j) => ((v - mean) / Math.sqrt(variance + 1e-5)) * hw[j]! + hb[j]!);
          } else {
            const m = row.reduce((a, v) => (v > a ? v : a), -Infinity);
            const s = row.reduce((acc, v) => acc + Math.exp(v - m), 0);
            ref = row.map((v) => (op === 'log_softmax' ? v - m - Math.log(s) : Math.exp(v - m) / s));
          }
          return relError(got, ref);
        },
        dispose: () => [x, w, b, y].forEach((t) => t?.dispose()),
      };
    },
  };
}

function reduceCase(op: 'sum_all' | 'sum_rows' | 'sum_cols' | 'argmax_rows', dtype: DType, shape: number[]): Case {
  const n = elems(shape);
  const [rows, cols] = shape.length === 2 ? [shape[0]!, shape[1]!] : [1, n];
  const plan: ReducePlan =
    op === 'sum_all' ? { outer: 1, axisLen: n, inner: 1 } : op === 'sum_cols' ? { outer: 1, axisLen: rows, inner: cols } : { outer: rows, axisLen: cols, inner: 1 };
  const outCount = op === 'sum_all' ? 1 : op === 'sum_cols' ? cols : rows;
  const outDType: DType = op === 'argmax_rows' ? 'i32' : dtype;
  return {
    key: `${op}|${dtype}|${shape.join('x')}`,
    op,
    dtype,
    shape,
    bytes: n * dtypeSize[dtype] + outCount * dtypeSize[outDType],
    size: shape.length === 1 ? n : shape.join('x'),
    prepare() {
      const x = randn(shape, dtype);
      const out = gpu.empty([outCount], outDType);
      const run = () => be.reduce(op === 'argmax_rows' ? 'argmax' : 'sum', x.view, out.view, plan);
      return {
        run,
        check() {
          run();
          if (op === 'sum_all') {
            // Relative to Σ|x|: a sum of signed values may cancel to near zero.
            const all = readValues(x);
            let s = 0;
            let abs = 0;
            for (const v of all) {
              s += v;
              abs += Math.abs(v);
            }
            return Math.abs(prefix(out, 1)[0]! - s) / abs;
          }
          if (op === 'sum_cols') {
            const all = readValues(x);
            const ref = Array.from({ length: Math.min(cols, 64) }, (_, j) => {
              let s = 0;
              for (let r = 0; r < rows; r++) s += all[r * cols + j]!;
              return s;
            });
            return relError(prefix(out, ref.length), ref);
          }
          const row = prefix(x, cols);
          const got = prefix(out, 1)[0]!;
          return op === 'argmax_rows'
            ? got === row.indexOf(row.reduce((a, v) => (v > a ? v : a), -Infinity))
              ? 0
              : 1
            : Math.abs(got - row.reduce((s, v) => s + v, 0)) / row.reduce((s, v) => s + Math.abs(v), 0);
        },
        dispose: () => [x, out].forEach((t) => t.dispose()),
      };
    },
  };
}

function transposeCase(dtype: DType, rows: number, cols: number): Case {
  return {
    key: `transpose|${dtype}|${rows}x${cols}`,
    op: 'transpose',
    dtype,
    shape: [rows, cols],
    bytes: 2 * rows * cols * dtypeSize[dtype],
    size: `${rows}x${cols}`,
    prepare() {
      const x = randn([rows, cols], dtype);
      const y = gpu.empty([cols, rows], dtype);
      const run = () => be.transpose(x.view, y.view, 1, rows, cols);
      return {
        run,
        check() {
          run();
          const hx = readValues(x);
          const got = prefix(y, 4 * rows); // the first four columns of x
          return relError(
            got,
            got.map((_, i) => hx[(i % rows) * cols + Math.floor(i / rows)]!),
          );
        },
        dispose: () => [x, y].forEach((t) => t.dispose()),
      };
    },
  };
}

const POW = (k: number) => 2 ** k;
const cases: Case[] = [];
for (const k of [20, 22, 24, 26, 28]) cases.push(elementwiseCase('copy', 'f32', [POW(k)]));
for (const k of [20, 22, 24, 26, 28]) cases.push(elementwiseCase('add', 'f32', [POW(k)]));
for (const dtype of ['f16', 'bf16'] as const) for (const k of [24, 26]) cases.push(elementwiseCase('add', dtype, [POW(k)]));
for (const k of [24, 26]) cases.push(elementwiseCase('mul_row', 'f32', [POW(k - 12), POW(12)]));
for (const k of [24, 26]) cases.push(elementwiseCase('exp', 'f32', [POW(k)]));
cases.push(elementwiseCase('gelu', 'f32', [POW(24)]), elementwiseCase('relu', 'bf16', [POW(24)]));
for (const op of ['softmax', 'layer_norm'] as const) {
  for (const dtype of ['f32', 'bf16'] as const) {
    for (const cols of [1024, 4096, 8192, 16384, 32768]) cases.push(rowCase(op, dtype, POW(24) / cols, cols));
  }
}
// 2^24 f32 elements (64 MB) barely exceed the 50–60 MB L2 of an H100/H200, so softmax is also
// measured at 2^26 (256 MB per tensor): several times the L2, as a streaming op should be.
for (const dtype of ['f32', 'bf16'] as const) {
  for (const cols of [4096, 8192, 16384, 32768]) cases.push(rowCase('softmax', dtype, POW(26) / cols, cols));
}
cases.push(rowCase('log_softmax', 'f32', 4096, 4096));
// Past 32K columns: split over thread-block clusters on sm_90+, the looped kernel elsewhere.
for (const dtype of ['f32', 'bf16'] as const) cases.push(rowCase('softmax', dtype, 256, 65_536));
for (const k of [20, 22, 24, 26, 28]) cases.push(reduceCase('sum_all', 'f32', [POW(k)]));
cases.push(reduceCase('sum_all', 'bf16', [POW(26)]));
cases.push(reduceCase('sum_rows', 'f32', [4096, 4096]), reduceCase('sum_cols', 'f32', [4096, 4096]), reduceCase('argmax_rows', 'f32', [4096, 4096]));
cases.push(transposeCase('f32', 4096, 4096), transposeCase('f32', 8192, 8192), transposeCase('bf16', 8192, 8192));
const prefixes = process.argv.slice(2);
if (prefixes.length > 0) cases.splice(0, cases.length, ...cases.filter((c) => prefixes.some((p) => c.key.startsWith(p))));

// ------------------------------------------------------------------ ours

/** GB/s of cuMemcpyDtoD moving `bytes` (bytes/2 copied), memoised: the roof of an op that moves as many. */
const roofs = new Map<number, number>();
function copyRoof(bytes: number): number {
  let roof = roofs.get(bytes);
  if (roof === undefined) {
    const n = Math.max(1, Math.round(bytes / 8));
    const src = gpu.zeros([n]);
    const dst = gpu.empty([n]);
    roof = gbps(8 * n, timeDevice(() => be.copy(dst.view, src.view)));
    src.dispose();
    dst.dispose();
    roofs.set(bytes, roof);
  }
  return roof;
}

const oursUs = new Map<string, number>();
const failures: string[] = [];
for (const c of cases) {
  const prepared = c.prepare();
  const error = prepared.check();
  if (!(error <= Math.max(TOLERANCE[c.dtype], 1e-5))) failures.push(`${c.key}: error ${error.toExponential(2)}`);
  oursUs.set(c.key, timeDevice(prepared.run));
  prepared.dispose();
  copyRoof(c.bytes);
  console.log(`${c.key}: ${gbps(c.bytes, oursUs.get(c.key)!).toFixed(0)} GB/s (check error ${error.toExponential(1)})`);
}
gpu.trim();

// ------------------------------------------------------------------ pool, host side

const MiB = 2 ** 20;
const poolUs: Record<string, number> = {};
for (const strategy of ['best-fit', 'size-class'] as const) {
  const backend = strategy === 'best-fit' ? be : createCudaBackend({ poolStrategy: strategy });
  backend.free(backend.alloc(MiB));
  poolUs[strategy] = timeHost(() => backend.free(backend.alloc(MiB)), 200_000);
  if (backend !== be) backend.dispose();
}

// Host → device writes of 64 MiB: pageable through the driver's staging (what write() does)
// against an explicit pinned staging copy.
const writeBytes = 64 * MiB;
const host = new Float32Array(writeBytes / 4).map(() => Math.random());
const target = gpu.empty([writeBytes / 4]);
const pinned = PinnedBuffer.alloc(be.context, writeBytes);
const writeUs = {
  pageable: timeHost(() => {
    be.write(target.view.buffer, host);
    be.synchronize();
  }, 20, 5),
  pinned: timeHost(() => {
    pinned.bytes.set(new Uint8Array(host.buffer));
    memcpyHtoDAsync(be.address(target.view), pinned.address, writeBytes, be.stream.handle);
    be.synchronize();
  }, 20, 5),
  pinnedCopyOnly: timeHost(() => {
    memcpyHtoDAsync(be.address(target.view), pinned.address, writeBytes, be.stream.handle);
    be.synchronize();
  }, 20, 5),
};
pinned.dispose();
target.dispose();
gpu.trim();

// ------------------------------------------------------------------ anchors

interface AnchorResult {
  device: string;
  torch: string;
  cupy: string | null;
  us: Record<string, number>;
  host_us: Record<string, number>;
}
const anchorCases = cases.map(({ key, op, dtype, shape }) => ({ key, op, dtype, shape }));
const anchors = runPython(join(here, 'anchors', 'ops.py'), [JSON.stringify(anchorCases)], 600_000) as AnchorResult | undefined;

// ------------------------------------------------------------------ report

const rows: BenchRow[] = [];
for (const c of cases) {
  const ours = gbps(c.bytes, oursUs.get(c.key)!);
  const anchorUs = anchors?.us[c.key];
  rows.push({
    op: c.op === 'copy' ? 'copy (cuMemcpyDtoD)' : c.op,
    dtype: c.dtype,
    size: c.size,
    unit: 'GB/s',
    ours,
    ...(anchorUs ? { anchor: gbps(c.bytes, anchorUs), anchorName: c.op === 'copy' ? 'torch copy_' : 'torch' } : {}),
    roof: copyRoof(c.bytes),
  });
}
const cupyPool = anchors?.host_us.cupy_pool_1MiB;
for (const [strategy, us] of Object.entries(poolUs)) {
  rows.push({
    op: 'pool alloc+free 1 MiB',
    dtype: strategy,
    size: '1 MiB',
    unit: 'us',
    ours: us,
    ...(cupyPool ? { anchor: cupyPool, anchorName: 'CuPy pool' } : {}),
  });
}
if (anchors?.host_us.torch_empty_1MiB) {
  rows.push({ op: 'pool alloc+free 1 MiB', dtype: 'torch', size: '1 MiB', unit: 'us', ours: poolUs['best-fit']!, anchor: anchors.host_us.torch_empty_1MiB, anchorName: 'torch.empty' });
}
rows.push(
  { op: 'write 64 MiB', dtype: 'pageable (driver staging)', size: '64 MiB', unit: 'GB/s', ours: gbps(writeBytes, writeUs.pageable), note: 'what write() does' },
  { op: 'write 64 MiB', dtype: 'pinned staging + copy', size: '64 MiB', unit: 'GB/s', ours: gbps(writeBytes, writeUs.pinned) },
  { op: 'write 64 MiB', dtype: 'pinned copy only', size: '64 MiB', unit: 'GB/s', ours: gbps(writeBytes, writeUs.pinnedCopyOnly), note: 'data already pinned' },
);

writeReport('ops', rows, {
  meta: { device: device.deviceName, platform: device.platform, torch: anchors?.torch, cupy: anchors?.cupy, checkFailures: failures },
});

// ------------------------------------------------------------------ targets

const ratio = (key: string) => (anchors?.us[key] ? anchors.us[key]! / oursUs.get(key)! : NaN);
const ofRoof = (c: Case) => gbps(c.bytes, oursUs.get(c.key)!) / copyRoof(c.bytes);
const lines: string[] = [];
for (const c of cases) {
  const n = elems(c.shape);
  if ((c.op === 'add' || c.op === 'mul_row') && c.dtype === 'f32' && n >= POW(24)) {
    lines.push(`${c.key}: ${ratio(c.key).toFixed(2)}x torch (target ≥ 0.95), ${(100 * ofRoof(c)).toFixed(0)}% of copy roof (target ≥ 90%)`);
  }
  if (c.op === 'softmax' && c.shape[1]! >= 4096 && c.shape[1]! <= 32_768) lines.push(`${c.key}: ${ratio(c.key).toFixed(2)}x torch (target ≥ 1.5)`);
  if (c.op === 'layer_norm') lines.push(`${c.key}: ${ratio(c.key).toFixed(2)}x torch (target ≥ 1)`);
  if (c.op === 'sum_all') lines.push(`${c.key}: ${(100 * ofRoof(c)).toFixed(0)}% of copy roof (target ≥ 90%), ${ratio(c.key).toFixed(2)}x torch`);
}
if (cupyPool) lines.push(`pool alloc+free: best-fit ${poolUs['best-fit']!.toFixed(3)} µs, size-class ${poolUs['size-class']!.toFixed(3)} µs vs CuPy ${cupyPool.toFixed(3)} µs (target: faster)`);
console.log(`\n## targets\n\n${lines.map((l) => `- ${l}`).join('\n')}`);
if (failures.length > 0) console.log(`\nCHECK FAILURES:\n${failures.join('\n')}`);

gpu.dispose();
if (failures.length > 0) process.exitCode = 1;
