import koffi from 'koffi';
import { InvalidArgumentError } from '../../errors.js';
import { cuda } from '../bindings.js';
import { check } from '../cuda-error.js';
import type { LaunchAttributeId } from '../generated/enums.js';
import type { CUfunction, CUstream } from './handles.js';

/**
 * One cuLaunchKernelEx attribute. `value` is written into the 64-byte
 * CUlaunchAttributeValue union: a number as its int member (cooperative,
 * priority, ...), three numbers as its `dim3`-like member (cluster
 * dimensions), or raw bytes for the struct-valued members.
 */
export interface LaunchAttribute {
  readonly id: LaunchAttributeId;
  readonly value: number | readonly [number, number, number] | Uint8Array;
}

/** The CUlaunchConfig of cuLaunchKernelEx, as plain data. */
export interface LaunchConfig {
  readonly grid: readonly [number, number, number];
  readonly block: readonly [number, number, number];
  readonly sharedMemBytes: number;
  readonly stream: CUstream;
  readonly attributes?: readonly LaunchAttribute[];
}

/**
 * cuLaunchKernel. `params` is the address of the `void *[]` holding one
 * pointer per kernel parameter (see ArgPack in ffi/kernel-args), 0n when the
 * kernel takes none.
 */
export function launchKernel(
  fn: CUfunction,
  gridX: number,
  gridY: number,
  gridZ: number,
  blockX: number,
  blockY: number,
  blockZ: number,
  sharedMemBytes: number,
  stream: CUstream,
  params: bigint,
): void {
  // `extra` is NULL as the address 0n: koffi converts a bigint faster than null (about 17 ns a call).
  check(
    cuda.cuLaunchKernel(fn, gridX, gridY, gridZ, blockX, blockY, blockZ, sharedMemBytes, stream, params, 0n),
    'cuLaunchKernel',
  );
}

/** cuLaunchCooperativeKernel: like {@link launchKernel}, with grid-wide synchronisation allowed. */
export function launchCooperativeKernel(
  fn: CUfunction,
  gridX: number,
  gridY: number,
  gridZ: number,
  blockX: number,
  blockY: number,
  blockZ: number,
  sharedMemBytes: number,
  stream: CUstream,
  params: bigint,
): void {
  check(
    cuda.cuLaunchCooperativeKernel(fn, gridX, gridY, gridZ, blockX, blockY, blockZ, sharedMemBytes, stream, params),
    'cuLaunchCooperativeKernel',
  );
}

// CUlaunchConfig is 56 bytes; CUlaunchAttribute is 72 (id, 4 bytes of padding, a 64-byte union).
const ATTRIBUTE_BYTES = 72;
const ATTRIBUTES_OFFSET = 64;
const MAX_ATTRIBUTES = 16;

const configMemory = new ArrayBuffer(ATTRIBUTES_OFFSET + MAX_ATTRIBUTES * ATTRIBUTE_BYTES);
const configU32 = new Uint32Array(configMemory);
const configI32 = new Int32Array(configMemory);
const configU64 = new BigUint64Array(configMemory);
const configBytes = new Uint8Array(configMemory);
const configAddress = koffi.address(configMemory);
const attributesAddress = configAddress + BigInt(ATTRIBUTES_OFFSET);

/** cuLaunchKernelEx: a launch with attributes (cluster dimensions, cooperative, priority, ...). */
export function launchKernelEx(config: LaunchConfig, fn: CUfunction, params: bigint): void {
  check(cuda.cuLaunchKernelEx(packLaunchConfig(config), fn, params, null), 'cuLaunchKernelEx');
}

/**
 * Writes `config` as a C CUlaunchConfig (and its attribute array) into memory
 * reused by every call, and returns its address, valid until the next call.
 */
export function packLaunchConfig(config: LaunchConfig): bigint {
  const attributes = config.attributes ?? [];
  if (attributes.length > MAX_ATTRIBUTES) {
    throw new InvalidArgumentError(`cuLaunchKernelEx takes at most ${MAX_ATTRIBUTES} attributes here, got ${attributes.length}`);
  }
  configBytes.fill(0, 0, ATTRIBUTES_OFFSET + attributes.length * ATTRIBUTE_BYTES);
  configU32[0] = config.grid[0];
  configU32[1] = config.grid[1];
  configU32[2] = config.grid[2];
  configU32[3] = config.block[0];
  configU32[4] = config.block[1];
  configU32[5] = config.block[2];
  configU32[6] = config.sharedMemBytes;
  configU64[4] = config.stream; // byte 32
  configU64[5] = attributes.length > 0 ? attributesAddress : 0n; // byte 40
  configU32[12] = attributes.length; // byte 48
  attributes.forEach((attribute, i) => writeAttribute(ATTRIBUTES_OFFSET + i * ATTRIBUTE_BYTES, attribute));
  return configAddress;
}

function writeAttribute(byteOffset: number, { id, value }: LaunchAttribute): void {
  configU32[byteOffset / 4] = id;
  const valueOffset = byteOffset + 8;
  if (typeof value === 'number') {
    configI32[valueOffset / 4] = value;
  } else if (value instanceof Uint8Array) {
    if (value.byteLength > 64) throw new InvalidArgumentError(`a launch attribute value is at most 64 bytes, got ${value.byteLength}`);
    configBytes.set(value, valueOffset);
  } else {
    configU32[valueOffset / 4] = value[0];
    configU32[valueOffset / 4 + 1] = value[1];
    configU32[valueOffset / 4 + 2] = value[2];
  }
}

