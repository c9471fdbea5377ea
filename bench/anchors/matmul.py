"""Anchor timings for bench/matmul.ts: the same products in PyTorch.

Usage: python3 matmul.py '<json list of cases>'
Each case: {"key", "kind": "matmul"|"linear", "dtype": "f32"|"tf32"|"f16"|"bf16", "m", "n", "k"}.
matmul: torch.matmul of [m, k] by [k, n] with torch.backends.cuda.matmul.allow_tf32 set for the
case (True only for tf32); linear: F.relu(F.linear(x [m, k], w [n, k], b [n])).
Prints one JSON line: {"device", "torch", "tflops": {key: TFLOP/s}, "us": {key: microseconds per call}}.
Timed with CUDA events around many back-to-back calls after a warm-up, median of several
repetitions; inputs are fresh random values.
"""
import json
import statistics
import sys

import torch
import torch.nn.functional as F

DTYPES = {"f32": torch.float32, "tf32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def time_gpu(fn, target_ms=30.0, reps=5):
    """Median microseconds per call of fn(), timed with CUDA events."""
    for _ in range(2):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    once = max(start.elapsed_time(end), 1e-3)
    iters = max(1, min(2000, int(target_ms / once)))
    samples = []
    for _ in range(reps):
        start.record()
        for _ in range(iters):
            fn()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) * 1000.0 / iters)
    return statistics.median(samples)


def main():
    cases = json.loads(sys.argv[1])
    tflops, us = {}, {}
    for case in cases:
        dtype = DTYPES[case["dtype"]]
        torch.backends.cuda.matmul.allow_tf32 = case["dtype"] == "tf32"
        m, n, k = case["m"], case["n"], case["k"]
        if case["kind"] == "matmul":
            a = torch.rand(m, k, device="cuda", dtype=dtype) * 2 - 1
            b = torch.rand(k, n, device="cuda", dtype=dtype) * 2 - 1
            t = time_gpu(lambda: torch.matmul(a, b))
            tflops[case["key"]] = 2.0 * m * n * k / t / 1e6
        else:
            x = torch.rand(m, k, device="cuda", dtype=dtype) * 2 - 1
            w = torch.rand(n, k, device="cuda", dtype=dtype) * 2 - 1
            b = torch.rand(n, device="cuda", dtype=dtype) * 2 - 1
            us[case["key"]] = time_gpu(lambda: F.relu(F.linear(x, w, b)))
    torch.backends.cuda.matmul.allow_tf32 = False
    print(json.dumps({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "tflops": tflops, "us": us}))


if __name__ == "__main__":
    main()
