import koffi from 'koffi';
import { describe, expect, it } from 'vitest';
import { LaunchAttributeId } from '../../../src/driver/generated/enums.js';
import { packLaunchConfig } from '../../../src/driver/raw/launch.js';
import { InvalidArgumentError } from '../../../src/errors.js';

// CUlaunchConfig and CUlaunchAttribute as cuda.h lays them out, to read the packed memory back.
const CUlaunchAttribute = koffi.struct('CUlaunchAttribute_test', {
  id: 'uint32_t',
  pad: 'uint32_t',
  value: koffi.array('uint32_t', 16),
});
const CUlaunchConfig = koffi.struct('CUlaunchConfig_test', {
  gridDimX: 'uint32_t',
  gridDimY: 'uint32_t',
  gridDimZ: 'uint32_t',
  blockDimX: 'uint32_t',
  blockDimY: 'uint32_t',
  blockDimZ: 'uint32_t',
  sharedMemBytes: 'uint32_t',
  hStream: 'uint64_t',
  attrs: 'uint64_t',
  numAttrs: 'uint32_t',
});

describe('packLaunchConfig', () => {
  it('has the sizes of the C structs', () => {
    expect(koffi.sizeof(CUlaunchConfig)).toBe(56);
    expect(koffi.sizeof(CUlaunchAttribute)).toBe(72);
  });

  it('writes a CUlaunchConfig with its attribute array', () => {
    const address = packLaunchConfig({
      grid: [132, 2, 1],
      block: [128, 1, 1],
      sharedMemBytes: 98304,
      stream: 0x7f00_1234_5678n,
      attributes: [
        { id: LaunchAttributeId.CLUSTER_DIMENSION, value: [2, 1, 1] },
        { id: LaunchAttributeId.COOPERATIVE, value: 1 },
        { id: LaunchAttributeId.PRIORITY, value: -3 },
      ],
    });
    const config = koffi.decode(address, CUlaunchConfig) as Record<string, number | bigint>;
    expect(config).toMatchObject({
      gridDimX: 132,
      gridDimY: 2,
      gridDimZ: 1,
      blockDimX: 128,
      blockDimY: 1,
      blockDimZ: 1,
      sharedMemBytes: 98304,
      numAttrs: 3,
    });
    expect(BigInt(config.hStream!)).toBe(0x7f00_1234_5678n);
    const attrs = koffi.decode(BigInt(config.attrs!), CUlaunchAttribute, 3) as { id: number; value: number[] }[];
    expect(attrs.map((a) => a.id)).toEqual([4, 2, 8]);
    expect([...attrs[0]!.value.slice(0, 3)]).toEqual([2, 1, 1]);
    expect(attrs[1]!.value[0]).toBe(1);
    expect(attrs[2]!.value[0]! | 0).toBe(-3);
  });

  it('clears the attributes of a previous call and passes NULL when there are none', () => {
    packLaunchConfig({ grid: [1, 1, 1], block: [1, 1, 1], sharedMemBytes: 0, stream: 0n, attributes: [{ id: 4, value: [9, 9, 9] }] });
    const address = packLaunchConfig({ grid: [5, 1, 1], block: [64, 1, 1], sharedMemBytes: 0, stream: 0n });
    const config = koffi.decode(address, CUlaunchConfig) as Record<string, number | bigint>;
    expect(BigInt(config.attrs!)).toBe(0n);
    expect(config.numAttrs).toBe(0);
    expect(config.gridDimX).toBe(5);
  });

  it('copies raw attribute bytes and refuses oversized ones', () => {
    const raw = new Uint8Array(64).map((_, i) => i);
    const address = packLaunchConfig({ grid: [1, 1, 1], block: [1, 1, 1], sharedMemBytes: 0, stream: 0n, attributes: [{ id: 1, value: raw }] });
    const config = koffi.decode(address, CUlaunchConfig) as Record<string, bigint>;
    const bytes = new Uint8Array(koffi.decode(BigInt(config.attrs!) + 8n, 'uint8_t', 64) as number[]);
    expect([...bytes]).toEqual([...raw]);
    expect(() =>
      packLaunchConfig({ grid: [1, 1, 1], block: [1, 1, 1], sharedMemBytes: 0, stream: 0n, attributes: [{ id: 1, value: new Uint8Array(65) }] }),
    ).toThrow(InvalidArgumentError);
  });
});
