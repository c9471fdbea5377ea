/**
 * Event timing for the matmul autotuner: how long one call of a launch sequence takes on
 * the backend's current stream, measured on the GPU (not the host), warm.
 */
import { Event } from '../../../driver/event.js';
import type { CudaContext } from '../cuda-context.js';

/** Enough repetitions for this many milliseconds of GPU time per measurement. */
const TARGET_MS = 2;
const MAX_REPS = 50;
const ROUNDS = 3;

/**
 * Milliseconds per `launch()`: the mean over enough back-to-back calls for ~2 ms of GPU time,
 * taking the best of a few rounds (the minimum filters out interference from other work on a
 * shared GPU). The first call is a warm-up that also loads the module. Blocks until the GPU
 * finished: tuning runs once per problem class.
 */
export function timeLaunches(backend: CudaContext, launch: () => void): number {
  const start = Event.create(backend.context);
  const end = Event.create(backend.context);
  try {
    launch();
    const once = measure(backend, launch, 1, start, end);
    const reps = Math.max(1, Math.min(MAX_REPS, Math.ceil(TARGET_MS / Math.max(once, 1e-3))));
    let best = once;
    for (let round = 0; round < ROUNDS; round++) best = Math.min(best, measure(backend, launch, reps, start, end));
    return best;
  } finally {
    start.dispose();
    end.dispose();
  }
}

function measure(backend: CudaContext, launch: () => void, reps: number, start: Event, end: Event): number {
  start.record(backend.stream);
  for (let i = 0; i < reps; i++) launch();
  end.record(backend.stream);
  end.synchronize();
  return end.elapsedMs(start) / reps;
}
