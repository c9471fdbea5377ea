import { InvalidArgumentError } from '../errors.js';
import { getUniqueId } from './raw/comm.js';
import { NCCL_UNIQUE_ID_BYTES } from './types.js';

/**
 * The 128 bytes (`ncclUniqueId`) by which the ranks of one communicator find each other. One
 * process makes it ({@link NcclUniqueId.create}), the user's own channel carries it to every
 * other rank (an environment variable, a file, a socket: {@link NcclUniqueId.toBase64} and
 * {@link NcclUniqueId.fromBase64} make it text), and each rank passes it to
 * `NcclCommunicator.initRank`. An id serves one communicator: make a new one for the next.
 */
export class NcclUniqueId {
  /**
   * ncclGetUniqueId: a new id. The process that makes it hosts the ranks' rendezvous (a thread
   * NCCL starts), so it must stay alive until every rank has joined; it need not be a rank.
   */
  static create(): NcclUniqueId {
    return new NcclUniqueId(getUniqueId());
  }

  /** The id whose bytes these are (copied), e.g. received from rank 0. */
  static fromBytes(bytes: Uint8Array): NcclUniqueId {
    if (!(bytes instanceof Uint8Array)) throw new InvalidArgumentError(`NcclUniqueId.fromBytes: bytes must be a Uint8Array, got ${typeof bytes}`);
    if (bytes.byteLength !== NCCL_UNIQUE_ID_BYTES) {
      throw new InvalidArgumentError(`NcclUniqueId.fromBytes: an id is ${NCCL_UNIQUE_ID_BYTES} bytes, got ${bytes.byteLength}`);
    }
    return new NcclUniqueId(Uint8Array.from(bytes));
  }

  /** The id {@link NcclUniqueId.toBase64} wrote. */
  static fromBase64(text: string): NcclUniqueId {
    if (typeof text !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) {
      throw new InvalidArgumentError(`NcclUniqueId.fromBase64: not base64 text: ${JSON.stringify(String(text).slice(0, 40))}`);
    }
    const bytes = Buffer.from(text, 'base64');
    if (bytes.byteLength !== NCCL_UNIQUE_ID_BYTES) {
      throw new InvalidArgumentError(`NcclUniqueId.fromBase64: decodes to ${bytes.byteLength} bytes, an id is ${NCCL_UNIQUE_ID_BYTES}`);
    }
    return new NcclUniqueId(new Uint8Array(bytes));
  }

  readonly #bytes: Uint8Array;

  private constructor(bytes: Uint8Array) {
    this.#bytes = bytes;
  }

  /** A copy of the 128 bytes. */
  get bytes(): Uint8Array {
    return Uint8Array.from(this.#bytes);
  }

  /** The bytes as base64 text (172 characters), for an environment variable or a message. */
  toBase64(): string {
    return Buffer.from(this.#bytes).toString('base64');
  }

  /** @internal The bytes themselves, for ncclCommInitRank. */
  get internal(): Uint8Array {
    return this.#bytes;
  }
}
