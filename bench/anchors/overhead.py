"""torch anchor of bench/overhead.ts: host microseconds per small op on CUDA, issued back to back.

Each case runs the op (its result freed at once, as the bench disposes ours) in a loop of
`iters` calls; the figure is the median over `reps` loops of the loop's wall time per call,
with the device synchronised before each loop and after it (outside the timed part).
Prints one JSON line: {"torch": version, "<case>": microseconds, ...}.
"""
import json
import statistics
import sys
import time

import torch
import torch.nn.functional as F

iters = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 7

dev = "cuda"
torch.manual_seed(0)
x = torch.randn(32, 128, device=dev)
y = torch.randn(32, 128, device=dev)
w = torch.randn(128, 64, device=dev)
wl = torch.randn(64, 128, device=dev)
b = torch.randn(64, device=dev)

cases = {
    "add": lambda: x + y,
    "mul by a number": lambda: x * 2.5,
    "softmax": lambda: torch.softmax(x, -1),
    "matmul": lambda: x @ w,
    "linear": lambda: F.linear(x, wl, b),
    "sum": lambda: x.sum(-1),
}


def host_us(fn):
    for _ in range(1000):
        fn()
    samples = []
    for _ in range(reps):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(iters):
            fn()
        samples.append((time.perf_counter() - start) * 1e6 / iters)
        torch.cuda.synchronize()
    return statistics.median(samples)


out = {"torch": torch.__version__}
for name, fn in cases.items():
    out[name] = host_us(fn)
print(json.dumps(out))
