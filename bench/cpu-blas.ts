/**
 * CPU BLAS benchmark: sgemm through this library's binding (`Blas`, over koffi) at a tiny
 * product (32×128×64, the seed's linear layer), 1024³ and 2048³, on 1 and 2 threads; the
 * sgemv route for one-row products against plain sgemm; the per-call overhead of koffi and of
 * the checks; and NumPy (`bench/numpy_sgemm.py`) on the same shapes and thread counts in the
 * same run where python3 has numpy. Every product is checked against a float64 reference
 * (sampled elements) before it is timed. Prints markdown tables.
 *
 * Run: `tsx bench/cpu-blas.ts`. The figures are medians of batches of about 20 ms (best in
 * parentheses); on a shared machine, compare within one run.
 */
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cblas, CblasOrder, CblasTranspose } from '../src/blas/bindings.js';
import { Blas } from '../src/blas/blas.js';
import type { SgemmArgs } from '../src/blas/sgemm.js';
import { median, runPython } from './report.js';

const here = dirname(fileURLToPath(import.meta.url));
type Shape = readonly [m: number, n: number, k: number];
const SHAPES: Shape[] = [
  [32, 128, 64],
  [1024, 1024, 1024],
  [2048, 2048, 2048],
];
const THREADS = [1, 2];

interface Timing {
  medianUs: number;
  bestUs: number;
}

/** Runs `fn` in batches of about 20 ms after a warm-up; µs per call. */
function time(fn: () => void, batches = 9): Timing {
  fn();
  let t = performance.now();
  fn();
  const once = Math.max(performance.now() - t, 1e-4);
  const batch = Math.max(1, Math.round(20 / once));
  for (let i = 0; i < Math.min(batch, 1000); i++) fn();
  const samples: number[] = [];
  for (let s = 0; s < batches; s++) {
    t = performance.now();
    for (let i = 0; i < batch; i++) fn();
    samples.push(((performance.now() - t) * 1000) / batch);
  }
  return { medianUs: median(samples), bestUs: Math.min(...samples) };
}

/** Fresh inputs in a SharedArrayBuffer (as the CPU backend's tensors will be), at a byte offset. */
function randomShared(length: number): Float32Array {
  const array = new Float32Array(new SharedArrayBuffer(4 * length + 16), 16, length);
  for (let i = 0; i < length; i++) array[i] = Math.random() * 2 - 1;
  return array;
}

function product([m, n, k]: Shape): SgemmArgs & { c: Float32Array } {
  return { m, n, k, a: randomShared(m * k), b: randomShared(k * n), c: new Float32Array(new SharedArrayBuffer(4 * m * n)) };
}

/** Compares 64 sampled elements of C with a float64 reference. */
function verify(args: SgemmArgs, label: string): void {
  const { m, n, k, a, b, c } = args;
  for (let s = 0; s < 64; s++) {
    const i = Math.floor(Math.random() * m);
    const j = Math.floor(Math.random() * n);
    let sum = 0;
    let magnitude = 0;
    for (let l = 0; l < k; l++) {
      sum += a[i * k + l]! * b[l * n + j]!;
      magnitude += Math.abs(a[i * k + l]! * b[l * n + j]!);
    }
    if (Math.abs(c[i * n + j]! - sum) > 2 * (k + 3) * 2 ** -24 * magnitude) throw new Error(`${label}: C[${i}][${j}] = ${c[i * n + j]}, want ${sum}`);
  }
}

const shapeName = ([m, n, k]: Shape) => (m === n && n === k ? `${m}³` : `${m}×${n}×${k}`);
const gflops = ([m, n, k]: Shape, us: number) => (2 * m * n * k) / us / 1e3;
const figure = (shape: Shape, t: Timing | undefined) =>
  t ? `${gflops(shape, t.medianUs).toFixed(1)} (${gflops(shape, t.bestUs).toFixed(1)})` : '—';

const blas = Blas.open();
console.log(`BLAS: ${blas.vendor} ${blas.version ?? ''} at ${blas.path}; ${availableParallelism()} logical cores\n`);

// --- sgemm GFLOP/s, ours and NumPy's, per thread count.
const ours = new Map<string, Timing>();
const numpy = new Map<string, Timing>();
let numpyName: string | undefined;
for (const threads of THREADS) {
  blas.setThreads(threads);
  for (const shape of SHAPES) {
    const args = product(shape);
    blas.sgemm(args);
    verify(args, `sgemm ${shapeName(shape)}`);
    ours.set(`${shape}/${threads}`, time(() => blas.sgemm(args), shape[0] >= 1024 ? 5 : 9));
  }
  // NumPy's OpenBLAS reads its thread count from the environment at start.
  for (const name of ['OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS']) process.env[name] = String(threads);
  const result = runPython(join(here, 'numpy_sgemm.py'), [JSON.stringify(SHAPES)], 600_000) as
    | { numpy: string; blas: string; results: ({ shape: number[] } & Timing)[] }
    | undefined;
  if (result) {
    numpyName = `NumPy ${result.numpy} (${result.blas})`;
    for (const r of result.results) numpy.set(`${r.shape}/${threads}`, r);
  }
}
console.log(`sgemm GFLOP/s, median of batches (best); NumPy: ${numpyName ?? 'not available'}\n`);
console.log('| shape | threads | ours | NumPy | ours / NumPy (median) |');
console.log('|---|---|---|---|---|');
for (const shape of SHAPES) {
  for (const threads of THREADS) {
    const o = ours.get(`${shape}/${threads}`)!;
    const np = numpy.get(`${shape}/${threads}`);
    const ratio = np ? (np.medianUs / o.medianUs).toFixed(2) : '—';
    console.log(`| ${shapeName(shape)} | ${threads} | ${figure(shape, o)} | ${figure(shape, np)} | ${ratio} |`);
  }
}

// --- One-row and one-column products: the sgemv route against plain sgemm.
blas.setThreads(THREADS.at(-1)!);
const { ROW_MAJOR } = CblasOrder;
const { NO_TRANS } = CblasTranspose;
console.log(`\nVector shapes, ${THREADS.at(-1)} threads: µs per call, median (best)\n`);
console.log('| shape | Blas.sgemm (sgemv route) | cblas_sgemm | speed-up |');
console.log('|---|---|---|---|');
for (const shape of [[1, 256, 1024], [1, 1024, 1024], [1024, 1, 1024]] as Shape[]) {
  const args = product(shape);
  const { m, n, k, a, b, c } = args;
  blas.sgemm(args);
  verify(args, `sgemv route ${shapeName(shape)}`);
  const routed = time(() => blas.sgemm(args));
  const plain = time(() => cblas.cblas_sgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, m, n, k, 1, a, k, b, n, 0, c, n));
  verify(args, `cblas_sgemm ${shapeName(shape)}`);
  const us = (t: Timing) => `${t.medianUs.toFixed(2)} (${t.bestUs.toFixed(2)})`;
  console.log(`| ${shapeName(shape)} | ${us(routed)} | ${us(plain)} | ${(plain.medianUs / routed.medianUs).toFixed(1)}x |`);
}

// --- Per-call overhead. Arguments as fresh object literals, as a caller builds them per call.
const { a, b, c } = product([2, 2, 2]);
const shifted = randomShared(5);
const rows: [string, Timing][] = [
  ["cblas_sgemm, m = n = k = 0 (koffi and the library's early return)", time(() => cblas.cblas_sgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, 0, 0, 0, 1, a, 1, b, 1, 0, c, 1))],
  ['Blas.sgemm, m = 0 (the checks alone, no native call)', time(() => blas.sgemm({ m: 0, n: 2, k: 2, a, b, c }))],
  ['cblas_sgemm 2×2×2', time(() => cblas.cblas_sgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2))],
  ['Blas.sgemm 2×2×2', time(() => blas.sgemm({ m: 2, n: 2, k: 2, a, b, c }))],
  [
    'Blas.sgemm 2×2×2, every argument given',
    time(() => blas.sgemm({ transA: false, transB: false, m: 2, n: 2, k: 2, alpha: 1, a, lda: 2, aOffset: 0, b, ldb: 2, beta: 0, c, ldc: 2 })),
  ],
  ['Blas.sgemm 2×2×2, aOffset 1 (a subarray view per call)', time(() => blas.sgemm({ m: 2, n: 2, k: 2, a: shifted, aOffset: 1, b, c }))],
];
console.log(`\nPer-call cost, ${THREADS.at(-1)} threads: µs, median (best)\n`);
console.log('| call | µs |');
console.log('|---|---|');
for (const [name, t] of rows) console.log(`| ${name} | ${t.medianUs.toFixed(3)} (${t.bestUs.toFixed(3)}) |`);
