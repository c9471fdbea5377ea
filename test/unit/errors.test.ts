import { describe, expect, it } from 'vitest';
import { GpuError, OutOfMemoryError } from '../../src/errors.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;
const TiB = 1024 * GiB;

describe('OutOfMemoryError', () => {
  it('writes each size in the unit that fits it', () => {
    const err = new OutOfMemoryError({
      requestedBytes: 4096,
      inUseBytes: 1.5 * MiB,
      limitBytes: 3 * GiB,
      deviceFreeBytes: 512,
      deviceTotalBytes: 80 * GiB,
    });
    expect(err.message).toBe(
      'Out of device memory: requested 4.00 KiB, in use 1.50 MiB, limit 3.00 GiB, device free 512 B of 80.0 GiB',
    );
  });

  it('keeps three significant digits from bytes to TiB', () => {
    const message = (requestedBytes: number) =>
      new OutOfMemoryError({ requestedBytes, inUseBytes: 0 }).message.match(/requested (.*?), in use/)![1];
    expect(message(0)).toBe('0 B');
    expect(message(1023)).toBe('1023 B');
    expect(message(4000)).toBe('3.91 KiB');
    expect(message(16 * MiB)).toBe('16.0 MiB');
    expect(message(512 * MiB)).toBe('512 MiB');
    expect(message(2.5 * TiB)).toBe('2.50 TiB');
    expect(message(4096 * TiB)).toBe('4096 TiB'); // no unit above TiB
  });

  it('says unknown for missing figures and none for no limit', () => {
    const err = new OutOfMemoryError({ requestedBytes: 4096, inUseBytes: 0 });
    expect(err.message).toBe('Out of device memory: requested 4.00 KiB, in use 0 B, limit none, device free unknown of unknown');
    const notANumber = new OutOfMemoryError({ requestedBytes: NaN, inUseBytes: 0, limitBytes: 1 });
    expect(notANumber.message).toMatch(/requested unknown, in use 0 B, limit 1 B/);
  });

  it('keeps its code and exact figures', () => {
    const err = new OutOfMemoryError({ requestedBytes: 4096, inUseBytes: 1, limitBytes: 4097, deviceFreeBytes: 2, deviceTotalBytes: 3 });
    expect(err).toBeInstanceOf(GpuError);
    expect(err).toMatchObject({ name: 'OutOfMemoryError', code: 'OUT_OF_MEMORY', requestedBytes: 4096, inUseBytes: 1, limitBytes: 4097 });
    expect(err).toMatchObject({ deviceFreeBytes: 2, deviceTotalBytes: 3 });
    const bare = new OutOfMemoryError({ requestedBytes: 1, inUseBytes: 0 });
    expect(bare).toMatchObject({ limitBytes: undefined, deviceFreeBytes: undefined, deviceTotalBytes: undefined });
  });
});
