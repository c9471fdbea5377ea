/**
 * When a kernel family splits its work across threads: the least work one thread is given. Below
 * twice that, the op stays on the calling thread. Measured with `bench/cpu-simd.ts` on the
 * development machine (2 vCPUs of an AMD EPYC Zen 4, Node 20, the relaxed build; medians): see
 * the bench's "thresholds" table for the single-thread time per size and the parallel speed-up
 * once a split pays for handing work to a worker (~1 µs while it spins, tens of µs once asleep).
 */
/** The thresholds, by kernel family (see {@link THRESHOLDS}). */
export type SimdThresholds = { readonly [K in keyof typeof THRESHOLDS]: number };

export const THRESHOLDS = {
  /** Elementwise (fill, copy, cast, unary, activationGrad, binary, random, dropout), in output bytes. */
  elementwiseBytes: 256 * 1024,
  /** Reductions, in input bytes. */
  reduceBytes: 256 * 1024,
  /** Softmax and layerNorm, in input bytes. */
  rowsBytes: 128 * 1024,
  /** Transpose, in bytes moved. */
  transposeBytes: 256 * 1024,
  /** sgemm, in multiply-adds (m·n·k·batch). */
  gemmMacs: 1 << 20,
  /** Attention, in multiply-adds of q·kᵀ and p·v. */
  attentionMacs: 1 << 20,
  /** The GRU step, in state elements (E·B·H). */
  gruElements: 16 * 1024,
} as const;
