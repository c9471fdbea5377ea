"""CuPy anchor of bench/launch.ts.

launch <kernels.cu> <launches> <rounds> <warmup> <n>
    Host cost per launch of CuPy RawKernel, same source and same method as the
    TypeScript bench: wall time of N back-to-back launches on one non-blocking
    stream, then a synchronise, divided by N; median of several rounds after a
    warm-up.
compile <kernels.cu> <cache dir>
    Time of RawKernel.compile() with CUPY_CACHE_DIR set to <cache dir> (a fresh
    folder gives the first compile, a second run in a new process the disk
    hit), then of a second RawKernel of the same source (CuPy's in-memory hit).

Prints one JSON line.
"""
import json
import os
import statistics
import sys
import time


def launch(source_path, launches, rounds, warmup, n):
    import cupy as cp
    import numpy as np

    source = open(source_path).read()
    empty = cp.RawKernel(source, "empty_kernel")
    add = cp.RawKernel(source, "vector_add")
    rng = np.random.default_rng()
    a = cp.asarray(rng.standard_normal(n, dtype=np.float32))
    b = cp.asarray(rng.standard_normal(n, dtype=np.float32))
    c = cp.zeros(n, dtype=cp.float32)
    n32 = np.uint32(n)
    grid = ((n + 255) // 256,)
    stream = cp.cuda.Stream(non_blocking=True)

    with stream:
        add(grid, (256,), (a, b, c, n32))
        stream.synchronize()
        if not bool(cp.all(c == a + b)):
            raise SystemExit("CuPy vector_add gave a wrong result")

        def time_launches(fn):
            for _ in range(warmup):
                fn()
            stream.synchronize()
            per_round = []
            for _ in range(rounds):
                start = time.perf_counter()
                for _ in range(launches):
                    fn()
                stream.synchronize()
                per_round.append((time.perf_counter() - start) * 1e6 / launches)
            return statistics.median(per_round), per_round

        empty_us, empty_rounds = time_launches(lambda: empty((1,), (1,), ()))
        add_us, add_rounds = time_launches(lambda: add(grid, (256,), (a, b, c, n32)))

    return {
        "cupy": cp.__version__,
        "empty_us": empty_us,
        "vector_add_us": add_us,
        "empty_rounds": empty_rounds,
        "vector_add_rounds": add_rounds,
    }


def compile_times(source_path, cache_dir):
    # CuPy reads the cache folder from the environment when it compiles.
    os.environ["CUPY_CACHE_DIR"] = cache_dir
    import cupy as cp

    source = open(source_path).read()
    cp.cuda.Device(0).use()
    cp.empty(1)  # create the context first: it is not part of a compile
    cp.cuda.nvrtc.getVersion()  # and load NVRTC, as the TypeScript side does
    start = time.perf_counter()
    cp.RawKernel(source, "vector_add").compile()
    compile_ms = (time.perf_counter() - start) * 1e3
    start = time.perf_counter()
    cp.RawKernel(source, "vector_add").compile()
    memory_hit_ms = (time.perf_counter() - start) * 1e3
    return {"cupy": cp.__version__, "compile_ms": compile_ms, "memory_hit_ms": memory_hit_ms}


def main():
    mode = sys.argv[1]
    if mode == "launch":
        path, launches, rounds, warmup, n = sys.argv[2], *map(int, sys.argv[3:7])
        print(json.dumps(launch(path, launches, rounds, warmup, n)))
    elif mode == "compile":
        print(json.dumps(compile_times(sys.argv[2], sys.argv[3])))
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
