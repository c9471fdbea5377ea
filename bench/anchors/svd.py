"""Anchor timings for bench/svd.ts: torch.svd_lowrank on the same matrices.

Usage: python3 svd.py '<json list of cases>'
Each case: {"key", "path" (raw little-endian f32, row-major), "m", "n", "rank", "oversample", "niter"}.
torch.svd_lowrank(A, q=rank + oversample, niter=niter) with TF32 off, as bench/svd.ts runs ours
(q sketch columns, niter power iterations). Each call is timed on its own with CUDA events and a
synchronize (the call itself synchronizes inside its QR and SVD), median of several after a
warm-up. Also reports ‖A − U_k·diag(S_k)·V_kᵀ‖_F / ‖A‖_F of the leading rank triplets.
Prints one JSON line: {"device", "torch", "ms": {key: median ms}, "residual": {key: relative residual}}.
"""
import json
import statistics
import sys

import numpy as np
import torch


def time_call(fn, reps=9, warmup=2):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    samples = []
    for _ in range(reps):
        start.record()
        fn()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end))
    return statistics.median(samples)


def main():
    torch.backends.cuda.matmul.allow_tf32 = False
    cases = json.loads(sys.argv[1])
    ms, residual = {}, {}
    for case in cases:
        m, n, rank = case["m"], case["n"], case["rank"]
        q = rank + case["oversample"]
        host = np.fromfile(case["path"], dtype="<f4").reshape(m, n)
        a = torch.from_numpy(host).cuda()
        ms[case["key"]] = time_call(lambda: torch.svd_lowrank(a, q=q, niter=case["niter"]))
        u, s, v = torch.svd_lowrank(a, q=q, niter=case["niter"])
        approx = (u[:, :rank] * s[:rank]) @ v[:, :rank].T
        residual[case["key"]] = float(torch.linalg.norm(a - approx) / torch.linalg.norm(a))
    print(json.dumps({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "ms": ms, "residual": residual}))


if __name__ == "__main__":
    main()
