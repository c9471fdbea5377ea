import koffi from 'koffi';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../src/errors.js';
import {
  ArgPack,
  bytes,
  f32,
  f64,
  i32,
  i64,
  isArgType,
  ptr,
  slotSize,
  u32,
  u64,
  type KernelArg,
} from '../../../src/ffi/kernel-args.js';

/** The addresses the driver would read: entry i of the `void *[]` at `address`. */
function slotAddresses(address: bigint, count: number): bigint[] {
  return [...(koffi.decode(address, 'uint64_t', count) as (number | bigint)[])].map((a) => BigInt(a));
}

/** A stand-in for DeviceBuffer: anything with a bigint `ptr`. */
class FakeBuffer {
  disposed = false;
  constructor(readonly address: bigint) {}
  get ptr(): bigint {
    if (this.disposed) throw new Error('disposed');
    return this.address;
  }
}

describe('typed scalar constructors', () => {
  it('accept values in range', () => {
    expect(i32(-(2 ** 31)).value).toBe(-(2 ** 31));
    expect(i32(2 ** 31 - 1).type).toBe('i32');
    expect(u32(2 ** 32 - 1).value).toBe(2 ** 32 - 1);
    expect(i64(-(2n ** 63n)).value).toBe(-(2n ** 63n));
    expect(i64(-5).value).toBe(-5);
    expect(u64(2n ** 64n - 1n).value).toBe(2n ** 64n - 1n);
    expect(u64(Number.MAX_SAFE_INTEGER).value).toBe(Number.MAX_SAFE_INTEGER);
    expect(f32(Number.NaN).type).toBe('f32');
    expect(f64(-0.1).value).toBe(-0.1);
    expect(ptr(0n).type).toBe('ptr');
  });

  it.each([
    ['i32(2^31)', () => i32(2 ** 31)],
    ['i32(1.5)', () => i32(1.5)],
    ['u32(-1)', () => u32(-1)],
    ['u32(2^32)', () => u32(2 ** 32)],
    ['i64(2^63)', () => i64(2n ** 63n)],
    ['i64(2^53)', () => i64(2 ** 53)],
    ['u64(-1)', () => u64(-1)],
    ['u64(2^64)', () => u64(2n ** 64n)],
    ['f32("1")', () => f32('1' as unknown as number)],
    ['ptr(number)', () => ptr(4096 as unknown as bigint)],
    ['ptr(-1n)', () => ptr(-1n)],
    ['bytes alignment 3', () => bytes(new Uint8Array(4), 3)],
    ['bytes alignment 256', () => bytes(new Uint8Array(4), 256)],
    ['bytes empty', () => bytes(new Uint8Array(0))],
  ])('refuse %s', (_label, make) => {
    expect(make).toThrow(InvalidArgumentError);
  });

  it('know their sizes and names', () => {
    expect((['i32', 'u32', 'f32', 'i64', 'u64', 'f64', 'ptr'] as const).map(slotSize)).toEqual([4, 4, 4, 8, 8, 8, 8]);
    expect(slotSize('tensorMap')).toBe(128);
    expect(isArgType('ptr')).toBe(true);
    expect(isArgType('tensorMap')).toBe(true);
    expect(isArgType('float')).toBe(false);
    expect(isArgType(4)).toBe(false);
  });
});

describe('ArgPack.pack', () => {
  it('writes each value at the address the driver reads for it', () => {
    const pack = new ArgPack(8);
    const buffer = new FakeBuffer(0x7f12_3456_7000n);
    const address = pack.pack(
      [i32(-5), u32(4_000_000_000), f32(1.5), f64(Math.PI), i64(-3), u64(2n ** 64n - 1n), ptr(0xdead_beefn), buffer],
      undefined,
      'k',
    );
    expect(address).toBe(pack.address);
    const slots = slotAddresses(address, 8);
    expect(koffi.decode(slots[0]!, 'int32_t')).toBe(-5);
    expect(koffi.decode(slots[1]!, 'uint32_t')).toBe(4_000_000_000);
    expect(koffi.decode(slots[2]!, 'float')).toBe(1.5);
    expect(koffi.decode(slots[3]!, 'double')).toBe(Math.PI);
    expect(BigInt(koffi.decode(slots[4]!, 'int64_t'))).toBe(-3n);
    expect(BigInt(koffi.decode(slots[5]!, 'uint64_t'))).toBe(2n ** 64n - 1n);
    expect(BigInt(koffi.decode(slots[6]!, 'uint64_t'))).toBe(0xdead_beefn);
    expect(BigInt(koffi.decode(slots[7]!, 'uint64_t'))).toBe(0x7f12_3456_7000n);
  });

  it('writes 64-bit numbers as two’s complement without a BigInt', () => {
    const pack = new ArgPack(3);
    const slots = slotAddresses(pack.pack([i64(-(2 ** 40) - 7), u64(2 ** 52 + 3), i64(-1)], undefined, 'k'), 3);
    expect(BigInt(koffi.decode(slots[0]!, 'int64_t'))).toBe(-(2n ** 40n) - 7n);
    expect(BigInt(koffi.decode(slots[1]!, 'uint64_t'))).toBe(2n ** 52n + 3n);
    expect(BigInt(koffi.decode(slots[2]!, 'int64_t'))).toBe(-1n);
  });

  it('reuses the same memory: addresses are constant across launches', () => {
    const pack = new ArgPack(4);
    const first = slotAddresses(pack.pack([u32(1), u32(2)], undefined, 'k'), 2);
    const second = slotAddresses(pack.pack([f64(3), new FakeBuffer(9n)], undefined, 'k'), 2);
    expect(second).toEqual(first);
    expect(first[1]! - first[0]!).toBe(8n);
    expect(koffi.decode(second[0]!, 'double')).toBe(3);
  });

  it('refuses a bare number or bigint, saying how to type it', () => {
    const pack = new ArgPack(4);
    expect(() => pack.pack([new FakeBuffer(1n), 42 as unknown as KernelArg], undefined, 'saxpy')).toThrow(
      /saxpy: argument 1 is a bare number \(42\)\. Say its C type: i32\(\), u32\(\)/,
    );
    expect(() => pack.pack([7n as unknown as KernelArg], undefined, 'saxpy')).toThrow(/argument 0 is a bare bigint/);
    expect(() => pack.pack([{ pointer: 1n } as unknown as KernelArg], undefined, 'saxpy')).toThrow(
      /argument 0 \(Object\) is not a kernel argument/,
    );
    expect(() => pack.pack([null as unknown as KernelArg], undefined, 'saxpy')).toThrow(InvalidArgumentError);
  });

  it('propagates a disposed buffer’s error instead of passing a stale address', () => {
    const pack = new ArgPack(1);
    const buffer = new FakeBuffer(5n);
    buffer.disposed = true;
    expect(() => pack.pack([buffer], undefined, 'k')).toThrow('disposed');
  });

  it("checks the count and sizes against the kernel's parameters", () => {
    const pack = new ArgPack(4);
    const sizes = [8, 8, 4];
    expect(() => pack.pack([new FakeBuffer(1n), new FakeBuffer(2n), u32(3)], sizes, 'add')).not.toThrow();
    expect(() => pack.pack([new FakeBuffer(1n), new FakeBuffer(2n)], sizes, 'add')).toThrow(/add takes 3 arguments, got 2/);
    expect(() => pack.pack([new FakeBuffer(1n), new FakeBuffer(2n), u64(3)], sizes, 'add')).toThrow(
      /add: argument 2 is u64\(3\) \(8 bytes\) but the kernel's parameter 2 is 4 bytes/,
    );
    expect(() => pack.pack([u32(1), new FakeBuffer(2n), u32(3)], sizes, 'add')).toThrow(/argument 0 is u32\(1\) \(4 bytes\)/);
  });

  it('refuses more arguments than it has slots', () => {
    const pack = new ArgPack(2);
    expect(() => pack.pack([u32(1), u32(2), u32(3)], undefined, 'k')).toThrow(/at most 2 arguments, got 3/);
  });

  it('passes structs by value at their alignment, then returns to plain slots', () => {
    const pack = new ArgPack(4);
    const tensorMap = new Uint8Array(128).map((_, i) => (i * 7) & 0xff);
    const slots = slotAddresses(pack.pack([u32(11), bytes(tensorMap, 64), f32(2.5)], [4, 128, 4], 'tma'), 3);
    expect(Number(slots[1]! % 64n)).toBe(0);
    expect([...new Uint8Array(koffi.decode(slots[1]!, 'uint8_t', 128) as number[])]).toEqual([...tensorMap]);
    expect(koffi.decode(slots[0]!, 'uint32_t')).toBe(11);
    expect(koffi.decode(slots[2]!, 'float')).toBe(2.5);
    expect(slots[2]! - slots[1]!).toBeGreaterThanOrEqual(128n);

    const plain = slotAddresses(pack.pack([u32(1), u32(2), u32(3)], undefined, 'k'), 3);
    expect(plain[2]! - plain[0]!).toBe(16n);
    expect(koffi.decode(plain[2]!, 'uint32_t')).toBe(3);
  });

  it('grows its value memory for large structs, keeping earlier arguments', () => {
    const pack = new ArgPack(4);
    const big = new Uint8Array(4000).fill(0xab);
    const slots = slotAddresses(pack.pack([f64(1.25), bytes(big), u32(9), u32(10)], undefined, 'k'), 4);
    expect(koffi.decode(slots[0]!, 'double')).toBe(1.25);
    expect(new Set(koffi.decode(slots[1]!, 'uint8_t', 4000) as number[])).toEqual(new Set([0xab]));
    expect(koffi.decode(slots[2]!, 'uint32_t')).toBe(9);
    expect(koffi.decode(slots[3]!, 'uint32_t')).toBe(10);
  });
});
