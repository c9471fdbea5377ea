import type { BackendBuffer } from '../core/view.js';

/**
 * Host memory standing in for device memory on the CPU backend, with typed
 * views over the same bytes so ops read and write without copying.
 */
export class CpuBuffer implements BackendBuffer {
  readonly byteLength: number;
  readonly bytes: Uint8Array;
  readonly f32: Float32Array;
  readonly i32: Int32Array;
  /** 16-bit words (f16/bf16 bit patterns). */
  readonly u16: Uint16Array;
  /** 32-bit words, for bit-exact moves of f32/i32 data. */
  readonly u32: Uint32Array;

  constructor(byteLength: number) {
    this.byteLength = byteLength;
    // Rounded up to whole 32-bit words so every view covers the buffer.
    const storage = new ArrayBuffer(Math.ceil(byteLength / 4) * 4);
    this.bytes = new Uint8Array(storage, 0, byteLength);
    this.f32 = new Float32Array(storage);
    this.i32 = new Int32Array(storage);
    this.u16 = new Uint16Array(storage);
    this.u32 = new Uint32Array(storage);
  }
}
