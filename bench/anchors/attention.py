"""Anchor timings for bench/attention.ts: torch.nn.functional.scaled_dot_product_attention.

Usage: python3 attention.py '<json list of cases>'
Each case: {"key", "dtype": "f32"|"f16"|"bf16", "batch", "heads", "seq", "dim", "causal"}.
q, k, v are fresh standard-normal [batch, heads, seq, dim] tensors; PyTorch picks its backend
(flash / cuDNN / memory-efficient) as it does for any caller.
Prints one JSON line: {"device", "torch", "tflops": {key: TFLOP/s}, "us": {key: microseconds per call}},
with 4·B·H·S²·D flops per call, halved for causal.
"""
import json
import sys

import torch
import torch.nn.functional as F

from timing import time_gpu

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def main():
    cases = json.loads(sys.argv[1])
    tflops, us = {}, {}
    for case in cases:
        shape = (case["batch"], case["heads"], case["seq"], case["dim"])
        q, k, v = (torch.randn(shape, device="cuda", dtype=DTYPES[case["dtype"]]) for _ in range(3))
        causal = case["causal"]
        t = time_gpu(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
        flops = 4.0 * case["batch"] * case["heads"] * case["seq"] ** 2 * case["dim"] * (0.5 if causal else 1.0)
        us[case["key"]] = t
        tflops[case["key"]] = flops / t / 1e6
        del q, k, v
    print(json.dumps({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "tflops": tflops, "us": us}))


if __name__ == "__main__":
    main()
