import type { Context, Stream } from '../src/driver/index.js';
import { Event } from '../src/driver/index.js';
import { median } from './report.js';

/** How {@link DeviceTimer.time} repeats the work it times. */
export interface TimingOptions {
  /** Calls before timing (module loads, first-touch and caches out of the numbers). */
  warmup?: number;
  /** Device time each timed batch of calls aims at, in ms. */
  targetMs?: number;
  /** Timed batches; the median is reported. */
  reps?: number;
}

/** Times work enqueued on one stream with a pair of events, as METHOD.md asks. */
export class DeviceTimer {
  readonly #stream: Stream;
  readonly #start: Event;
  readonly #end: Event;

  constructor(context: Context, stream: Stream) {
    this.#stream = stream;
    this.#start = Event.create(context);
    this.#end = Event.create(context);
  }

  /** Median µs per call of `fn`, from events around batches of back-to-back calls. */
  time(fn: () => void, { warmup = 3, targetMs = 20, reps = 7 }: TimingOptions = {}): number {
    for (let i = 0; i < warmup; i++) fn();
    const once = Math.max(this.#batchMs(fn, 1), 1e-3);
    const iters = Math.max(1, Math.min(2000, Math.floor(targetMs / once)));
    const samples: number[] = [];
    for (let r = 0; r < reps; r++) samples.push((this.#batchMs(fn, iters) * 1000) / iters);
    return median(samples);
  }

  /**
   * Median µs per call of each of `fns`, their timed batches taken in turn (a batch of each, then
   * the next round), so that all of them see the same clocks: a power-limited part slows down as it
   * warms, and work timed later would otherwise look slower than work timed first.
   */
  interleaved(fns: readonly (() => void)[], { warmup = 3, targetMs = 20, reps = 7 }: TimingOptions = {}): number[] {
    const iters = fns.map((fn) => {
      for (let i = 0; i < warmup; i++) fn();
      const once = Math.max(this.#batchMs(fn, 1), 1e-3);
      return Math.max(1, Math.min(2000, Math.floor(targetMs / once)));
    });
    const samples = fns.map((): number[] => []);
    for (let r = 0; r < reps; r++) fns.forEach((fn, i) => samples[i]!.push((this.#batchMs(fn, iters[i]!) * 1000) / iters[i]!));
    return samples.map(median);
  }

  #batchMs(fn: () => void, iters: number): number {
    this.#start.record(this.#stream);
    for (let i = 0; i < iters; i++) fn();
    this.#end.record(this.#stream);
    this.#end.synchronize();
    return this.#end.elapsedMs(this.#start);
  }
}
