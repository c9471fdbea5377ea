/**
 * The slice of the JS WebAssembly API these files use, typed here because the project compiles
 * without the DOM library and @types/node 20 declares none of it. Kept structural and local (no
 * global declarations), so consumers' own WebAssembly typings never conflict.
 */

/** A compiled module; structured-cloneable to workers of the same process. */
export interface WasmModule {
  readonly __wasmModule?: never;
}

/** A linear memory; `shared: true` ones are what every thread instantiates the kernels with. */
export interface WasmMemory {
  readonly buffer: ArrayBuffer | SharedArrayBuffer;
  grow(pages: number): number;
}

/** A mutable global (the stack pointer). */
export interface WasmGlobal {
  value: number;
}

export interface WasmInstance {
  readonly exports: Record<string, unknown>;
}

interface WasmApi {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (module: WasmModule, imports: Record<string, Record<string, unknown>>) => WasmInstance;
  Memory: new (descriptor: { initial: number; maximum?: number; shared?: boolean }) => WasmMemory;
}

/** The engine's WebAssembly namespace. */
export const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
