/**
 * The CPU backend's WebAssembly SIMD kernel library: a shared linear memory that tensors live in
 * (with a caching pool over it), the kernels compiled from `kernels/wasm/*.c` (SIMD128, and
 * relaxed-SIMD FMA where the engine has it), and a worker pool that runs big ops split across
 * every core from an in-order queue, while the caller goes on. Every op has the CPU backend's
 * meaning; see each family's file.
 *
 * ```ts
 * const rt = SimdRuntime.shared();
 * const pool = rt.createPool();
 * const x = pool.alloc(n * 4, stream), out = pool.alloc(n * 4, stream);
 * rt.f32.set(values, Number(x.address) / 4);
 * unary(rt, 'exp', 'f32', Number(x.address), Number(out.address), n);
 * rt.settle(); // the result is in memory from here on
 * ```
 */
export { SimdRuntime, THREADS_ENV, KERNELS, type KernelName, type SimdRuntimeOptions } from './runtime.js';
export { SIMD_VARIANT_ENV, defaultSimdVariant, relaxedSimdSupported, simdModule, wasmKernelsDir, type SimdVariant } from './wasm-module.js';
export { WasmHeap, WASM_PAGE, type WasmHeapStats } from './wasm-heap.js';
export type { WasmMemory, WasmModule } from './wasm-api.js';
export { SimdKernelError } from './errors.js';
export { THRESHOLDS, type SimdThresholds } from './thresholds.js';
export { activationGrad, binary, cast, copy, fill, fillBits, unary } from './elementwise.js';
export { reduce, REDUCE_CHUNK } from './reduce.js';
export { layerNorm, softmax } from './rows.js';
export { transpose } from './transpose.js';
export { dropout, randomUniform } from './random.js';
export { gemm, type SimdGemm } from './matmul.js';
export { gruRecurrence, type SimdGruRecurrence } from './gru.js';
export { gruRollout, rolloutFits, type SimdGruRollout } from './gru-rollout.js';
export { attention, type SimdAttention } from './attention.js';
