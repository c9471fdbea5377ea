import koffi from 'koffi';
import { describe, expect, it } from 'vitest';
import { sharedWasmMemory } from './shared-wasm-memory.js';

/**
 * What the CPU backend relies on: koffi hands a native function the data pointer of a typed
 * array view (byteOffset included) in place, without a copy, for views into a SharedArrayBuffer
 * or a shared WebAssembly memory as for ordinary ones. libc's memset returns its pointer
 * argument, which shows the address koffi passed.
 */
describe.skipIf(process.platform !== 'linux')('koffi and views into shared memory', () => {
  const memset = koffi.load('libc.so.6').func('void *memset(void *s, int c, size_t n)');
  const address = (view: ArrayBufferView) => koffi.address(memset(view, 0, 0)) as bigint;

  it.each([
    ['a SharedArrayBuffer', () => new SharedArrayBuffer(4096)],
    ['a shared WebAssembly memory', () => sharedWasmMemory(1, 4).buffer],
    ['an ArrayBuffer', () => new ArrayBuffer(4096)],
  ])('passes the view of %s at its byte offset, in place', (_, make) => {
    const buffer = make();
    const base = address(new Uint8Array(buffer));
    for (const byteOffset of [0, 4, 12, 1028, 4092]) {
      const view = new Float32Array(buffer, byteOffset, (4096 - byteOffset) / 4);
      expect(address(view) - base).toBe(BigInt(byteOffset));
      expect(address(view.subarray(1)) - base).toBe(BigInt(byteOffset + 4));
    }
    // The same address on every call: no staging copy.
    expect(address(new Uint8Array(buffer))).toBe(base);
    // Native writes land in the JS-visible memory, inside the view's range only.
    const bytes = new Uint8Array(buffer);
    memset(new Float32Array(buffer, 8, 2), 0x3f, 8);
    expect([...bytes.subarray(4, 20)]).toEqual([0, 0, 0, 0, ...Array(8).fill(0x3f), 0, 0, 0, 0]);
  });

  it('keeps a shared WebAssembly memory in place when it grows', () => {
    const memory = sharedWasmMemory(1, 8);
    const before = address(new Uint8Array(memory.buffer));
    memory.grow(3);
    // A shared memory reserves its maximum up front: growing never moves it, so old views stay valid.
    expect(address(new Uint8Array(memory.buffer))).toBe(before);
  });
});
