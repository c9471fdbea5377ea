"""NumPy's f32 matmul on this machine's CPU, the anchor of the CPU backend's blocked matmul.

Usage: python3 numpy_matmul.py '<json list of square sizes>'
Prints one JSON line: {"numpy", "gflops": {size: GFLOP/s}} (best of several repetitions,
fresh random inputs, whatever BLAS and thread count NumPy uses by default).
"""
import json
import sys
import time

import numpy as np


def main():
    sizes = json.loads(sys.argv[1])
    rng = np.random.default_rng()
    gflops = {}
    for s in sizes:
        a = rng.standard_normal((s, s), dtype=np.float32)
        b = rng.standard_normal((s, s), dtype=np.float32)
        a @ b
        best = float("inf")
        for _ in range(5):
            t = time.perf_counter()
            a @ b
            best = min(best, time.perf_counter() - t)
        gflops[str(s)] = 2.0 * s**3 / best / 1e9
    print(json.dumps({"numpy": np.__version__, "gflops": gflops}))


if __name__ == "__main__":
    main()
