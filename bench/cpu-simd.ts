/**
 * The CPU backend's WebAssembly SIMD kernels (src/compute/cpu/simd) against numpy, timed in the
 * same run: sgemm GFLOP/s (32×128×64, 1024, 2048; 1 and 2 threads; relaxed-SIMD and plain builds),
 * elementwise add, exp, softmax, layerNorm and sums in GB/s (bytes read + written), the worker
 * hand-off, and the tables the size thresholds (src/compute/cpu/simd/thresholds.ts) come from.
 * Every timed op is checked against a float64 reference on a sample first; inputs are fresh
 * random values. Times are medians of 7 repetitions (each long enough for the clock), after a
 * warm-up that lets V8 tier the kernels up from Liftoff.
 *
 * Run: `npx tsx bench/cpu-simd.ts` (python3 with numpy for the anchors; they are skipped without).
 * On a shared machine, run it twice and compare: only ratios from one run hold.
 */
import { spawnSync } from 'node:child_process';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { planReduction } from '../src/compute/core/reduce-plan.js';
import { planBroadcast } from '../src/compute/core/broadcast.js';
import { attention } from '../src/compute/cpu/simd/attention.js';
import { binary, unary } from '../src/compute/cpu/simd/elementwise.js';
import { gemm } from '../src/compute/cpu/simd/matmul.js';
import { reduce } from '../src/compute/cpu/simd/reduce.js';
import { layerNorm, softmax } from '../src/compute/cpu/simd/rows.js';
import { SimdRuntime } from '../src/compute/cpu/simd/runtime.js';
import { THRESHOLDS } from '../src/compute/cpu/simd/thresholds.js';
import { relaxedSimdSupported, type SimdVariant } from '../src/compute/cpu/simd/wasm-module.js';
import { median } from './report.js';

const THREADS = Math.min(2, availableParallelism());
const VARIANTS: SimdVariant[] = relaxedSimdSupported() ? ['relaxed-simd', 'simd128'] : ['simd128'];

// ------------------------------------------------------------------ numpy anchors

const NUMPY = `
import json, statistics, sys, time
import numpy as np

def per_call(fn, min_s=0.03, reps=7):
    t = time.perf_counter(); fn(); fn(); fn()
    once = max((time.perf_counter() - t) / 3, 1e-7)
    iters = max(1, int(min_s / once))
    samples = []
    for _ in range(reps):
        t = time.perf_counter()
        for _ in range(iters):
            fn()
        samples.append((time.perf_counter() - t) / iters)
    return statistics.median(samples)

rng = np.random.default_rng()
out = {"numpy": np.__version__}
gemm = {}
for m, k, n in json.loads(sys.argv[1]):
    a = rng.standard_normal((m, k), dtype=np.float32); b = rng.standard_normal((k, n), dtype=np.float32)
    c = np.empty((m, n), dtype=np.float32)
    gemm[f"{m}x{k}x{n}"] = 2.0 * m * n * k / per_call(lambda: np.matmul(a, b, out=c)) / 1e9
out["gemm"] = gemm
if sys.argv[2] == "all":
    n = 1 << 24
    a = rng.standard_normal(n, dtype=np.float32); b = rng.standard_normal(n, dtype=np.float32); c = np.empty_like(a)
    out["add"] = 12 * n / per_call(lambda: np.add(a, b, out=c)) / 1e9
    out["add_alloc"] = 12 * n / per_call(lambda: a + b) / 1e9
    out["exp"] = 8 * n / per_call(lambda: np.exp(a, out=c)) / 1e9
    x = a.reshape(4096, 4096); y = c.reshape(4096, 4096)
    def softmax():
        np.subtract(x, x.max(axis=1, keepdims=True), out=y); np.exp(y, out=y); np.divide(y, y.sum(axis=1, keepdims=True), out=y)
    out["softmax"] = 8 * n / per_call(softmax) / 1e9
    def layer_norm():
        np.subtract(x, x.mean(axis=1, keepdims=True), out=y); np.divide(y, np.sqrt((y * y).mean(axis=1, keepdims=True) + 1e-5), out=y)
    out["layerNorm"] = 8 * n / per_call(layer_norm) / 1e9
    out["sum_all"] = 4 * n / per_call(lambda: a.sum()) / 1e9
    out["sum_rows"] = 4 * n / per_call(lambda: x.sum(axis=1)) / 1e9
    out["sum_cols"] = 4 * n / per_call(lambda: x.sum(axis=0)) / 1e9
print(json.dumps(out))
`;

interface NumpyResult {
  numpy: string;
  gemm: Record<string, number>;
  add?: number;
  add_alloc?: number;
  exp?: number;
  softmax?: number;
  layerNorm?: number;
  sum_all?: number;
  sum_rows?: number;
  sum_cols?: number;
}

/** numpy's figures; `threads` sets OpenBLAS's pool (undefined: its default). */
function numpy(gemmShapes: number[][], all: boolean, threads?: number): NumpyResult | undefined {
  const python = process.env.GPUCOMPUTE_PYTHON || 'python3';
  const env = { ...process.env, ...(threads ? { OPENBLAS_NUM_THREADS: String(threads), OMP_NUM_THREADS: String(threads) } : {}) };
  const run = spawnSync(python, ['-c', NUMPY, JSON.stringify(gemmShapes), all ? 'all' : 'gemm'], { encoding: 'utf8', env, timeout: 600_000 });
  if (run.status !== 0) {
    console.log(`note: numpy anchor skipped: ${run.error?.message ?? run.stderr.trim().split('\n').pop()}`);
    return undefined;
  }
  return JSON.parse(run.stdout.trim().split('\n').pop()!) as NumpyResult;
}

// ------------------------------------------------------------------ timing and data

/** Median µs per call of `fn`, after a warm-up of at least `warmMs`. */
function time(fn: () => void, warmMs = 150, repMs = 30, reps = 7): number {
  const start = performance.now();
  let calls = 0;
  while (performance.now() - start < warmMs || calls < 3) {
    fn();
    calls++;
  }
  const once = (performance.now() - start) / calls;
  const iters = Math.max(1, Math.round(repMs / once));
  const samples: number[] = [];
  for (let r = 0; r < reps; r++) {
    const t = performance.now();
    for (let i = 0; i < iters; i++) fn();
    samples.push(((performance.now() - t) * 1000) / iters);
  }
  return median(samples);
}

/** `fn` and then a wait for the jobs it queued: an op's time is until its result is there. */
function settled(rt: SimdRuntime, fn: () => void): () => void {
  return () => {
    fn();
    rt.settle();
  };
}

/** n fresh standard normals as f32, written at a new address of `rt`. */
function randomF32(rt: SimdRuntime, n: number): number {
  const at = Number(rt.heap.allocate(n * 4));
  const f = rt.f32;
  for (let i = 0; i < n; i += 2) {
    const r = Math.sqrt(-2 * Math.log(Math.random() + 1e-12));
    const t = 2 * Math.PI * Math.random();
    f[at / 4 + i] = r * Math.cos(t);
    if (i + 1 < n) f[at / 4 + i + 1] = r * Math.sin(t);
  }
  return at;
}

function check(what: string, ok: boolean): void {
  if (!ok) throw new Error(`bench: ${what} is wrong; not timing it`);
}

const fmt = (v: number | undefined, digits = 1) => (v === undefined || !Number.isFinite(v) ? '—' : v.toFixed(digits));
const ratio = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? '—' : `${(a / b).toFixed(2)}x`);

function table(title: string, head: string[], rows: (string | number)[][]): void {
  console.log(`\n### ${title}\n`);
  console.log(`| ${head.join(' | ')} |`);
  console.log(`|${head.map(() => '---').join('|')}|`);
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
}

// ------------------------------------------------------------------ sgemm

const GEMM_SHAPES = [[32, 128, 64], [1024, 1024, 1024], [2048, 2048, 2048]];

function gemmRate(rt: SimdRuntime, [m, k, n]: number[]): number {
  const a = randomF32(rt, m! * k!);
  const b = randomF32(rt, k! * n!);
  const out = Number(rt.heap.allocate(m! * n! * 4));
  const run = settled(rt, () =>
    gemm(rt, { a, aType: 'f32', b, bType: 'f32', out, outType: 'f32', m: m!, n: n!, k: k!, batch: 1, transA: false, transB: false, alpha: 1, beta: 0, aBatchStride: 0, bBatchStride: 0, cBatchStride: 0 }));
  run();
  const f = rt.f32;
  for (let s = 0; s < 16; s++) {
    const i = Math.floor(Math.random() * m!);
    const j = Math.floor(Math.random() * n!);
    let ref = 0;
    for (let p = 0; p < k!; p++) ref += f[a / 4 + i * k! + p]! * f[b / 4 + p * n! + j]!;
    check(`sgemm ${m}x${k}x${n}`, Math.abs(f[out / 4 + i * n! + j]! - ref) <= 1e-4 * Math.sqrt(k!) + 1e-5 * Math.abs(ref));
  }
  return (2 * m! * n! * k!) / time(run, 300) / 1e3;
}

// ------------------------------------------------------------------ memory-bound ops

const N = 1 << 24;

interface StreamOps {
  add: number;
  exp: number;
  softmax: number;
  layerNorm: number;
  sumAll: number;
  sumRows: number;
  sumCols: number;
}

function streamRates(rt: SimdRuntime): StreamOps {
  const x = randomF32(rt, N);
  const y = randomF32(rt, N);
  const out = Number(rt.heap.allocate(N * 4));
  const f = rt.f32;
  const sample = (k: number) => Math.floor((k * 7919 * 131) % N);
  const gbps = (bytes: number, us: number) => bytes / us / 1e3;

  const same = planBroadcast('add', [N], [N]);
  binary(rt, 'add', 'f32', x, y, out, same);
  rt.settle();
  for (let k = 0; k < 64; k++) check('add', f[out / 4 + sample(k)] === Math.fround(f[x / 4 + sample(k)]! + f[y / 4 + sample(k)]!));
  const add = gbps(12 * N, time(settled(rt, () => binary(rt, 'add', 'f32', x, y, out, same))));

  unary(rt, 'exp', 'f32', x, out, N);
  rt.settle();
  for (let k = 0; k < 64; k++) check('exp', Math.abs(f[out / 4 + sample(k)]! / Math.exp(f[x / 4 + sample(k)]!) - 1) < 1e-6);
  const exp = gbps(8 * N, time(settled(rt, () => unary(rt, 'exp', 'f32', x, out, N))));

  const rows = 4096;
  const cols = N / rows;
  softmax(rt, 'f32', x, out, rows, cols, false);
  rt.settle();
  for (const r of [0, 1234, 4095]) {
    let m = -Infinity;
    for (let j = 0; j < cols; j++) m = Math.max(m, f[x / 4 + r * cols + j]!);
    let s = 0;
    for (let j = 0; j < cols; j++) s += Math.exp(f[x / 4 + r * cols + j]! - m);
    check('softmax', Math.abs(f[out / 4 + r * cols + 7]! * s / Math.exp(f[x / 4 + r * cols + 7]! - m) - 1) < 1e-5);
  }
  const sm = gbps(8 * N, time(settled(rt, () => softmax(rt, 'f32', x, out, rows, cols, false))));

  layerNorm(rt, 'f32', x, undefined, undefined, out, rows, cols, 1e-5);
  rt.settle();
  let mean = 0;
  for (let j = 0; j < cols; j++) mean += f[x / 4 + j]!;
  mean /= cols;
  let v = 0;
  for (let j = 0; j < cols; j++) v += (f[x / 4 + j]! - mean) ** 2;
  check('layerNorm', Math.abs(f[out / 4 + 5]! - (f[x / 4 + 5]! - mean) / Math.sqrt(v / cols + 1e-5)) < 1e-5);
  const ln = gbps(8 * N, time(settled(rt, () => layerNorm(rt, 'f32', x, undefined, undefined, out, rows, cols, 1e-5))));

  const sums: number[] = [];
  for (const [shape, axis] of [[[N], undefined], [[rows, cols], 1], [[rows, cols], 0]] as const) {
    const { plan } = planReduction(shape, axis, false);
    reduce(rt, 'sum', 'f32', x, out, plan);
    rt.settle();
    let ref = 0;
    if (axis === undefined) for (let i = 0; i < N; i++) ref += f[x / 4 + i]!;
    else if (axis === 1) for (let j = 0; j < cols; j++) ref += f[x / 4 + j]!;
    else for (let i = 0; i < rows; i++) ref += f[x / 4 + i * cols]!;
    check(`sum axis ${axis}`, Math.abs(f[out / 4]! - Math.fround(ref)) <= 1e-6 * Math.abs(ref) + 1e-6);
    sums.push(gbps(4 * N, time(settled(rt, () => reduce(rt, 'sum', 'f32', x, out, plan)))));
  }
  return { add, exp, softmax: sm, layerNorm: ln, sumAll: sums[0]!, sumRows: sums[1]!, sumCols: sums[2]! };
}

// ------------------------------------------------------------------ hand-off and thresholds

/**
 * When a worker starts on a job: a split into two equal compute-bound parts of ~0.4 ms (exp over
 * data in cache), back to back (the worker spins) and after 5 ms of idle (it sleeps in
 * Atomics.wait): the split's time minus one part's time. A worker later than the caller's own
 * part loses its part to the caller (the split then takes two parts).
 */
function wake(rt: SimdRuntime): { warm: number; cold: number; part: number } {
  const n = 600_000;
  const a = randomF32(rt, n);
  const b = randomF32(rt, n);
  const out = Number(rt.heap.allocate(2 * n * 4));
  const exp = 2; // UNARY_CODE.exp
  const one = [[exp, 0, a, out, n, 0]];
  const two = [[exp, 0, a, out, n, 0], [exp, 0, b, out + n * 4, n, 0]];
  const part = time(settled(rt, () => rt.run('unary', one)), 100, 10, 9);
  const warm = time(settled(rt, () => rt.run('unary', two)), 100, 10, 9);
  const cold: number[] = [];
  for (let i = 0; i < 21; i++) {
    const until = performance.now() + 5;
    while (performance.now() < until);
    const t = performance.now();
    rt.run('unary', two);
    rt.settle();
    cold.push((performance.now() - t) * 1000);
  }
  return { warm: warm - part, cold: median(cold) - part, part };
}

/** µs per call at each size on 1 thread and split over THREADS (workers warm: calls come back to back). */
function crossover(one: SimdRuntime, many: SimdRuntime, sizes: number[], op: (rt: SimdRuntime, size: number) => () => void): (string | number)[][] {
  return sizes.map((size) => {
    const t1 = time(settled(one, op(one, size)), 60, 10, 5);
    const tn = time(settled(many, op(many, size)), 60, 10, 5);
    return [size, fmt(t1, 2), fmt(tn, 2), `${(t1 / tn).toFixed(2)}x`];
  });
}

// ------------------------------------------------------------------ main

const cpu = cpus()[0]?.model.trim() ?? process.arch;
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
console.log(`# CPU SIMD kernels: ${cpu}, ${availableParallelism()} threads, Node ${process.versions.node}`);
console.log(`builds: ${VARIANTS.join(', ')}; medians of 7; numpy in the same run; load average at start ${load()}`);

const np1 = numpy(GEMM_SHAPES, false, 1);
const npAll = numpy(GEMM_SHAPES, true);
console.log(`numpy ${npAll?.numpy ?? '(absent)'}`);

const gemmRows: (string | number)[][] = [];
for (const variant of VARIANTS) {
  for (const threads of [1, THREADS]) {
    const rt = new SimdRuntime({ threads, variant });
    for (const shape of GEMM_SHAPES) {
      const key = shape.join('x');
      const ours = gemmRate(rt, shape);
      const anchor = threads === 1 ? np1?.gemm[key] : npAll?.gemm[key];
      gemmRows.push([key, variant, threads, fmt(ours), fmt(anchor), ratio(ours, anchor)]);
    }
    await rt.dispose();
  }
}
table('sgemm (f32), GFLOP/s', ['M×K×N', 'build', 'threads', 'ours', `numpy (same threads)`, 'ratio'], gemmRows);

const streamRows: (string | number)[][] = [];
const byThreads = new Map<number, StreamOps>();
for (const threads of [1, THREADS]) {
  const rt = new SimdRuntime({ threads, variant: VARIANTS[0]! });
  byThreads.set(threads, streamRates(rt));
  await rt.dispose();
}
const addAnchor = npAll?.add;
const addAllocAnchor = npAll?.add_alloc;
const streamed: [string, keyof StreamOps, string, number | undefined][] = [
  ['add 2^24', 'add', '12 B/elem', npAll?.add],
  ['exp 2^24', 'exp', '8 B/elem', npAll?.exp],
  ['softmax 4096×4096', 'softmax', '8 B/elem', npAll?.softmax],
  ['layerNorm 4096×4096', 'layerNorm', '8 B/elem', npAll?.layerNorm],
  ['sum 2^24 (all)', 'sumAll', '4 B/elem', npAll?.sum_all],
  ['sum 4096×4096 axis 1', 'sumRows', '4 B/elem', npAll?.sum_rows],
  ['sum 4096×4096 axis 0', 'sumCols', '4 B/elem', npAll?.sum_cols],
];
for (const [name, key, bytes, anchor] of streamed) {
  const one = byThreads.get(1)![key];
  const many = byThreads.get(THREADS)![key];
  streamRows.push([name, bytes, fmt(one), fmt(many), fmt(anchor), ratio(many, anchor), ratio(many, addAnchor), ratio(many, addAllocAnchor)]);
}
table(
  `memory-bound ops (f32, ${VARIANTS[0]}), GB/s; numpy add ${fmt(addAnchor)} with out=, ${fmt(addAllocAnchor)} as a + b (allocating)`,
  ['op', 'traffic', '1 thread', `${THREADS} threads`, 'numpy same op', 'vs numpy op', 'vs np.add(out=)', 'vs a + b'],
  streamRows,
);

if (THREADS > 1) {
  const one = new SimdRuntime({ threads: 1, variant: VARIANTS[0]! });
  // Thresholds of 1: every op splits, so the tables show where splitting starts to pay.
  const always = Object.fromEntries(Object.keys(THRESHOLDS).map((k) => [k, 1]));
  const many = new SimdRuntime({ threads: THREADS, variant: VARIANTS[0]!, thresholds: always, coldFactor: 1 });
  const w = wake(many);
  console.log(`\nworker start on a split of two ${fmt(w.part, 0)} µs parts: ${fmt(w.warm, 1)} µs after the call while it spins, ${fmt(w.cold, 1)} µs once asleep`);
  const big = Number(one.heap.allocate(4 << 22));
  const bigMany = Number(many.heap.allocate(4 << 22));
  const at = (rt: SimdRuntime) => (rt === one ? big : bigMany);
  const sizes = [1 << 12, 1 << 14, 1 << 15, 1 << 16, 1 << 17, 1 << 18, 1 << 20];
  table('threshold: add (f32), µs', ['elements', '1 thread', `${THREADS} threads`, 'speed-up'], crossover(one, many, sizes, (rt, n) => {
    const plan = planBroadcast('add', [n], [n]);
    return () => binary(rt, 'add', 'f32', at(rt), at(rt), at(rt) + n * 4, plan);
  }));
  table('threshold: exp (f32), µs', ['elements', '1 thread', `${THREADS} threads`, 'speed-up'], crossover(one, many, sizes, (rt, n) => () => unary(rt, 'exp', 'f32', at(rt), at(rt) + n * 4, n)));
  table('threshold: sum over rows of [n/256, 256] (f32), µs', ['elements', '1 thread', `${THREADS} threads`, 'speed-up'], crossover(one, many, sizes, (rt, n) => {
    const { plan } = planReduction([n / 256, 256], 1, false);
    return () => reduce(rt, 'sum', 'f32', at(rt), at(rt) + n * 4, plan);
  }));
  table('threshold: softmax rows of 512 (f32), µs', ['elements', '1 thread', `${THREADS} threads`, 'speed-up'], crossover(one, many, sizes, (rt, n) => () => softmax(rt, 'f32', at(rt), at(rt) + n * 4, n / 512, 512, false)));
  table('threshold: square sgemm (f32), µs', ['n (multiply-adds n³)', '1 thread', `${THREADS} threads`, 'speed-up'], crossover(one, many, [32, 64, 96, 128, 192, 256], (rt, n) => () =>
    gemm(rt, { a: at(rt), aType: 'f32', b: at(rt), bType: 'f32', out: at(rt) + (1 << 20), outType: 'f32', m: n, n, k: n, batch: 1, transA: false, transB: false, alpha: 1, beta: 0, aBatchStride: 0, bBatchStride: 0, cBatchStride: 0 })));
  table('threshold: attention [1, 4, s, 64] (f32), µs', ['s (multiply-adds 2·4·64·s²)', '1 thread', `${THREADS} threads`, 'speed-up'], crossover(one, many, [32, 64, 128, 256], (rt, s) => () =>
    attention(rt, { dtype: 'f32', q: at(rt), k: at(rt), v: at(rt), out: at(rt) + (1 << 21), batch: 1, heads: 4, kvHeads: 4, seqQ: s, seqK: s, headDim: 64, scale: 0.125, causal: false })));
  await one.dispose();
  await many.dispose();
}
console.log(`\nload average at the end ${load()}`);
