"""Torch anchor for bench/sweep.ts: the same op on the same shapes, as a torch user writes it.

Usage: python3 sweep.py <cases.json> [cuda|cpu]
Each case: {"key", "family", "dtype", "spec"} with spec as in bench/sweep/cases.ts. Inputs are fresh
standard-normal tensors; every call allocates its output, as torch's functional ops do. f32 products
run in full f32 (TF32 off), matching GpuCompute's default precision. Timed with CUDA events
(timing.py) on the GPU, wall time of synchronized batches on the CPU.
Prints one JSON line: {"device", "torch", "us": {key: microseconds per call}, "failed": {key: why}}.
"""
import json
import statistics
import sys
import time

import torch
import torch.nn.functional as F

from timing import time_gpu

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def time_cpu(fn, target_ms=10.0, reps=5, warmup=2):
    for _ in range(warmup):
        fn()

    def batch_us(iters):
        t = time.perf_counter()
        for _ in range(iters):
            fn()
        return (time.perf_counter() - t) * 1e6 / iters

    iters = max(1, min(2000, int(target_ms * 1000 / max(batch_us(1), 1.0))))
    return statistics.median(batch_us(iters) for _ in range(reps))


def make(case, dev):
    s, dtype = case["spec"], DTYPES[case["dtype"]]

    def rnd(*shape, std=1.0):
        return (torch.randn(*shape, device=dev) * std).to(dtype)

    op = s["op"]
    if op == "unary":
        x = rnd(*s["shape"])
        fn = {"exp": torch.exp, "tanh": torch.tanh, "sigmoid": torch.sigmoid, "relu": torch.relu}[s["fn"]]
        return lambda: fn(x)
    if op == "binary":
        a = rnd(*s["a"])
        b = rnd(*s["b"]) if s["b"] is not None else 1.5
        fn = torch.add if s["fn"] == "add" else torch.mul
        return lambda: fn(a, b)
    if op == "reduce":
        x = rnd(*s["shape"])
        axis = s["axis"]
        fn = {"sum": torch.sum, "mean": torch.mean, "max": torch.amax, "argmax": torch.argmax}[s["fn"]]
        if axis is None:
            return lambda: fn(x)
        return lambda: fn(x, axis)
    if op == "softmax":
        x = rnd(*s["shape"])
        return lambda: torch.softmax(x, -1)
    if op == "layerNorm":
        x = rnd(*s["shape"])
        n = s["shape"][-1]
        w, b = rnd(n), rnd(n)
        return lambda: F.layer_norm(x, (n,), w, b, 1e-5)
    if op == "transpose":
        x = rnd(*s["shape"])
        return lambda: x.transpose(-1, -2).contiguous()
    if op == "matmul":
        lead = [s["batch"]] if s["batch"] > 1 else []
        m, n, k = s["m"], s["n"], s["k"]
        a = rnd(*lead, k, m).mT if s["transA"] else rnd(*lead, m, k)
        b = rnd(*lead, n, k).mT if s["transB"] else rnd(*lead, k, n)
        return lambda: torch.matmul(a, b)
    if op == "attention":
        bsz, h, hkv, sq, sk, d = s["batch"], s["heads"], s["kvHeads"], s["seqQ"], s["seqK"], s["dim"]
        q, k, v = rnd(bsz, h, sq, d), rnd(bsz, hkv, sk, d), rnd(bsz, hkv, sk, d)
        gqa = {"enable_gqa": True} if h != hkv else {}
        if s["keyLengths"] is None:
            return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=s["causal"], **gqa)
        # Padding as a boolean mask (True = attend), with the causal mask folded in.
        lengths = torch.tensor(s["keyLengths"], device=dev)
        mask = (torch.arange(sk, device=dev)[None, :] < lengths[:, None])[:, None, None, :]
        if s["causal"]:
            mask = mask & torch.ones(sq, sk, dtype=torch.bool, device=dev).tril()
        return lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask, **gqa)
    if op == "gru":
        gru = torch.nn.GRU(s["input"], s["hidden"], batch_first=True).to(dev)
        x = rnd(s["batch"], s["steps"], s["input"])
        h0 = rnd(1, s["batch"], s["hidden"], std=0.5)
        return lambda: gru(x, h0)
    raise ValueError(f"unknown op {op}")


SETTLE_S = 0.3


def settle(fn, dev):
    """Runs fn in synchronised batches of about a millisecond for SETTLE_S, as bench/sweep.ts does
    before timing ours (the GPU's clocks up after any idle gap)."""
    start = time.perf_counter()
    per_call = 1e-3
    while time.perf_counter() - start < SETTLE_S:
        t = time.perf_counter()
        calls = max(1, min(1000, int(1e-3 / per_call)))
        for _ in range(calls):
            fn()
        if dev == "cuda":
            torch.cuda.synchronize()
        per_call = max((time.perf_counter() - t) / calls, 1e-6)


def main():
    with open(sys.argv[1]) as f:
        cases = json.load(f)
    dev = sys.argv[2] if len(sys.argv) > 2 else "cuda"
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    timer = time_gpu if dev == "cuda" else time_cpu
    us, failed = {}, {}
    with torch.no_grad():
        for case in cases:
            try:
                fn = make(case, dev)
                settle(fn, dev)
                us[case["key"]] = timer(fn, target_ms=10.0, reps=5, warmup=2)
            except Exception as e:  # a case torch cannot run is reported, not fatal
                failed[case["key"]] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            if dev == "cuda":
                torch.cuda.empty_cache()
    device = torch.cuda.get_device_name() if dev == "cuda" else "cpu"
    print(json.dumps({"device": device, "torch": torch.__version__, "us": us, "failed": failed}))


if __name__ == "__main__":
    main()
