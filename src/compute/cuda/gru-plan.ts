/**
 * Which recurrence path a CUDA GRU layer takes, and how the persistent kernel (`kernels/gru.cu`)
 * is laid out for a shape: pure functions of the shape and the device limits, so they are
 * unit-tested without a GPU.
 */

/** Threads per block of the persistent kernel (GRU_THREADS in gru.cu). */
export const PERSISTENT_THREADS = 256;
/** Columns of h staged per round (GRU_KC in gru.cu). */
const KC = 16;

/** How the persistent kernel is launched for one shape. */
export interface PersistentPlan {
  /** Batch rows per thread (the kernel gru_persistent_tb<tb>). */
  tb: 2 | 8;
  /** Hidden units per block. */
  units: number;
  blocks: number;
  sharedBytes: number;
}

/** Dynamic shared memory of the persistent kernel (its layout in gru.cu). */
export function persistentSharedBytes(hidden: number, units: number, tb: number): number {
  const rows3 = 3 * units;
  const batchTile = (PERSISTENT_THREADS / units) * tb;
  const head = Math.ceil((hidden * rows3 + 2 * rows3) / 4) * 4;
  return 4 * (head + 2 * KC * (batchTile + 4));
}

/**
 * The persistent launch for E members, B rows and H units, or undefined when it does not fit:
 * the fewest units per block (most blocks) whose slices fit in `sharedLimit` bytes with every
 * block resident (`residentBlocks(shared)` = blocks per SM × SMs), as a cooperative launch needs.
 */
export function planPersistent(
  E: number,
  B: number,
  H: number,
  sharedLimit: number,
  residentBlocks: (sharedBytes: number) => number,
): PersistentPlan | undefined {
  const tb = B >= 128 ? 8 : 2;
  for (let units = tb; units <= 32; units *= 2) {
    const sharedBytes = persistentSharedBytes(H, units, tb);
    if (sharedBytes > sharedLimit) return undefined;
    const blocks = E * Math.ceil(H / units);
    if (blocks <= residentBlocks(sharedBytes)) return { tb, units, blocks, sharedBytes };
  }
  return undefined;
}

/**
 * Whether the persistent kernel can run a layer: its plan, or why not (layer norm, or slices that
 * do not fit). Only a 'persistent' request takes it: 'auto' takes the steps path for every shape,
 * because on an H200 (bench/notes/gru.md) the persistent kernel, though correct, lost everywhere —
 * b32 h256 T10 183 µs vs 91 µs, b256 h1024 T100 11.3 ms vs 7.2 ms, b64 h1024 T512 44 ms vs 16 ms:
 * each step stages h in H/16 dependent L2 round trips.
 */
export function persistentFit(layerNorm: boolean, plan: PersistentPlan | undefined): { plan: PersistentPlan } | { reason: string } {
  if (layerNorm) return { reason: 'it has no layer norm' };
  if (plan === undefined) return { reason: "W_hh's slices do not fit on chip with every block resident" };
  return { plan };
}
