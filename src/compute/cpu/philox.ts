/**
 * Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
 * SC'11), the counter-based generator behind `rand`, `randn` and `dropout` on
 * every backend. Because the output depends only on (key, counter), element i
 * can be computed independently, and the CPU and the GPU agree bit for bit.
 *
 * Stream layout shared with `kernels/philox.cuh`: key = (seed low 32, seed high 32);
 * counter = (⌊i/4⌋ low 32, ⌊i/4⌋ high 32, 0, 0); element i uses output word i % 4.
 */

const M0 = 0xd2511f53;
const M1 = 0xcd9e8d57;
const W0 = 0x9e3779b9;
const W1 = 0xbb67ae85;
const ROUNDS = 10;

/** High 32 bits of the 64-bit product of two u32 (JS numbers lose them otherwise). */
function mulHi32(a: number, b: number): number {
  const aHi = a >>> 16;
  const aLo = a & 0xffff;
  const bHi = b >>> 16;
  const bLo = b & 0xffff;
  const loLo = aLo * bLo;
  const loHi = aLo * bHi;
  const hiLo = aHi * bLo;
  const carry = ((loLo >>> 16) + (loHi & 0xffff) + (hiLo & 0xffff)) >>> 16;
  return (aHi * bHi + (loHi >>> 16) + (hiLo >>> 16) + carry) >>> 0;
}

/**
 * One Philox4x32-10 block. Writes the four output words into `out`.
 * All inputs are u32 values.
 */
export function philox4x32(
  c0: number,
  c1: number,
  c2: number,
  c3: number,
  k0: number,
  k1: number,
  out: Uint32Array,
): void {
  let x0 = c0 >>> 0;
  let x1 = c1 >>> 0;
  let x2 = c2 >>> 0;
  let x3 = c3 >>> 0;
  let key0 = k0 >>> 0;
  let key1 = k1 >>> 0;
  for (let r = 0; r < ROUNDS; r++) {
    if (r > 0) {
      key0 = (key0 + W0) >>> 0;
      key1 = (key1 + W1) >>> 0;
    }
    const hi0 = mulHi32(M0, x0);
    const lo0 = Math.imul(M0, x0) >>> 0;
    const hi1 = mulHi32(M1, x2);
    const lo1 = Math.imul(M1, x2) >>> 0;
    x0 = (hi1 ^ x1 ^ key0) >>> 0;
    x1 = lo1;
    x2 = (hi0 ^ x3 ^ key1) >>> 0;
    x3 = lo0;
  }
  out[0] = x0;
  out[1] = x1;
  out[2] = x2;
  out[3] = x3;
}

/** Splits a seed (a safe non-negative integer) into the two key words. */
export function philoxKey(seed: number): [number, number] {
  return [seed >>> 0, Math.floor(seed / 2 ** 32) >>> 0];
}

const TWO_POW_MINUS_24 = 2 ** -24;

/** Fills `out[i]` with the raw u32 word of stream element i. */
export function philoxWords(seed: number, out: Uint32Array): void {
  const [k0, k1] = philoxKey(seed);
  const block = new Uint32Array(4);
  const n = out.length;
  for (let base = 0; base < n; base += 4) {
    const blockIndex = base / 4;
    philox4x32(blockIndex >>> 0, Math.floor(blockIndex / 2 ** 32) >>> 0, 0, 0, k0, k1, block);
    const end = Math.min(4, n - base);
    for (let w = 0; w < end; w++) out[base + w] = block[w]!;
  }
}

/** A u32 word → uniform in [0, 1): its top 24 bits × 2^-24 (exact in f32). */
export function wordToUniform(word: number): number {
  return (word >>> 8) * TWO_POW_MINUS_24;
}

/** A u32 word → uniform in (0, 1): (top 24 bits + 0.5) × 2^-24, never 0, for Box–Muller's log. */
export function wordToOpenUniform(word: number): number {
  return ((word >>> 8) + 0.5) * TWO_POW_MINUS_24;
}

/**
 * Standard normals for stream elements 0..n-1: element i % 4 ∈ {0, 1} comes from
 * words (0, 1) of its block, {2, 3} from words (2, 3); the even one is the cosine
 * branch of Box–Muller, the odd one the sine branch.
 */
export function philoxNormals(seed: number, out: Float64Array): void {
  const words = new Uint32Array(out.length + ((4 - (out.length % 4)) % 4));
  philoxWords(seed, words);
  const twoPi = 2 * Math.PI;
  for (let i = 0; i < out.length; i += 2) {
    const radius = Math.sqrt(-2 * Math.log(wordToOpenUniform(words[i]!)));
    const angle = twoPi * wordToOpenUniform(words[i + 1]!);
    out[i] = radius * Math.cos(angle);
    if (i + 1 < out.length) out[i + 1] = radius * Math.sin(angle);
  }
}
