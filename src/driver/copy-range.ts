import { InvalidArgumentError } from '../errors.js';

/**
 * The byte count of a copy between a device buffer and another memory (host
 * view, pinned buffer or device buffer), checked before the driver sees it.
 *
 * - Neither `byteOffset` nor `byteLength` given: a whole-buffer copy, and the
 *   two sizes must be equal (a Float64Array into a float32 buffer is a bug).
 * - `byteOffset` given: the other memory lands at that offset of the device
 *   buffer and must fit.
 * - `byteLength` given: that many bytes, which both sides must hold.
 *
 * @param what - names the operation in error messages, e.g. "copyFromHost".
 * @param deviceBytes - the device buffer's size.
 * @param otherBytes - the size of the other side.
 */
export function copyByteLength(
  what: string,
  deviceBytes: number,
  otherBytes: number,
  byteOffset: number | undefined,
  byteLength: number | undefined,
): number {
  if (byteOffset === undefined && byteLength === undefined) {
    if (otherBytes !== deviceBytes) {
      throw new InvalidArgumentError(
        `${what}: sizes differ (${otherBytes} bytes vs the buffer's ${deviceBytes}); ` +
          'pass byteOffset / byteLength to copy part of a buffer',
      );
    }
    return deviceBytes;
  }
  const offset = byteOffset ?? 0;
  if (!Number.isSafeInteger(offset) || offset < 0) {
    throw new InvalidArgumentError(`${what}: byteOffset ${offset} is not a non-negative integer`);
  }
  const length = byteLength ?? otherBytes;
  if (!Number.isSafeInteger(length) || length < 0) {
    throw new InvalidArgumentError(`${what}: byteLength ${length} is not a non-negative integer`);
  }
  if (length > otherBytes) {
    throw new InvalidArgumentError(`${what}: byteLength ${length} exceeds the ${otherBytes} bytes on the other side`);
  }
  if (offset + length > deviceBytes) {
    throw new InvalidArgumentError(
      `${what}: ${length} bytes at byteOffset ${offset} run past the end of the ${deviceBytes}-byte buffer`,
    );
  }
  return length;
}
