/**
 * Reused one-element arrays for the runtime's out-parameters: calls are
 * synchronous on one thread, so each value is read right after the call that
 * wrote it.
 */
export const out = {
  handle: new BigUint64Array(1),
  u64: new BigUint64Array(1),
  u64b: new BigUint64Array(1),
  i32: new Int32Array(1),
  i32b: new Int32Array(1),
  f32: new Float32Array(1),
};
