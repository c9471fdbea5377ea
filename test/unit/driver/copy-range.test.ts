import { describe, expect, it } from 'vitest';
import { copyByteLength } from '../../../src/driver/copy-range.js';
import { fillPattern } from '../../../src/driver/device-buffer.js';
import { InvalidArgumentError } from '../../../src/errors.js';

describe('copyByteLength', () => {
  it('copies whole buffers of equal size', () => {
    expect(copyByteLength('copyFromHost', 4096, 4096, undefined, undefined)).toBe(4096);
    expect(copyByteLength('copyFromHost', 0, 0, undefined, undefined)).toBe(0);
  });

  it('refuses whole-buffer copies whose sizes differ, e.g. f64 data into an f32 buffer', () => {
    const f32Buffer = 1024 * 4;
    const f64Data = new Float64Array(1024).byteLength;
    expect(() => copyByteLength('copyFromHost', f32Buffer, f64Data, undefined, undefined)).toThrow(InvalidArgumentError);
    expect(() => copyByteLength('copyFromHost', f32Buffer, f64Data, undefined, undefined)).toThrow(
      /copyFromHost: sizes differ \(8192 bytes vs the buffer's 4096\)/,
    );
    expect(() => copyByteLength('copyToHost', 4096, 100, undefined, undefined)).toThrow(/sizes differ/);
  });

  it('places a smaller copy at byteOffset when it fits', () => {
    expect(copyByteLength('copyFromHost', 4096, 1024, 3072, undefined)).toBe(1024);
    expect(copyByteLength('copyFromHost', 4096, 1024, 0, undefined)).toBe(1024);
  });

  it('refuses a copy that runs past the end of the buffer', () => {
    expect(() => copyByteLength('copyFromHost', 4096, 1024, 3073, undefined)).toThrow(
      /1024 bytes at byteOffset 3073 run past the end of the 4096-byte buffer/,
    );
    expect(() => copyByteLength('copyFromHostAsync', 4096, 8192, undefined, 5000)).toThrow(/run past the end/);
  });

  it('copies byteLength bytes when both sides hold them', () => {
    expect(copyByteLength('copyFrom', 4096, 8192, undefined, 4096)).toBe(4096);
    expect(copyByteLength('copyToHostAsync', 4096, 1024, 512, 256)).toBe(256);
  });

  it('refuses a byteLength the other side does not hold', () => {
    expect(() => copyByteLength('copyFrom', 4096, 1024, undefined, 2048)).toThrow(
      /byteLength 2048 exceeds the 1024 bytes on the other side/,
    );
  });

  it.each([
    [-1, undefined, /byteOffset -1/],
    [0.5, undefined, /byteOffset 0.5/],
    [undefined, -8, /byteLength -8/],
    [undefined, Number.NaN, /byteLength NaN/],
  ])('refuses byteOffset %s / byteLength %s', (offset, length, message) => {
    expect(() => copyByteLength('copy', 4096, 4096, offset, length)).toThrow(message);
  });
});

describe('fillPattern', () => {
  it('gives the bits cuMemsetD8/16/32 writes', () => {
    expect(fillPattern(1, 'f32')).toBe(0x3f800000);
    expect(fillPattern(-2.5, 'f32')).toBe(0xc0200000);
    expect(fillPattern(-1, 'i32')).toBe(0xffffffff);
    expect(fillPattern(-(2 ** 31), 'i32')).toBe(0x80000000);
    expect(fillPattern(0xffffffff, 'u32')).toBe(0xffffffff);
    expect(fillPattern(0xbeef, 'u16')).toBe(0xbeef);
    expect(fillPattern(255, 'u8')).toBe(255);
  });

  it.each([
    [256, 'u8'],
    [-1, 'u8'],
    [65536, 'u16'],
    [2 ** 32, 'u32'],
    [2 ** 31, 'i32'],
    [1.5, 'u32'],
  ] as const)('refuses %s as %s', (value, dtype) => {
    expect(() => fillPattern(value, dtype)).toThrow(InvalidArgumentError);
  });

  it('refuses an unknown dtype', () => {
    expect(() => fillPattern(1, 'f64' as never)).toThrow(/unknown dtype f64/);
  });
});
