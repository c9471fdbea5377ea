import type { PoolDevice, PoolEvent } from '../../../src/compute/gpu/memory-pool.js';

/** A stream for the pool tests: only identity matters. */
export interface FakeStream {
  readonly name: string;
}

/** An event whose completion the test controls. */
export class FakeEvent implements PoolEvent {
  complete = false;
  disposed = false;
  constructor(readonly stream: FakeStream) {}
  isComplete(): boolean {
    if (this.disposed) throw new Error('event used after dispose');
    return this.complete;
  }
  dispose(): void {
    if (this.disposed) throw new Error('event disposed twice');
    this.disposed = true;
  }
}

/**
 * A device with `capacity` bytes that hands out addresses from a bump counter
 * and refuses (returns undefined) when the live total would exceed capacity.
 */
export class FakeDevice implements PoolDevice<FakeStream> {
  readonly live = new Map<bigint, number>();
  readonly events: FakeEvent[] = [];
  allocations = 0;
  releases = 0;
  synchronizations = 0;
  private next = 0x10000n;

  constructor(public capacity = Number.MAX_SAFE_INTEGER) {}

  liveBytes = 0;

  allocate(bytes: number): bigint | undefined {
    if (this.liveBytes + bytes > this.capacity) return undefined;
    const address = this.next;
    this.next += BigInt(bytes) + 0x10000n;
    this.live.set(address, bytes);
    this.liveBytes += bytes;
    this.allocations++;
    return address;
  }

  release(address: bigint, bytes: number): void {
    if (this.live.get(address) !== bytes) throw new Error(`release of unknown segment ${address} (${bytes} bytes)`);
    this.live.delete(address);
    this.liveBytes -= bytes;
    this.releases++;
  }

  synchronize(): void {
    this.synchronizations++;
    for (const e of this.events) if (!e.disposed) e.complete = true;
  }

  memoryInfo(): { free: number; total: number } {
    return { free: this.capacity - this.liveBytes, total: this.capacity };
  }

  recordEvent(stream: FakeStream): FakeEvent {
    const event = new FakeEvent(stream);
    this.events.push(event);
    return event;
  }
}
