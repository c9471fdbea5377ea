"""CUDA-event timing shared by the anchor scripts (same method as bench/device-timer.ts)."""
import statistics

import torch


def time_gpu(fn, target_ms=25.0, reps=7, warmup=3):
    """Median microseconds per call of fn(), timed with CUDA events around batches of calls."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def batch_ms(iters):
        start.record()
        for _ in range(iters):
            fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end)

    once = max(batch_ms(1), 1e-3)
    iters = max(1, min(2000, int(target_ms / once)))
    return statistics.median(batch_ms(iters) * 1000.0 / iters for _ in range(reps))
