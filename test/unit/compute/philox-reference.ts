/**
 * The random streams every backend must produce, computed here from the raw Philox4x32-10 block
 * of each element (the Backend contract's formulas, not the CPU backend's loops).
 */
import { philox4x32 } from '../../../src/compute/cpu/philox.js';

/** The Philox block of stream element i under `seed`. */
function block(seed: number, i: number): Uint32Array {
  const out = new Uint32Array(4);
  const index = Math.floor(i / 4);
  philox4x32(index >>> 0, Math.floor(index / 2 ** 32), 0, 0, seed >>> 0, Math.floor(seed / 2 ** 32), out);
  return out;
}

/** Element i's uniform in [0, 1): the top 24 bits of its word × 2^-24. */
export function philoxUnit(seed: number, i: number): number {
  return (block(seed, i)[i % 4]! >>> 8) / 2 ** 24;
}

/** Element i of `rand` with [low, high): low + (high − low)·u in f32, each operation rounded (no FMA). */
export function philoxUniform(seed: number, i: number, low: number, high: number): number {
  const f = Math.fround;
  return f(f(low) + f(f(f(high) - f(low)) * philoxUnit(seed, i)));
}

/** Element i of the standard normal stream: Box–Muller on its block's word pair (cosine for even i, sine for odd). */
export function philoxNormal(seed: number, i: number): number {
  const words = block(seed, i);
  const pair = i % 4 < 2 ? 0 : 2;
  const open = (w: number) => ((w >>> 8) + 0.5) / 2 ** 24;
  const r = Math.sqrt(-2 * Math.log(open(words[pair]!)));
  const angle = 2 * Math.PI * open(words[pair + 1]!);
  return i % 2 === 0 ? r * Math.cos(angle) : r * Math.sin(angle);
}
