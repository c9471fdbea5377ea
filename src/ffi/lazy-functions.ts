import { MissingSymbolError } from '../errors.js';
import type { LoadedLibrary, NativeLibrary } from './library.js';

/** A bound native function as koffi returns it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type NativeFunction = ((...args: any[]) => any) & { async: (...args: any[]) => void };

/**
 * Declares native functions by C prototype and binds each one the first time it
 * is used, so a library that lacks a newer entry point still loads and only the
 * call that needs it fails, with {@link MissingSymbolError} naming the symbol.
 *
 * @param open - loads the library (cached by the caller); called on first use.
 * @param prototypes - map from JS name to the koffi C prototype string.
 */
export function lazyFunctions<K extends string>(
  open: () => LoadedLibrary,
  prototypes: Record<K, string>,
): Record<K, NativeFunction> {
  const bound = {} as Record<K, NativeFunction>;
  for (const key of Object.keys(prototypes) as K[]) {
    Object.defineProperty(bound, key, {
      enumerable: true,
      configurable: true,
      get() {
        const { lib, path } = open();
        const fn = bindOne(lib, path, prototypes[key]);
        // Replace the getter so later uses cost a plain property read.
        Object.defineProperty(bound, key, { value: fn, enumerable: true });
        return fn;
      },
    });
  }
  return bound;
}

function bindOne(lib: NativeLibrary, path: string, prototype: string): NativeFunction {
  try {
    return lib.func(prototype) as NativeFunction;
  } catch (err) {
    const symbol = /([A-Za-z_][A-Za-z0-9_]*)\s*\(/.exec(prototype)?.[1] ?? prototype;
    throw new MissingSymbolError(path, symbol, err);
  }
}
