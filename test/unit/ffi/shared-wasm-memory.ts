/** The part of a shared WebAssembly.Memory the tests use. */
export interface SharedWasmMemory {
  readonly buffer: SharedArrayBuffer;
  /** Adds 64 KiB pages; returns the previous size in pages. */
  grow(pages: number): number;
}

/**
 * A shared WebAssembly memory, as the CPU backend's tensors will live in. The project compiles
 * against Node's types without the DOM library, which is where TypeScript declares WebAssembly.
 */
export function sharedWasmMemory(initialPages: number, maximumPages: number): SharedWasmMemory {
  const { WebAssembly: wasm } = globalThis as unknown as {
    WebAssembly: { Memory: new (descriptor: { initial: number; maximum: number; shared: true }) => SharedWasmMemory };
  };
  return new wasm.Memory({ initial: initialPages, maximum: maximumPages, shared: true });
}
