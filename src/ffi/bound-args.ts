import koffi from 'koffi';
import { badSlot, boundCountError, checkSlot, ScalarViews, TENSOR_MAP_ALIGNMENT, TENSOR_MAP_BYTES, U64_MAX, type ArgType } from './kernel-args.js';

/** What a slot holds before its first write: equal to no value. */
const UNWRITTEN = Symbol('unwritten');
const SLOT_BYTES = 8;

/**
 * The argument memory of one declared-signature launcher (`Kernel.bind`): an 8-byte slot per
 * scalar argument, a 128-byte one (64-byte aligned) per tensor map, the `void *[]` pointing at
 * them (written once), and the value each scalar slot holds now.
 * A launch checks and writes only the slots whose value changed since the last one. Ops launch
 * the same kernel with the same buffers, sizes and scalars again and again, and until V8
 * optimises the launch path (dozens of passes) every range check and typed-array store runs in
 * the interpreter.
 *
 * Not re-entrant: the driver copies the arguments during the launch call.
 */
export class BoundArgs {
  readonly #types: readonly ArgType[];
  /** Per slot, the value written there (a `ptr` slot's address, not its buffer). */
  readonly #held: unknown[];
  readonly #scalars: ScalarViews;
  readonly #u64: BigUint64Array;
  /** The `void *[]`; kept referenced, as the value buffer is by #scalars, so the memory lives. */
  readonly #addresses: BigUint64Array;
  readonly #address: bigint;
  /** Per slot, the memory of a `tensorMap` slot (undefined for scalars). */
  readonly #maps: (Uint8Array | undefined)[];

  /** @param signature - slot types, already checked by the caller. */
  constructor(signature: readonly ArgType[]) {
    this.#types = [...signature];
    this.#held = this.#types.map(() => UNWRITTEN);
    const slots = Math.max(signature.length, 1);
    // ArrayBuffers, not small typed arrays: their memory is off the V8 heap and never moves.
    const values = new ArrayBuffer(slots * SLOT_BYTES);
    this.#scalars = new ScalarViews(values);
    this.#u64 = new BigUint64Array(values);
    this.#addresses = new BigUint64Array(new ArrayBuffer(slots * 8));
    const base = koffi.address(values);
    for (let i = 0; i < slots; i++) this.#addresses[i] = base + BigInt(i * SLOT_BYTES);
    const mapCount = this.#types.filter((type) => type === 'tensorMap').length;
    this.#maps = this.#types.map(() => undefined);
    if (mapCount > 0) {
      const memory = new ArrayBuffer(mapCount * TENSOR_MAP_BYTES + TENSOR_MAP_ALIGNMENT);
      const address = koffi.address(memory);
      let offset = Number((BigInt(TENSOR_MAP_ALIGNMENT) - (address % BigInt(TENSOR_MAP_ALIGNMENT))) % BigInt(TENSOR_MAP_ALIGNMENT));
      for (let i = 0; i < this.#types.length; i++) {
        if (this.#types[i] !== 'tensorMap') continue;
        this.#maps[i] = new Uint8Array(memory, offset, TENSOR_MAP_BYTES);
        this.#addresses[i] = address + BigInt(offset);
        offset += TENSOR_MAP_BYTES;
      }
    }
    this.#address = koffi.address(this.#addresses.buffer);
  }

  /**
   * Checks and writes one value per slot (see {@link checkSlot}) and returns the address of the
   * `void *[]` for cuLaunchKernel. A value that does not fit its slot throws before anything is
   * launched, however often the slot held a good one.
   *
   * @param kernelName - names the kernel in error messages.
   */
  write(values: ArrayLike<unknown>, kernelName: string): bigint {
    const held = this.#held;
    const count = held.length;
    if (values.length !== count) throw boundCountError(kernelName, count, values.length);
    const types = this.#types;
    for (let i = 0; i < count; i++) {
      const value = values[i];
      // 0 === -0: a zero is written again, so a float slot keeps the sign it was given.
      if (value === held[i] && value !== 0) continue;
      const type = types[i]!;
      if (type === 'tensorMap') {
        // Copied on every launch: the caller rewrites one map's bytes in place between launches.
        if (!(value instanceof Uint8Array) || value.byteLength !== TENSOR_MAP_BYTES) throw badSlot(kernelName, i, type, value);
        this.#maps[i]!.set(value);
        continue;
      }
      if (type === 'ptr' && typeof value === 'bigint' && value >= 0n && value <= U64_MAX) {
        // The slot that changes most (an op's buffers move in the pool), written without a call.
        this.#u64[i] = value;
        held[i] = value;
        continue;
      }
      // A buffer is checked on every launch (its ptr getter refuses a disposed buffer), then
      // written only where its address differs from the slot's.
      const checked = checkSlot(type, value, i, kernelName);
      if (checked !== value && checked === held[i]) continue;
      this.#scalars.write(i * SLOT_BYTES, type, checked);
      held[i] = checked;
    }
    return this.#address;
  }
}
