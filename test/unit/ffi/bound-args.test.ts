import koffi from 'koffi';
import { describe, expect, it } from 'vitest';
import { BoundArgs } from '../../../src/ffi/bound-args.js';
import type { ArgType } from '../../../src/ffi/kernel-args.js';

/** The value the driver would read from slot `index` of the `void *[]` at `address`. */
function slot(address: bigint, index: number, type: string): number | bigint {
  const entry = BigInt(koffi.decode(address, 'uint64_t', index + 1)[index] as number | bigint);
  const value = koffi.decode(entry, type) as number | bigint;
  return type.includes('64_t') ? BigInt(value) : value;
}

/** A stand-in for DeviceBuffer: a `ptr` getter that refuses once disposed. */
class FakeBuffer {
  disposed = false;
  reads = 0;
  constructor(public address: bigint) {}
  get ptr(): bigint {
    this.reads++;
    if (this.disposed) throw new Error('disposed');
    return this.address;
  }
}

describe('BoundArgs', () => {
  const signature: ArgType[] = ['ptr', 'ptr', 'u32', 'f32', 'i64'];

  it('writes each launch its own values, repeated and changed ones alike', () => {
    const args = new BoundArgs(signature);
    const a = new FakeBuffer(0x1000n);
    let at = args.write([a, 0x2000n, 7, 0.5, -3], 'k');
    expect([slot(at, 0, 'uint64_t'), slot(at, 1, 'uint64_t'), slot(at, 2, 'uint32_t'), slot(at, 3, 'float'), slot(at, 4, 'int64_t')]).toEqual([
      0x1000n,
      0x2000n,
      7,
      0.5,
      -3n,
    ]);
    a.address = 0x3000n;
    at = args.write([a, 0x2000n, 8, 0.5, 2n ** 40n], 'k');
    expect([slot(at, 0, 'uint64_t'), slot(at, 1, 'uint64_t'), slot(at, 2, 'uint32_t'), slot(at, 3, 'float'), slot(at, 4, 'int64_t')]).toEqual([
      0x3000n,
      0x2000n,
      8,
      0.5,
      2n ** 40n,
    ]);
  });

  it('gives a float slot the sign of a zero after the other zero', () => {
    const args = new BoundArgs(['f32']);
    args.write([0], 'k');
    const at = args.write([-0], 'k');
    expect(Object.is(slot(at, 0, 'float'), -0)).toBe(true);
  });

  it('reads a buffer on every launch, so a disposed one is refused after a good launch', () => {
    const args = new BoundArgs(['ptr']);
    const a = new FakeBuffer(0x1000n);
    args.write([a], 'k');
    args.write([a], 'k');
    expect(a.reads).toBeGreaterThanOrEqual(2);
    a.disposed = true;
    expect(() => args.write([a], 'k')).toThrow('disposed');
  });

  it('refuses a bad value however often the slot held a good one', () => {
    const args = new BoundArgs(signature);
    args.write([0x1000n, 0x2000n, 7, 0.5, 1], 'k');
    expect(() => args.write([0x1000n, 4096, 7, 0.5, 1], 'k')).toThrow(/k: argument 1 is declared ptr and needs a bigint device address/);
    expect(() => args.write([0x1000n, -1n, 7, 0.5, 1], 'k')).toThrow(/argument 1 is declared ptr/);
    expect(() => args.write([0x1000n, 0x2000n, 1.5, 0.5, 1], 'k')).toThrow(/argument 2 is declared u32/);
    // A slot left half-written by a refused launch is checked again on the next.
    expect(() => args.write([0x1000n, 0x2000n, 7, 0.5, 2 ** 60], 'k')).toThrow(/argument 4 is declared i64/);
    const at = args.write([0x1000n, 0x2000n, 7, 0.5, 1], 'k');
    expect(slot(at, 4, 'int64_t')).toBe(1n);
  });

  it('refuses the wrong number of values', () => {
    expect(() => new BoundArgs(signature).write([1n, 2n, 3], 'add')).toThrow(/add was bound to 5 arguments, got 3/);
  });

  it('passes tensor maps by value from 64-byte-aligned slots, copying the bytes on every launch', () => {
    const args = new BoundArgs(['tensorMap', 'ptr', 'tensorMap', 'i32']);
    const mapA = new Uint8Array(128).map((_, i) => i);
    const mapB = new Uint8Array(128).fill(7);
    let at = args.write([mapA, 0x1000n, mapB, 5], 'k');
    const entries = koffi.decode(at, 'uint64_t', 4) as (number | bigint)[];
    const bytesAt = (index: number) => Uint8Array.from(koffi.decode(BigInt(entries[index]!), 'uint8_t', 128) as number[]);
    expect(BigInt(entries[0]!) % 64n).toBe(0n);
    expect(BigInt(entries[2]!) % 64n).toBe(0n);
    expect(bytesAt(0)).toEqual(mapA);
    expect(bytesAt(2)).toEqual(mapB);
    expect([slot(at, 1, 'uint64_t'), slot(at, 3, 'int32_t')]).toEqual([0x1000n, 5]);
    // The same array rewritten in place (as an encoder does) reaches the next launch.
    mapA.fill(9);
    at = args.write([mapA, 0x1000n, mapB, 5], 'k');
    expect(bytesAt(0)).toEqual(new Uint8Array(128).fill(9));
  });

  it.each([
    ['a short array', new Uint8Array(64)],
    ['a number', 0],
    ['a bigint', 0x1000n],
  ])('refuses %s in a tensorMap slot', (_label, value) => {
    expect(() => new BoundArgs(['tensorMap']).write([value], 'k')).toThrow(/k: argument 0 is declared tensorMap and needs a Uint8Array of the map's 128 bytes/);
  });

  it('writes the i64 and u64 extremes', () => {
    const at = new BoundArgs(['i64', 'u64']).write([-9, 2n ** 63n], 'k');
    expect([slot(at, 0, 'int64_t'), slot(at, 1, 'uint64_t')]).toEqual([-9n, 2n ** 63n]);
  });

  it.each([
    ['a number in a ptr slot', ['ptr'], [4096], /argument 0 is declared ptr and needs a bigint device address or a DeviceBuffer \(never a number\), got 4096/],
    ['a negative i32 overflow', ['i32'], [2 ** 31], /declared i32 and needs an integer in \[-2\^31, 2\^31\)/],
    ['a fraction in a u32 slot', ['u32'], [1.5], /declared u32/],
    ['a bigint in a u32 slot', ['u32'], [1n], /declared u32/],
    ['a string in an f32 slot', ['f32'], ['1'], /declared f32 and needs a number, got 1/],
    ['a negative u64', ['u64'], [-1], /declared u64/],
    ['an unsafe integer in an i64 slot', ['i64'], [2 ** 60], /declared i64/],
    ['an object without ptr', ['ptr'], [{}], /got Object/],
  ] as const)('refuses %s', (_label, sig, values, message) => {
    expect(() => new BoundArgs(sig as readonly ArgType[]).write(values as readonly unknown[], 'k')).toThrow(message);
  });
});
