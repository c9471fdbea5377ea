import type { PoolBlock } from '../gpu/memory-pool.js';
import type { BackendBuffer } from '../core/view.js';
import type { SimdRuntime } from './simd/runtime.js';
import type { WasmMemory } from './simd/wasm-api.js';

/**
 * Host memory standing in for device memory on the CPU backend: a block of the WebAssembly
 * kernels' shared linear memory (where the kernels and their workers read and write it in
 * place), or, when that memory is full or for a temporary, a SharedArrayBuffer of its own that
 * only the JS loops touch. Typed views over the buffer's bytes are made on first use; those of
 * a block stay valid when the memory grows, since a shared memory is never detached.
 *
 * Jobs queued for the workers may still read or write a block: each records the last one that
 * touches it ({@link CpuBuffer.lastUse}), and every typed view waits for that job before it is
 * handed out, so the host sees what the queued ops wrote and never writes under them. A view
 * kept across later ops is not waited for again.
 */
export class CpuBuffer implements BackendBuffer {
  readonly byteLength: number;
  /** The linear memory the buffer lives in, or undefined for a buffer of its own. */
  readonly memory: WasmMemory | undefined;
  /** Number of the last queued job that reads or writes the buffer (0: none). */
  lastUse = 0;
  readonly #runtime: SimdRuntime | undefined;
  /** Byte address of the first byte in {@link CpuBuffer.memory} (0 for a buffer of its own). */
  readonly address: number;
  /** The pool block it occupies, when in the linear memory. */
  readonly block: PoolBlock | undefined;
  readonly #storage: SharedArrayBuffer;
  #bytes: Uint8Array | undefined;
  #f32: Float32Array | undefined;
  #i32: Int32Array | undefined;
  #u16: Uint16Array | undefined;
  #u32: Uint32Array | undefined;

  /**
   * A buffer of its own of `byteLength` bytes, or, with `block`, the block's bytes of `memory`.
   * @throws RangeError when the engine cannot reserve the bytes.
   */
  constructor(byteLength: number, placement?: { runtime: SimdRuntime; block: PoolBlock }) {
    this.byteLength = byteLength;
    this.#runtime = placement?.runtime;
    if (placement) {
      this.memory = placement.runtime.memory;
      this.block = placement.block;
      this.address = Number(placement.block.address);
      // Taken now: the block lies inside the memory as it is at this point.
      this.#storage = placement.runtime.memory.buffer as SharedArrayBuffer;
    } else {
      this.memory = undefined;
      this.block = undefined;
      this.address = 0;
      // Rounded up to whole 32-bit words so every view covers the buffer.
      this.#storage = new SharedArrayBuffer(Math.ceil(byteLength / 4) * 4);
    }
  }

  get bytes(): Uint8Array {
    this.settle();
    return (this.#bytes ??= new Uint8Array(this.#storage, this.address, this.byteLength));
  }

  get f32(): Float32Array {
    this.settle();
    return (this.#f32 ??= new Float32Array(this.#storage, this.address, this.words(4)));
  }

  get i32(): Int32Array {
    this.settle();
    return (this.#i32 ??= new Int32Array(this.#storage, this.address, this.words(4)));
  }

  /** 16-bit words (f16/bf16 bit patterns). */
  get u16(): Uint16Array {
    this.settle();
    return (this.#u16 ??= new Uint16Array(this.#storage, this.address, this.words(2)));
  }

  /** 32-bit words, for bit-exact moves of f32/i32 data. */
  get u32(): Uint32Array {
    this.settle();
    return (this.#u32 ??= new Uint32Array(this.#storage, this.address, this.words(4)));
  }

  /** Waits for the queued jobs that use the buffer. */
  settle(): void {
    if (this.lastUse > 0) this.#runtime!.settle(this.lastUse);
  }

  /** {@link CpuBuffer.settle} without blocking the event loop. */
  async settleAsync(): Promise<void> {
    if (this.lastUse > 0) await this.#runtime!.settleAsync(this.lastUse);
  }

  /** Whole words of `size` bytes covering the buffer (a block is at least 512 bytes, so they fit). */
  private words(size: number): number {
    return Math.ceil(this.byteLength / 4) * (4 / size);
  }
}
