/** Reused one-element arrays for NCCL's out-parameters (calls are synchronous on one thread). */
export const out = {
  /** `ncclComm_t *`. */
  handle: new BigUint64Array(1),
  /** `int *`. */
  i32: new Int32Array(1),
};
