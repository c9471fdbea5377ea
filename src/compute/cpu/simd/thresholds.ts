/**
 * When a kernel family splits its work across threads: the least work each thread must get (an
 * op stays on the calling thread below twice that). From `bench/cpu-simd.ts`'s crossover tables
 * on the development machine (2 vCPUs of an AMD EPYC Zen 4, Node 20.20, relaxed build, medians,
 * workers warm), the size where two threads first beat one:
 *
 * | family | one thread vs two, µs (speed-up) |
 * |---|---|
 * | add f32 | 4096 el. 0.49 vs 0.90 (0.54x); 16384: 1.67 vs 1.47 (1.13x); 32768: 3.25 vs 2.31 (1.41x) |
 * | exp f32 | 4096 el. 2.33 vs 1.63 (1.43x); 16384: 9.15 vs 5.04 (1.81x) |
 * | sum of rows of 256 | 4096 el. 0.62 vs 0.82 (0.76x); 16384: 2.24 vs 1.64 (1.37x) |
 * | softmax rows of 512 | 4096 el. 2.28 vs 1.68 (1.35x); 16384: 8.93 vs 5.02 (1.78x) |
 * | square sgemm | n = 32: 1.99 vs 1.81 (1.10x); n = 64: 11.8 vs 6.9 (1.71x) |
 * | attention [1, 4, s, 64] | s = 32: 47.2 vs 25.5 (1.85x) |
 *
 * Those hold while the workers spin, as they do between back-to-back ops. A sleeping worker needs
 * a futex wake (the caller pays for the system call, the worker starts tens of µs later), so
 * while the workers sleep every threshold is multiplied by {@link COLD_FACTOR}; the caller also
 * runs any part a late worker has not claimed, so a split is never much slower than one thread.
 */

/** The thresholds, by kernel family (see {@link THRESHOLDS}). */
export type SimdThresholds = { readonly [K in keyof typeof THRESHOLDS]: number };

export const THRESHOLDS = {
  /** Cheap elementwise ops (fill, copy, cast, neg/abs/sqrt/rsqrt/relu/leakyRelu and those derivatives, binary), in bytes of output per thread. */
  elementwiseBytes: 32 * 1024,
  /** Elementwise ops with transcendental functions (exp, log, tanh, sigmoid, GELU, SiLU, softplus and derivatives) and Philox (uniform, dropout), in bytes of output per thread. */
  transcendentalBytes: 8 * 1024,
  /** Reductions, in bytes of input per thread. */
  reduceBytes: 32 * 1024,
  /** Softmax and layerNorm, in bytes of input per thread. */
  rowsBytes: 8 * 1024,
  /** Transpose, in bytes moved per thread. */
  transposeBytes: 32 * 1024,
  /** sgemm, in multiply-adds per thread. */
  gemmMacs: 32 * 1024,
  /** Attention, in multiply-adds (q·kᵀ and p·v) per thread. */
  attentionMacs: 64 * 1024,
  /** The GRU step, in state elements per thread. */
  gruElements: 2048,
} as const;

/**
 * How much more work a split needs while the workers sleep. The bench measured a sleeping worker
 * starting 34-64 µs after the call (V8's Atomics.wait wake-up; ~0 while it spins), so a split pays
 * once the op takes about twice that on one thread: ~100 µs, some 32 times the warm thresholds
 * (2-4 µs of work).
 */
export const COLD_FACTOR = 32;
