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
import sys

import torch
import torch.nn.functional as F

from timing import time_gpu

DTYPES = {"f32": torch.float32, "tf32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}

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
