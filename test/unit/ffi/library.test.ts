import { afterEach, describe, expect, it } from 'vitest';
import { LibraryNotFoundError } from '../../../src/errors.js';
import { openLibrary, resetLibraryCache, type LibrarySpec } from '../../../src/ffi/library.js';
import { optionalFunction } from '../../../src/ffi/optional-function.js';

const LIBC = 'libc.so.6';

afterEach(() => resetLibraryCache());

describe.skipIf(process.platform !== 'linux')('openLibrary with a check', () => {
  it('refuses a candidate the check rejects, says why, and takes the next one', () => {
    const seen: string[] = [];
    const spec: LibrarySpec = {
      name: 'libc twice',
      envVar: 'GPUCOMPUTE_TEST_NO_SUCH_VAR',
      candidates: () => ['/nowhere/libc.so.6', LIBC, 'libm.so.6'],
      check: (lib, path) => {
        seen.push(path);
        // libm has cos; libc does not.
        return optionalFunction(lib, 'double cos(double x)') ? undefined : 'no cos, refused for the test';
      },
    };
    const loaded = openLibrary(spec);
    expect(loaded.path).toBe('libm.so.6');
    expect(seen).toEqual([LIBC, 'libm.so.6']);
    expect(loaded.tried).toEqual([
      { path: '/nowhere/libc.so.6', error: 'no such file' },
      { path: LIBC, error: 'no cos, refused for the test' },
    ]);
  });

  it('lists the refusal in LibraryNotFoundError when every candidate is refused', () => {
    const spec: LibrarySpec = { name: 'nothing acceptable', envVar: 'GPUCOMPUTE_TEST_NO_SUCH_VAR', candidates: () => [LIBC], check: () => 'never good enough' };
    expect(() => openLibrary(spec)).toThrow(LibraryNotFoundError);
    try {
      openLibrary(spec);
    } catch (err) {
      expect((err as LibraryNotFoundError).attempts).toEqual([{ path: LIBC, error: 'never good enough' }]);
      expect((err as Error).message).toContain('never good enough');
    }
  });
});

describe.skipIf(process.platform !== 'linux')('optionalFunction', () => {
  it('binds a present symbol, returns undefined for a missing one, and throws on a malformed prototype', () => {
    const libc = openLibrary({ name: 'libc', envVar: 'GPUCOMPUTE_TEST_NO_SUCH_VAR', candidates: () => [LIBC] }).lib;
    expect(Number(optionalFunction(libc, 'size_t strlen(const char *s)')!('four'))).toBe(4);
    expect(optionalFunction(libc, 'int gpucompute_no_such_symbol(void)')).toBeUndefined();
    expect(() => optionalFunction(libc, 'int strlen(no_such_type s)')).toThrow(/no_such_type/);
  });
});
