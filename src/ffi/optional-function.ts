import type { NativeFunction } from './lazy-functions.js';
import type { NativeLibrary } from './library.js';

/**
 * Binds `prototype` when the library exports its symbol, else returns undefined: for entry
 * points that tell libraries apart (a vendor's own functions) or that only newer versions have.
 * Any other failure, such as a malformed prototype, is thrown.
 */
export function optionalFunction(lib: NativeLibrary, prototype: string): NativeFunction | undefined {
  try {
    return lib.func(prototype) as NativeFunction;
  } catch (err) {
    if (err instanceof Error && err.message.startsWith('Cannot find function')) return undefined;
    throw err;
  }
}
