import { describe, expect, it } from 'vitest';
import {
  bf16BitsToF32,
  dtypeSize,
  f16BitsToF32,
  f32ToBf16Bits,
  f32ToF16Bits,
  fromBf16Array,
  fromF16Array,
  toBf16Array,
  toF16Array,
} from '../../../src/compute/core/dtype.js';

/** IEEE binary16 decoded by its definition, independently of the library's table. */
function decodeHalf(h: number): number {
  const sign = h >> 15 ? -1 : 1;
  const e = (h >> 10) & 31;
  const m = h & 1023;
  if (e === 31) return m ? NaN : sign * Infinity;
  return e === 0 ? sign * m * 2 ** -24 : sign * (1024 + m) * 2 ** (e - 25);
}

/** bfloat16 decoded by its definition (8-bit exponent, 7-bit mantissa). */
function decodeBfloat(h: number): number {
  const sign = h >> 15 ? -1 : 1;
  const e = (h >> 7) & 255;
  const m = h & 127;
  if (e === 255) return m ? NaN : sign * Infinity;
  return e === 0 ? sign * m * 2 ** -133 : sign * (128 + m) * 2 ** (e - 134);
}

/** The next f32 above / below a positive f32. */
function nextF32(x: number, direction: 1 | -1): number {
  const f = new Float32Array([x]);
  const u = new Uint32Array(f.buffer);
  u[0]! += direction;
  return f[0]!;
}

describe('dtype sizes', () => {
  it('are 4, 2, 2, 4 bytes', () => {
    expect(dtypeSize).toEqual({ f32: 4, f16: 2, bf16: 2, i32: 4 });
  });
});

describe.each([
  { name: 'f16', encode: f32ToF16Bits, decode: f16BitsToF32, reference: decodeHalf, maxFinite: 0x7bff },
  { name: 'bf16', encode: f32ToBf16Bits, decode: bf16BitsToF32, reference: decodeBfloat, maxFinite: 0x7f7f },
])('$name conversion', ({ encode, decode, reference, maxFinite }) => {
  it('decodes all 65536 patterns as the format defines them', () => {
    const wrong: number[] = [];
    for (let h = 0; h < 65536; h++) {
      const expected = reference(h);
      if (!Object.is(decode(h), expected)) wrong.push(h);
    }
    expect(wrong).toEqual([]);
  });

  it('round-trips every non-NaN pattern', () => {
    const wrong: number[] = [];
    for (let h = 0; h < 65536; h++) {
      if (!Number.isNaN(reference(h)) && encode(decode(h)) !== h) wrong.push(h);
    }
    expect(wrong).toEqual([]);
  });

  it('rounds exact midpoints to the even neighbour and others to the nearest (all adjacent pairs)', () => {
    const wrong: string[] = [];
    for (let h = 0; h < maxFinite; h++) {
      const lo = reference(h);
      const hi = reference(h + 1);
      const mid = (lo + hi) / 2; // representable in f32: one more bit than the format
      const even = h % 2 === 0 ? h : h + 1;
      if (Math.fround(mid) !== mid) wrong.push(`${h}: midpoint not an f32`);
      if (encode(mid) !== even) wrong.push(`${h}: midpoint → ${encode(mid)}`);
      if (encode(-mid) !== (even | 0x8000)) wrong.push(`${h}: negative midpoint → ${encode(-mid)}`);
      if (encode(nextF32(mid, 1)) !== h + 1) wrong.push(`${h}: above midpoint → ${encode(nextF32(mid, 1))}`);
      const below = nextF32(mid, -1);
      if (mid > 0 && below > lo && encode(below) !== h) wrong.push(`${h}: below midpoint → ${encode(below)}`);
    }
    expect(wrong).toEqual([]);
  });

  it('maps infinities, NaN and signed zero', () => {
    expect(encode(Infinity)).toBe(maxFinite + 1);
    expect(encode(-Infinity)).toBe((maxFinite + 1) | 0x8000);
    expect(encode(NaN)).toBe(0x7fff);
    expect(decode(0x7fff)).toBeNaN();
    expect(encode(0)).toBe(0);
    expect(encode(-0)).toBe(0x8000);
    expect(Object.is(decode(0x8000), -0)).toBe(true);
  });

  it('overflows to infinity at the midpoint above the largest finite value', () => {
    const max = reference(maxFinite);
    const ulp = max - reference(maxFinite - 1);
    expect(encode(max + ulp / 2)).toBe(maxFinite + 1); // tie: the even neighbour is infinity
    expect(encode(nextF32(max + ulp / 2, -1))).toBe(maxFinite);
    expect(encode(max * 2)).toBe(maxFinite + 1);
  });
});

describe('f16 subnormals and double rounding', () => {
  it('handles the subnormal range and underflow with round-to-nearest-even', () => {
    expect(f32ToF16Bits(2 ** -24)).toBe(0x0001);
    expect(f32ToF16Bits(2 ** -25)).toBe(0x0000); // tie with zero: even
    expect(f32ToF16Bits(nextF32(2 ** -25, 1))).toBe(0x0001);
    expect(f32ToF16Bits(3 * 2 ** -25)).toBe(0x0002); // tie between 1 and 2: even
    expect(f32ToF16Bits(2 ** -14)).toBe(0x0400); // smallest normal
    expect(f32ToF16Bits(2 ** -14 - 2 ** -25)).toBe(0x0400); // rounds up across the boundary
    expect(f32ToF16Bits(1e-10)).toBe(0);
    expect(f32ToF16Bits(-1e-10)).toBe(0x8000);
    expect(f16BitsToF32(0x03ff)).toBe(1023 * 2 ** -24);
  });

  it('rounds a double to f32 first, as a GPU storing an f32 result does', () => {
    // 1 + 2^-11 + 2^-40 is above the f16 midpoint, but its f32 rounding sits exactly on it.
    expect(f32ToF16Bits(1 + 2 ** -11 + 2 ** -40)).toBe(0x3c00);
    expect(f32ToBf16Bits(1 + 2 ** -8 + 2 ** -40)).toBe(0x3f80);
  });

  it('converts bf16 subnormals', () => {
    expect(f32ToBf16Bits(2 ** -133)).toBe(0x0001);
    expect(bf16BitsToF32(0x0001)).toBe(2 ** -133);
  });
});

describe('array helpers', () => {
  it('convert whole arrays like the scalar functions', () => {
    const values = [0, 1, -2.5, 65504, 1e-6, 3.14159, -0, Infinity, NaN, 1e9];
    const f16 = toF16Array(values);
    const bf16 = toBf16Array(new Float32Array(values));
    expect([...f16]).toEqual(values.map(f32ToF16Bits));
    expect([...bf16]).toEqual(values.map(f32ToBf16Bits));
    expect([...fromF16Array(f16)]).toEqual([...f16].map(f16BitsToF32));
    expect([...fromBf16Array(bf16)]).toEqual([...bf16].map(bf16BitsToF32));
  });
});
