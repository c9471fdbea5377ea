/**
 * Element types of GpuCompute tensors and the host-side conversions for the
 * 16-bit float formats.
 *
 * f16 and bf16 are stored as 16-bit words (a `Uint16Array` on the host) and
 * computed in f32 on every backend. Conversions from a JS number first round
 * to f32 (`Math.fround`) and then to 16 bits with round-to-nearest-even, which
 * is exactly what a GPU kernel does when it stores an f32 result, so the CPU
 * backend and the GPU agree bit for bit. NaN becomes the canonical quiet NaN
 * `0x7FFF` (as CUDA's `__float2half_rn` / `__float2bfloat16_rn` produce).
 */

/** Element type of a tensor. */
export type DType = 'f32' | 'f16' | 'bf16' | 'i32';

/** Every dtype, in a stable order. */
export const DTYPES: readonly DType[] = ['f32', 'f16', 'bf16', 'i32'];

/** Bytes per element of each dtype. */
export const dtypeSize: Record<DType, number> = { f32: 4, f16: 2, bf16: 2, i32: 4 };

/** True when `value` names a dtype. */
export function isDType(value: unknown): value is DType {
  return typeof value === 'string' && (DTYPES as readonly string[]).includes(value);
}

/** True for the floating-point dtypes (everything but i32). */
export function isFloatDType(dtype: DType): boolean {
  return dtype !== 'i32';
}

/** The canonical quiet NaN of both 16-bit formats. */
const CANONICAL_NAN16 = 0x7fff;

// Scratch views that reinterpret one f32 as its bit pattern.
const scratchF32 = new Float32Array(1);
const scratchU32 = new Uint32Array(scratchF32.buffer);

/** f16 bit pattern → f32 value, for all 65536 patterns (256 KiB, built on first use). */
let f16Table: Float32Array | undefined;

function f16ToF32Table(): Float32Array {
  if (!f16Table) {
    f16Table = new Float32Array(65536);
    for (let h = 0; h < 65536; h++) f16Table[h] = decodeF16(h);
  }
  return f16Table;
}

function decodeF16(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

/**
 * Rounds `x` to f32, then to IEEE binary16 with round-to-nearest-even, and
 * returns the 16-bit pattern. Overflow gives ±Infinity, tiny values give
 * subnormals or ±0, NaN gives 0x7FFF.
 */
export function f32ToF16Bits(x: number): number {
  scratchF32[0] = x;
  const bits = scratchU32[0]!;
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  const mant = bits & 0x7fffff;
  if (exp === 0xff) return mant ? CANONICAL_NAN16 : sign | 0x7c00;
  const e = exp - 127 + 15; // biased f16 exponent
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    // Below 2^-25 (half the smallest subnormal) everything rounds to zero.
    if (e < -10) return sign;
    // Subnormal: the 24-bit significand shifted so one unit is 2^-24.
    const significand = mant | 0x800000;
    const shift = 14 - e;
    let r = significand >>> shift;
    const rem = significand & ((1 << shift) - 1);
    const half = 1 << (shift - 1);
    if (rem > half || (rem === half && r & 1)) r++; // may carry into the smallest normal, which is correct
    return sign | r;
  }
  let r = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && r & 1)) r++; // a carry into the exponent yields Infinity, as it should
  return sign | r;
}

/** IEEE binary16 bit pattern → its value (exact in f32). */
export function f16BitsToF32(h: number): number {
  return f16ToF32Table()[h & 0xffff]!;
}

/**
 * Rounds `x` to f32, then to bfloat16 (the top 16 bits of an f32) with
 * round-to-nearest-even, and returns the 16-bit pattern. NaN gives 0x7FFF.
 */
export function f32ToBf16Bits(x: number): number {
  scratchF32[0] = x;
  const bits = scratchU32[0]!;
  if ((bits & 0x7f800000) === 0x7f800000 && bits & 0x7fffff) return CANONICAL_NAN16;
  // Adding 0x7FFF plus the lowest kept bit rounds half to even; >>> wraps modulo 2^32.
  return ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) & 0xffff;
}

/** bfloat16 bit pattern → its value (exact in f32). */
export function bf16BitsToF32(h: number): number {
  scratchU32[0] = (h & 0xffff) << 16;
  return scratchF32[0]!;
}

/** `x` rounded as a tensor of `dtype` stores it (i32 values are taken as they are: callers check them). */
export function roundToDType(x: number, dtype: DType): number {
  switch (dtype) {
    case 'f32':
      return Math.fround(x);
    case 'f16':
      return f16BitsToF32(f32ToF16Bits(x));
    case 'bf16':
      return bf16BitsToF32(f32ToBf16Bits(x));
    case 'i32':
      return x;
  }
}

/** Converts numbers to f16 bit patterns (see {@link f32ToF16Bits}). */
export function toF16Array(values: ArrayLike<number>): Uint16Array {
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = f32ToF16Bits(values[i]!);
  return out;
}

/** Converts f16 bit patterns to their f32 values. */
export function fromF16Array(bits: Uint16Array): Float32Array {
  const table = f16ToF32Table();
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = table[bits[i]!]!;
  return out;
}

/** Converts numbers to bf16 bit patterns (see {@link f32ToBf16Bits}). */
export function toBf16Array(values: ArrayLike<number>): Uint16Array {
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = f32ToBf16Bits(values[i]!);
  return out;
}

/** Converts bf16 bit patterns to their f32 values. */
export function fromBf16Array(bits: Uint16Array): Float32Array {
  const out = new Float32Array(bits.length);
  const outBits = new Uint32Array(out.buffer);
  for (let i = 0; i < bits.length; i++) outBits[i] = bits[i]! << 16;
  return out;
}
