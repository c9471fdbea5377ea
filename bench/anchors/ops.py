"""Anchor timings for bench/ops.ts: the same ops in PyTorch (and CuPy where natural).

Usage: python3 ops.py '<json list of cases>'
Each case: {"key", "op", "dtype", "shape"}. Prints one JSON line:
{"device": ..., "torch": ..., "cupy": ..., "us": {key: microseconds per call}, "cupy_us": {...}}.
GPU ops are timed with CUDA events around many calls after a warm-up, median of
several repetitions; inputs are fresh random values.
"""
import json
import statistics
import sys
import time

import torch
import torch.nn.functional as F

from timing import time_gpu

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "i32": torch.int32}


def time_host(fn, iters=200_000, reps=5):
    """Median microseconds per call of a host-side fn()."""
    for _ in range(1000):
        fn()
    samples = []
    for _ in range(reps):
        t = time.perf_counter()
        for _ in range(iters):
            fn()
        samples.append((time.perf_counter() - t) * 1e6 / iters)
    return statistics.median(samples)


def make(case):
    op, dtype, shape = case["op"], DTYPES[case["dtype"]], case["shape"]
    dev = "cuda"

    def rnd(*s):
        return torch.randn(*s, device=dev, dtype=torch.float32).to(dtype)

    if op == "copy":
        a, c = rnd(*shape), torch.empty(shape, device=dev, dtype=dtype)
        return lambda: c.copy_(a)
    if op == "add":
        a, b, c = rnd(*shape), rnd(*shape), torch.empty(shape, device=dev, dtype=dtype)
        return lambda: torch.add(a, b, out=c)
    if op == "mul_row":
        a, b, c = rnd(*shape), rnd(shape[-1]), torch.empty(shape, device=dev, dtype=dtype)
        return lambda: torch.mul(a, b, out=c)
    if op == "exp":
        a, c = rnd(*shape), torch.empty(shape, device=dev, dtype=dtype)
        return lambda: torch.exp(a, out=c)
    if op == "gelu":
        a = rnd(*shape)
        return lambda: F.gelu(a)
    if op == "relu":
        a, c = rnd(*shape), torch.empty(shape, device=dev, dtype=dtype)
        return lambda: torch.clamp_min(a, 0, out=c)
    if op == "softmax":
        a = rnd(*shape)
        return lambda: torch.softmax(a, dim=-1)
    if op == "log_softmax":
        a = rnd(*shape)
        return lambda: torch.log_softmax(a, dim=-1)
    if op == "layer_norm":
        a, w, b = rnd(*shape), rnd(shape[-1]), rnd(shape[-1])
        return lambda: F.layer_norm(a, (shape[-1],), w, b, 1e-5)
    if op == "sum_all":
        a = rnd(*shape)
        return lambda: torch.sum(a)
    if op == "sum_rows":
        a = rnd(*shape)
        return lambda: torch.sum(a, dim=-1)
    if op == "sum_cols":
        a = rnd(*shape)
        return lambda: torch.sum(a, dim=0)
    if op == "argmax_rows":
        a = rnd(*shape)
        return lambda: torch.argmax(a, dim=-1)
    if op == "transpose":
        a = rnd(*shape)
        c = torch.empty(shape[::-1], device=dev, dtype=dtype)
        return lambda: c.copy_(a.t())
    raise ValueError(f"unknown op {op}")


def main():
    cases = json.loads(sys.argv[1])
    us = {}
    for case in cases:
        if case["op"] == "pool":
            continue
        fn = make(case)
        us[case["key"]] = time_gpu(fn)
        torch.cuda.empty_cache()
    host = {}
    # Allocator round trips of a cached 1 MiB block (host cost; no kernel involved).
    torch.cuda.synchronize()
    host["torch_empty_1MiB"] = time_host(lambda: torch.empty(1 << 20, dtype=torch.uint8, device="cuda"))
    cupy_version = None
    try:
        import cupy

        cupy_version = cupy.__version__
        pool = cupy.get_default_memory_pool()
        pool.free_all_blocks()
        host["cupy_pool_1MiB"] = time_host(lambda: pool.malloc(1 << 20))
    except ImportError:
        pass
    print(
        json.dumps(
            {
                "device": torch.cuda.get_device_name(),
                "torch": torch.__version__,
                "cupy": cupy_version,
                "us": us,
                "host_us": host,
            }
        )
    )


if __name__ == "__main__":
    main()
