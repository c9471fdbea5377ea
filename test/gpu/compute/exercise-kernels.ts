/**
 * Runs every CUDA kernel of the compute backend once at small, odd sizes, for
 * compute-sanitizer (memcheck, racecheck):
 *
 *   compute-sanitizer --tool memcheck --report-api-errors no node --import tsx test/gpu/compute/exercise-kernels.ts
 *   compute-sanitizer --tool racecheck node --import tsx test/gpu/compute/exercise-kernels.ts --shared-memory-only
 *
 * (`--report-api-errors no`: the driver tier learns each kernel's parameters
 * by asking cuFuncGetParamInfo until it answers CUDA_ERROR_INVALID_VALUE,
 * which memcheck would otherwise count as errors.)
 *
 * Each view is placed so that it ends exactly at the end of its own device
 * allocation (requests above 1 MiB get an exact segment from the pool and are
 * never freed here), so reading or writing one element past a view is an
 * out-of-bounds access memcheck reports. Sizes that are multiples of the
 * vector width take the 16-byte paths, odd sizes the scalar ones.
 * `--shared-memory-only` runs just the kernels that use shared memory
 * (reductions, row kernels, transpose): what racecheck looks at.
 */
import type { ActivationGradOp, BinaryOp, UnaryOp } from '../../../src/compute/core/elementwise-ops.js';
import type { ReduceOp } from '../../../src/compute/core/reduce-plan.js';
import type { TensorView } from '../../../src/compute/core/view.js';
import { planBroadcast } from '../../../src/compute/core/broadcast.js';
import { createCudaBackend } from '../../../src/compute/cuda/cuda-backend.js';
import { softmax } from '../../../src/compute/gpu/rows.js';
import { DTYPES, dtypeSize, type DType } from '../../../src/compute/core/dtype.js';

const backend = createCudaBackend();
const MiB = 2 ** 20;

/** A view of `shape` ending exactly at the end of a fresh allocation of just over 1 MiB (or more). */
function guarded(shape: number[], dtype: DType): TensorView {
  const size = shape.reduce((p, d) => p * d, 1);
  const bytes = size * dtypeSize[dtype];
  const total = Math.ceil(Math.max(bytes, MiB + 1) / 512) * 512;
  const buffer = backend.alloc(total);
  return { buffer, dtype, shape, offset: (total - bytes) / dtypeSize[dtype], size };
}

/** A guarded view filled with uniform values in [low, high) (integers for i32). */
function input(shape: number[], dtype: DType, low = -2, high = 2): TensorView {
  const view = guarded(shape, dtype);
  if (dtype === 'i32') backend.fill(view, 3);
  else backend.random(view, 'uniform', 1234, low, high);
  return view;
}

const sharedOnly = process.argv.includes('--shared-memory-only');
const UNARY: UnaryOp[] = ['neg', 'abs', 'exp', 'log', 'sqrt', 'rsqrt', 'relu', 'leakyRelu', 'sigmoid', 'tanh', 'gelu', 'geluTanh', 'silu', 'softplus'];
const GRADS: ActivationGradOp[] = ['reluGrad', 'leakyReluGrad', 'sigmoidGrad', 'tanhGrad', 'geluGrad', 'geluTanhGrad', 'siluGrad', 'softplusGrad'];
const BINARY: BinaryOp[] = ['add', 'sub', 'mul', 'div', 'max', 'min'];
let launches = 0;

for (const dtype of DTYPES) {
  const isFloat = dtype !== 'i32';
  if (!sharedOnly) exerciseElementwise(dtype, isFloat);
  exerciseShared(dtype, isFloat);
  backend.synchronize();
}

function exerciseElementwise(dtype: DType, isFloat: boolean): void {
  for (const n of [1, 7, 1031, 4096]) {
    const x = input([n], dtype, 0.1, 2);
    const dy = input([n], dtype);
    const out = guarded([n], dtype);
    for (const op of isFloat ? UNARY : (['neg', 'abs'] as UnaryOp[])) {
      backend.unary(op, x, out, 0.1);
      launches++;
    }
    if (isFloat) {
      for (const op of GRADS) {
        backend.activationGrad(op, x, dy, out, 0.1);
        launches++;
      }
    }
    backend.fill(out, 1);
    launches++;
    for (const to of DTYPES) {
      if (to === dtype) continue;
      backend.cast(x, guarded([n], to));
      launches++;
    }
    if (isFloat) {
      backend.random(out, 'normal', 99, 0, 1);
      backend.dropout(x, out, 0.3, 5);
      // Indices in and out of range, along a middle axis ([n, 3, 2] from [n, 2]).
      const indices = guarded([n, 2], 'i32');
      backend.fill(indices, 1);
      backend.oneHot(indices, guarded([n, 3, 2], dtype), n, 3, 2);
      launches += 4;
    }
  }
  if (isFloat) {
    // The optimizer's table: tensors of a chunk and one, a single element and a few chunks.
    const sizes = [4097, 1, 3 * 4096 + 5];
    const tensor = (n: number, amsgrad: boolean) => ({
      param: input([n], dtype),
      grad: input([n], dtype),
      state: [input([n], 'f32', 0, 1), input([n], 'f32', 0, 1), ...(amsgrad ? [input([n], 'f32', 0, 1)] : [])],
      first: false,
      stepSize: 0.01,
      biasCorrection2Sqrt: 0.5,
    });
    backend.optimizerStep({ rule: 'sgd', tensors: sizes.map((n) => tensor(n, false)), lr: 0.1, weightDecay: 0.01, momentum: 0.9, dampeningComplement: 1, nesterov: true });
    backend.optimizerStep({ rule: 'adamw', tensors: sizes.map((n) => tensor(n, true)), decay: 0.999, beta1Complement: 0.1, beta2: 0.999, beta2Complement: 0.001, eps: 1e-8, amsgrad: true });
    launches += 2;
  }
  // Every broadcast kind, vector and scalar.
  const shapes: [number[], number[]][] = [[[1031], [1031]], [[1024], [1024]], [[1031], []], [[], [1024]], [[37, 16], [16]], [[37, 13], [13]], [[50, 3], [3]], [[24], [9, 24]], [[3, 1, 7], [1, 5, 1]], [[16, 5, 61, 1], [16, 5, 1, 13]], [[3, 1, 1031], [1, 5, 1031]]];
  for (const op of BINARY.filter((o) => isFloat || o !== 'div')) {
    for (const [aShape, bShape] of shapes) {
      const plan = planBroadcast(op, aShape, bShape);
      backend.binary(op, input(aShape, dtype), input(bShape, dtype), guarded(broadcastShape(aShape, bShape), dtype), plan);
      launches++;
    }
  }
}

function exerciseShared(dtype: DType, isFloat: boolean): void {
  // Reductions: warp rows, block rows, split (vector and scalar), columns, full.
  const reduceCases: [number[], number | undefined][] = [[[1031], undefined], [[4096 * 3], undefined], [[3, 10001], 1], [[2, 9000], 1], [[100, 61], 1], [[7, 5000], 1], [[3, 50, 7], 1], [[20000, 3], 0], [[100000, 3], 0], [[1001, 13], 1], [[301, 3, 2], 1]];
  const ops: ReduceOp[] = isFloat ? ['sum', 'mean', 'max', 'min', 'argmax'] : ['sum', 'max', 'min', 'argmax'];
  for (const op of ops) {
    for (const [shape, axis] of reduceCases) {
      const n = shape.reduce((p, d) => p * d, 1);
      const outer = axis === undefined ? 1 : shape.slice(0, axis).reduce((p, d) => p * d, 1);
      const axisLen = axis === undefined ? n : shape[axis]!;
      const inner = n / (outer * axisLen);
      backend.reduce(op, input(shape, dtype), guarded([outer * inner], op === 'argmax' ? 'i32' : dtype), { outer, axisLen, inner });
      launches++;
    }
  }
  // Tiled; narrow columns and narrow rows, each with 16-byte accesses and without.
  for (const shape of [[1, 1], [33, 65], [2, 31, 33], [1001, 3], [2, 64, 7], [2, 5, 301], [3, 40]]) {
    const [rows, cols] = shape.slice(-2) as [number, number];
    backend.transpose(input(shape, dtype), guarded(shape, dtype), shape.length === 3 ? shape[0]! : 1, rows, cols);
    launches++;
  }
  if (isFloat) {
    // Row kernels: warp scalar/vector, block scalar/vector, staged softmax (20 000 columns: f32
    // edge blocks; 16K: f32 full blocks, 300 rows, more than an H200 holds blocks, so blocks walk
    // rows; 32K: bf16 full blocks and the f32 split kernel, 300 rows), looped (40 001); on sm_90+
    // 40 000 columns split over a cluster (a short last slice), and the looped kernel is forced
    // for it too.
    for (const [rows, cols] of [[5, 7], [3, 1024], [2, 1025], [2, 4096], [3, 20000], [300, 16384], [300, 32768], [2, 40000], [2, 40001]] as const) {
      const x = input([rows, cols], dtype);
      backend.softmax(x, guarded([rows, cols], dtype), rows, cols, false);
      backend.softmax(x, guarded([rows, cols], dtype), rows, cols, true);
      if (backend.clusterLaunch && cols > 32768) {
        softmax(backend, x, guarded([rows, cols], dtype), rows, cols, false, false);
        launches++;
      }
      backend.layerNorm(x, input([cols], dtype), input([cols], dtype), guarded([rows, cols], dtype), rows, cols, 1e-5);
      backend.layerNorm(x, undefined, undefined, guarded([rows, cols], dtype), rows, cols, 1e-5);
      launches += 4;
    }
  }
}

function broadcastShape(a: number[], b: number[]): number[] {
  const rank = Math.max(a.length, b.length);
  return Array.from({ length: rank }, (_, i) => Math.max(a[a.length - rank + i] ?? 1, b[b.length - rank + i] ?? 1));
}

backend.synchronize();
console.log(`exercised ${launches} op launches; pool ${JSON.stringify(backend.memoryStats())}`);
backend.dispose();
