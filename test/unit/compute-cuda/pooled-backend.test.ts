/**
 * The memory, stream and ordering logic the CUDA and HIP backends share (PooledBackend), on a
 * recording fake runtime: no GPU needed. The real runtimes run it in the GPU suite.
 */
import { describe, expect, it } from 'vitest';
import { PooledBackend, type PooledRuntime, type PooledStream } from '../../../src/compute/gpu/pooled-backend.js';
import type { LaunchKernel } from '../../../src/compute/gpu/launch-context.js';
import { SegmentMemory } from '../../../src/compute/gpu/segment-memory.js';
import type { TensorView } from '../../../src/compute/core/view.js';
import { DisposedError, InvalidArgumentError } from '../../../src/errors.js';

/** What the fake runtime was asked to do, in order. */
type Call = string;

class FakeStream {
  disposed = false;
  constructor(
    readonly name: string,
    private readonly log: Call[],
  ) {}
  waitEvent(event: FakeEvent): void {
    this.log.push(`${this.name} waits ${event.name}`);
  }
  dispose(): void {
    this.disposed = true;
  }
}

class FakeEvent {
  constructor(
    readonly name: string,
    private readonly log: Call[],
  ) {}
  record(stream: FakeStream): void {
    this.log.push(`${this.name} recorded on ${stream.name}`);
  }
  dispose(): void {}
}

class FakeBackend extends PooledBackend<FakeStream, FakeEvent> {
  readonly multiprocessorCount = 1;
  readonly warpSize = 32;
  readonly clusterLaunch = false;
  settled = 0;
  released = 0;

  constructor(readonly log: Call[] = []) {
    let streams = 0;
    let events = 0;
    const runtime: PooledRuntime<FakeStream, FakeEvent> = {
      name: 'FAKE',
      createStream: () => new FakeStream(`s${streams++}`, log),
      createMarker: () => new FakeEvent(`e${events++}`, log),
      makeCurrent: () => {},
      write: (stream, dst, src) => log.push(`write ${src.byteLength} B to ${dst} on ${stream.name}`),
      read: (stream, dst, src) => log.push(`read ${dst.byteLength} B from ${src} on ${stream.name}`),
      readAsync: async (stream, dst, src) => {
        log.push(`readAsync ${dst.byteLength} B from ${src} on ${stream.name}`);
      },
      copy: (stream, dst, src, bytes) => log.push(`copy ${bytes} B ${src} → ${dst} on ${stream.name}`),
    };
    let next = 0x1000n;
    const memory = new SegmentMemory<PooledStream<FakeStream, FakeEvent>>({
      allocate: (bytes) => {
        const ptr = next;
        next += BigInt(bytes) + 0x1000n;
        return { ptr, dispose: () => {} };
      },
      synchronize: () => {},
      memoryInfo: () => ({ free: 1 << 30, total: 1 << 30 }),
      createEvent: () => ({ record: () => {}, query: () => true, dispose: () => {} }),
    });
    super(runtime, memory, {});
  }

  protected settle(): void {
    this.settled++;
  }
  protected releaseResources(): void {
    this.released++;
  }
  blockCounter(): bigint {
    return BigInt(this.currentStreamId);
  }
  kernel(): LaunchKernel<FakeStream> {
    throw new Error('the fake backend runs no kernels');
  }
}

const view = (backend: FakeBackend, bytes: number): TensorView => ({
  buffer: backend.alloc(bytes),
  dtype: 'f32',
  shape: [bytes / 4],
  offset: 0,
  size: bytes / 4,
});

describe('PooledBackend', () => {
  it('writes and reads through the runtime at the buffer address plus the offset, on the current stream', async () => {
    const be = new FakeBackend();
    const buf = be.alloc(1024);
    be.write(buf, new Float32Array(4), 16);
    be.read(buf, new Float32Array(2));
    await be.readAsync(buf, new Float32Array(8), 8);
    expect(be.log).toEqual([
      `write 16 B to ${buf.address + 16n} on s0`,
      `read 8 B from ${buf.address} on s0`,
      `readAsync 32 B from ${buf.address + 8n} on s0`,
    ]);
    be.write(buf, new Float32Array(0));
    expect(be.log).toHaveLength(3); // nothing to copy, no runtime call
    expect(be.memoryStats().inUseBytes).toBeGreaterThanOrEqual(1024);
  });

  it('refuses copies outside the buffer, freed buffers and buffers of another backend', () => {
    const be = new FakeBackend();
    const other = new FakeBackend();
    const buf = be.alloc(64);
    expect(() => be.write(buf, new Uint8Array(8), 60)).toThrow(InvalidArgumentError);
    expect(() => be.read(buf, new Uint8Array(8), -1)).toThrow(/does not fit a 64-byte buffer/);
    expect(() => other.write(buf, new Uint8Array(8))).toThrow(/not allocated by this FAKE backend/);
    be.free(buf);
    expect(() => be.free(buf)).toThrow(DisposedError);
    expect(() => be.read(buf, new Uint8Array(8))).toThrow(DisposedError);
    expect(be.log).toEqual([]);
  });

  it('hands a buffer over to another stream with one event, once', () => {
    const be = new FakeBackend();
    const x = view(be, 256);
    const s1 = be.createStream();
    be.setStream(s1);
    expect(be.enqueue(x).name).toBe('s1');
    expect(be.enqueue(x).name).toBe('s1');
    expect(be.log).toEqual(['e0 recorded on s0', 's1 waits e0']);
    expect(be.blockCounter()).toBe(1n);
    be.copy(view(be, 256), x); // both now on s1: no further hand-over
    expect(be.log.slice(2)).toEqual([expect.stringMatching(/^copy 256 B .* on s1$/)]);
  });

  it('refuses a stream of another backend', () => {
    const be = new FakeBackend();
    const other = new FakeBackend();
    expect(() => be.setStream(other.createStream())).toThrow(/not created by this FAKE backend/);
    expect(be.stream.name).toBe('s0'); // the current stream is unchanged
  });

  it('disposes once: waits for the device, frees its resources and streams, then refuses work', () => {
    const be = new FakeBackend();
    const first = be.stream;
    const buf = be.alloc(32);
    be.dispose();
    be.dispose();
    expect([be.settled, be.released, first.disposed]).toEqual([1, 1, true]);
    expect(() => be.alloc(8)).toThrow(/The FAKE backend/);
    expect(() => be.write(buf, new Uint8Array(4))).toThrow(DisposedError);
    be.free(buf); // freeing after dispose is harmless
  });
});
