/**
 * Reused one-element arrays for the out-parameters of the CUDA driver and the
 * HIP runtime (src/hip/raw). Calls are synchronous on one thread, so each value
 * is read right after the call that wrote it and a single set serves every
 * function of both without allocating.
 */
export const out = {
  /** `void **` handles (contexts, streams, events, modules, host pointers). */
  handle: new BigUint64Array(1),
  /** `CUdeviceptr *` and the first `size_t *`. */
  u64: new BigUint64Array(1),
  /** A second `size_t *` in the same call. */
  u64b: new BigUint64Array(1),
  /** `int *`. */
  i32: new Int32Array(1),
  /** A second `int *` in the same call. */
  i32b: new Int32Array(1),
  /** `unsigned int *`. */
  u32: new Uint32Array(1),
  /** `float *`. */
  f32: new Float32Array(1),
  /** `const char **`, decoded by koffi to a string. */
  str: [null] as [string | null],
};
