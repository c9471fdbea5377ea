import { ArgPack, boundCountError, checkSlot, type ArgType } from './kernel-args.js';

/** What a slot holds before its first write: equal to no value. */
const UNWRITTEN = Symbol('unwritten');

/**
 * The argument memory of one declared-signature launcher (`Kernel.bind`): an {@link ArgPack} of
 * the signature's size, and the value each slot holds now. A launch checks and writes only the
 * slots whose value changed since the last one. Ops launch the same kernel with the same buffers,
 * sizes and scalars again and again, and until V8 optimises the launch path (dozens of passes)
 * every range check and typed-array store runs in the interpreter.
 *
 * Not re-entrant, as ArgPack: the driver copies the arguments during the launch call.
 */
export class BoundArgs {
  readonly #pack: ArgPack;
  readonly #types: readonly ArgType[];
  /** Per slot, the value written there (a `ptr` slot's address, not its buffer). */
  readonly #held: unknown[];

  /** @param signature - slot types, already checked by the caller. */
  constructor(signature: readonly ArgType[]) {
    this.#types = [...signature];
    this.#held = this.#types.map(() => UNWRITTEN);
    this.#pack = new ArgPack(Math.max(signature.length, 1));
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
      // A buffer is checked on every launch (its ptr getter refuses a disposed buffer), then
      // written only where its address differs from the slot's.
      const checked = checkSlot(type, value, i, kernelName);
      if (checked === held[i] && checked !== 0) continue;
      this.#pack.writeSlot(i, type, checked);
      held[i] = checked;
    }
    return this.#pack.address;
  }
}
