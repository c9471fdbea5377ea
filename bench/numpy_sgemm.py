"""NumPy's f32 products on this machine's CPU, the anchor of the CPU BLAS bench (bench/cpu-blas.ts).

Usage: python3 numpy_sgemm.py '<json list of [m, n, k]>'
Times np.matmul(a, b, out=c) on fresh random inputs (no allocation in the loop), in batches
sized to about 20 ms, and prints one JSON line:
{"numpy", "blas", "results": [{"shape": [m, n, k], "medianUs", "bestUs"}]}.
The thread count is whatever NumPy's BLAS reads from its environment at start
(OPENBLAS_NUM_THREADS, OMP_NUM_THREADS): the caller sets it.
"""
import json
import statistics
import sys
import time

import numpy as np


def blas_name():
    try:
        config = np.show_config(mode="dicts")
        blas = config["Build Dependencies"]["blas"]
        return f'{blas.get("name")} {blas.get("version")}'
    except Exception:
        return "unknown"


def main():
    shapes = json.loads(sys.argv[1])
    rng = np.random.default_rng()
    results = []
    for m, n, k in shapes:
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32)
        c = np.empty((m, n), dtype=np.float32)
        np.matmul(a, b, out=c)
        t = time.perf_counter()
        np.matmul(a, b, out=c)
        once = max(time.perf_counter() - t, 1e-7)
        batch = max(1, int(0.02 / once))
        samples = []
        for _ in range(9):
            t = time.perf_counter()
            for _ in range(batch):
                np.matmul(a, b, out=c)
            samples.append((time.perf_counter() - t) / batch * 1e6)
        results.append({"shape": [m, n, k], "medianUs": statistics.median(samples), "bestUs": min(samples)})
    print(json.dumps({"numpy": np.__version__, "blas": blas_name(), "results": results}))


if __name__ == "__main__":
    main()
