/// <reference types="@webgpu/types" />
/**
 * Host → device writes. WebGPU writes and copies move whole 4-byte words, so the words a write
 * fills go up as a block and a partly covered word at either end (a 16-bit view at an odd
 * element) is merged on the device by a one-invocation kernel under a byte mask.
 *
 * Order: `queue.writeBuffer` takes effect before anything submitted later but after what is
 * already submitted, so it is used directly only when nothing is recorded and unsubmitted;
 * otherwise the bytes go into a fresh mapped buffer and a copy is recorded in the batch (no
 * submit needed), the buffer destroyed once the batch is submitted.
 */
import type { KernelSpec } from './wgsl.js';
import type { WebGpuOpContext } from './op-context.js';
import type { WebGpuBuffer } from './webgpu-memory.js';

const POKE: KernelSpec = {
  key: 'poke',
  op: 'write',
  files: ['poke.wgsl'],
  roles: [{ name: 'out', dtype: 'i32', write: true }],
  params: [['mask', 'u32'], ['value', 'u32']],
};

/** Writes `bytes` at `byteOffset` of `buf`, in order with the work recorded so far. */
export function writeBytes(ctx: WebGpuOpContext, buf: WebGpuBuffer, byteOffset: number, bytes: Uint8Array): void {
  const start = buf.byteOffset + byteOffset;
  const end = start + bytes.length;
  const first = Math.ceil(start / 4) * 4;
  const last = Math.floor(end / 4) * 4;
  if (last <= first) {
    // No whole word: each word touched is merged (two at most).
    for (let word = start & ~3; word < end; word += 4) poke(ctx, buf, Math.max(start, word), Math.min(end, word + 4), bytes, start);
    return;
  }
  if (start < first) poke(ctx, buf, start, first, bytes, start);
  upload(ctx, buf, first, bytes.subarray(first - start, last - start));
  if (last < end) poke(ctx, buf, last, end, bytes, start);
}

/** Bytes [from, to) of one word (absolute segment offsets), taken from `bytes` (which starts at `origin`). */
function poke(ctx: WebGpuOpContext, buf: WebGpuBuffer, from: number, to: number, bytes: Uint8Array, origin: number): void {
  const word = from & ~3;
  let mask = 0;
  let value = 0;
  for (let p = from; p < to; p++) {
    const shift = (p - word) * 8;
    mask |= 0xff << shift;
    value |= bytes[p - origin]! << shift;
  }
  const view = { buffer: buf, dtype: 'i32' as const, shape: [1], offset: (word - buf.byteOffset) / 4, size: 1 };
  ctx.dispatcher.run(POKE, [view], [mask >>> 0, value >>> 0], [1]);
}

/** Whole words at `at` (a multiple of 4 in the segment). */
function upload(ctx: WebGpuOpContext, buf: WebGpuBuffer, at: number, words: Uint8Array): void {
  const { device, globals } = ctx.dev;
  if (!ctx.batch.pending) {
    device.queue.writeBuffer(buf.segment.buffer, at, words);
    return;
  }
  const staging = device.createBuffer({ size: words.byteLength, usage: globals.GPUBufferUsage.COPY_SRC, mappedAtCreation: true, label: 'gpucompute upload' });
  new Uint8Array(staging.getMappedRange()).set(words);
  staging.unmap();
  ctx.batch.encoder('write').copyBufferToBuffer(staging, 0, buf.segment.buffer, at, words.byteLength);
  ctx.batch.afterSubmit(() => staging.destroy());
}
