"""numpy (and, where installed, torch on the CPU) anchors of bench/cpu.ts, timed on the host.

Prints one JSON line: per case the median seconds per call. Threads follow the environment
(OMP_NUM_THREADS / OPENBLAS_NUM_THREADS), which bench/cpu.ts sets to the CPU backend's count.
"""
import json
import statistics
import sys
import time

import numpy as np


def median_seconds(fn, min_total=0.3, reps=7):
    fn()
    once = max(1e-6, timed(fn, 1))
    iters = max(1, int(min_total / reps / once))
    return statistics.median(timed(fn, iters) / iters for _ in range(reps))


def timed(fn, iters):
    start = time.perf_counter()
    for _ in range(iters):
        fn()
    return time.perf_counter() - start


rng = np.random.default_rng(0)
out = {"numpy": np.__version__}
for m, n, k in [(32, 64, 128), (1024, 1024, 1024), (2048, 2048, 2048)]:
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    out[f"matmul {m}x{n}x{k}"] = median_seconds(lambda: a @ b)
x = rng.standard_normal(1 << 24, dtype=np.float32)
y = rng.standard_normal(1 << 24, dtype=np.float32)
z = np.empty_like(x)
out["add 2^24"] = median_seconds(lambda: np.add(x, y, out=z))
# numpy's own `x + y` allocates its result (fresh pages from the OS each call, as malloc maps
# 64 MB blocks); the ratios use the faster `out=` form above.
out["add 2^24, x + y"] = median_seconds(lambda: x + y)

try:
    import torch

    torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else torch.get_num_threads())
    out["torch"] = torch.__version__
    with torch.no_grad():
        gru = torch.nn.GRU(128, 256, batch_first=True)
        xs = torch.randn(32, 10, 128)
        out["gru b32 in128 h256 T10"] = median_seconds(lambda: gru(xs))
        q = torch.randn(2, 8, 256, 64)
        kv = torch.randn(2, 8, 256, 64)
        out["attention B2 H8 S256 D64"] = median_seconds(lambda: torch.nn.functional.scaled_dot_product_attention(q, kv, kv))
        out["attention B2 H8 S256 D64 causal"] = median_seconds(lambda: torch.nn.functional.scaled_dot_product_attention(q, kv, kv, is_causal=True))
    # Three leaves, as gpu.grad makes of [q, kv, kv].
    q.requires_grad_(True)
    k = kv.clone().requires_grad_(True)
    v = kv.clone().requires_grad_(True)
    d_out = torch.randn(2, 8, 256, 64)

    def attention_step():
        o = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        return torch.autograd.grad((o * d_out).sum(), [q, k, v])

    out["attention forward + backward B2 H8 S256 D64"] = median_seconds(attention_step)
except ImportError:
    pass
print(json.dumps(out))
