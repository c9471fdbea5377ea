/**
 * TMA tensor maps for the Hopper matmul: `cuTensorMapEncodeTiled` (CUDA 12.0+) bound through
 * the driver library loader, and the 2-D-plus-batch tiled maps the kernel loads its stages
 * with. A map is 128 opaque bytes passed to the kernel by value (`const __grid_constant__`).
 */
import { check } from '../../driver/cuda-error.js';
import { openLibcuda } from '../../driver/library.js';
import { InvalidArgumentError } from '../../errors.js';
import { TENSOR_MAP_BYTES } from '../../ffi/kernel-args.js';
import { lazyFunctions } from '../../ffi/lazy-functions.js';

const driver = lazyFunctions(openLibcuda, {
  cuTensorMapEncodeTiled:
    'int cuTensorMapEncodeTiled(void *tensorMap, int tensorDataType, uint32_t tensorRank, void *globalAddress, ' +
    'const uint64_t *globalDim, const uint64_t *globalStrides, const uint32_t *boxDim, const uint32_t *elementStrides, ' +
    'int interleave, int swizzle, int l2Promotion, int oobFill)',
});

/**
 * CUtensorMapDataType values used here. tf32 operands load as FLOAT32: wgmma's tf32 inputs
 * use the top 19 bits of each f32 (the low mantissa bits are ignored).
 */
export const TensorMapDataType = { FLOAT16: 6, FLOAT32: 7, BFLOAT16: 9 } as const;

const SWIZZLE_128B = 3;
const INTERLEAVE_NONE = 0;
const L2_PROMOTION_256B = 3;
const OOB_FILL_ZERO = 0;

/** A row-major matrix (or a batch of them, `batchStride` elements apart) seen by TMA. */
export interface TiledMatrix {
  dataType: number;
  elementBytes: number;
  address: bigint;
  /** Extent of the contiguous dim, and of the other one (elements). */
  cols: number;
  rows: number;
  /** Matrices in the batch (1 when one matrix serves every batch entry). */
  batch: number;
  /** Elements between consecutive matrices (ignored when batch is 1). */
  batchStride: number;
  /** Box copied per TMA instruction: boxCols (one 128-byte swizzle row) × boxRows. */
  boxCols: number;
  boxRows: number;
}

const dims = new BigUint64Array(3);
const strides = new BigUint64Array(2);
const box = new Uint32Array(3);
const elementStrides = new Uint32Array([1, 1, 1]);

/**
 * Encodes a 3-D tiled tensor map (cols, rows, batch) with 128-byte swizzling and zero fill
 * out of bounds into `into` (128 bytes). TMA needs a 16-byte-aligned base and row pitches
 * that are multiples of 16 bytes; the caller checks that (see `operandAligned`).
 */
export function encodeTiledMatrix(m: TiledMatrix, into: Uint8Array): void {
  if (into.byteLength !== TENSOR_MAP_BYTES) throw new InvalidArgumentError(`a tensor map needs ${TENSOR_MAP_BYTES} bytes`);
  const pitch = m.cols * m.elementBytes;
  if (m.address % 16n !== 0n || pitch % 16 !== 0) {
    throw new InvalidArgumentError(`TMA needs a 16-byte-aligned base and row pitch (got base ${m.address}, pitch ${pitch} bytes)`);
  }
  dims[0] = BigInt(m.cols);
  dims[1] = BigInt(m.rows);
  dims[2] = BigInt(m.batch);
  strides[0] = BigInt(pitch);
  // A single matrix still needs a well-formed batch pitch: one past its end.
  strides[1] = BigInt((m.batch > 1 ? m.batchStride : m.rows * m.cols) * m.elementBytes);
  box[0] = m.boxCols;
  box[1] = m.boxRows;
  box[2] = 1;
  check(
    driver.cuTensorMapEncodeTiled(
      into,
      m.dataType,
      3,
      m.address,
      dims,
      strides,
      box,
      elementStrides,
      INTERLEAVE_NONE,
      SWIZZLE_128B,
      L2_PROMOTION_256B,
      OOB_FILL_ZERO,
    ),
    'cuTensorMapEncodeTiled',
  );
}

/**
 * One tensor map's bytes, encoded again only when the matrix it describes changes: an encode is
 * a driver call of about half a microsecond, and a launcher that keeps a map per operand sees
 * the same tensors call after call.
 */
export class TiledMatrixMap {
  /** The encoded map, for a `tensorMap` launch slot (rewritten in place by {@link encode}). */
  readonly bytes = new Uint8Array(TENSOR_MAP_BYTES);
  #address = -1n;
  /** dataType, elementBytes, cols, rows, batch, batchStride, boxCols, boxRows of the last encode. */
  readonly #last = new Float64Array(8).fill(NaN);

  /** Encodes `m` (see {@link encodeTiledMatrix}) unless it is the matrix encoded last; returns {@link bytes}. */
  encode(m: TiledMatrix): Uint8Array {
    const last = this.#last;
    const batchStride = m.batch > 1 ? m.batchStride : 0;
    if (
      m.address !== this.#address ||
      m.dataType !== last[0] ||
      m.elementBytes !== last[1] ||
      m.cols !== last[2] ||
      m.rows !== last[3] ||
      m.batch !== last[4] ||
      batchStride !== last[5] ||
      m.boxCols !== last[6] ||
      m.boxRows !== last[7]
    ) {
      this.#address = -1n; // not a valid encode until the call below returns
      encodeTiledMatrix(m, this.bytes);
      this.#address = m.address;
      last[0] = m.dataType;
      last[1] = m.elementBytes;
      last[2] = m.cols;
      last[3] = m.rows;
      last[4] = m.batch;
      last[5] = batchStride;
      last[6] = m.boxCols;
      last[7] = m.boxRows;
    }
    return this.bytes;
  }
}
