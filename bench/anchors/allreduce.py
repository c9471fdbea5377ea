"""All-reduce bus bandwidth of torch.distributed's NCCL backend: 2 processes, one GPU each, f32 sum
in place, timed as bench/allreduce.ts times ours (median of 5 batches of wall time to the
synchronisation after warm-up). Prints one JSON line: {"busbw": {MiB: GB/s}, "torch", "nccl"}.

NVLink multicast stays off: NCCL_NVLS_ENABLE=0 in this process and so in the ones it spawns.
Usage: python3 bench/anchors/allreduce.py 1,4,16,64,256,1024
"""
import json
import os
import statistics
import sys
import tempfile
import time

os.environ["NCCL_NVLS_ENABLE"] = "0"

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

RANKS = 2


def time_allreduce(x):
    for _ in range(5):
        dist.all_reduce(x)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    dist.all_reduce(x)
    torch.cuda.synchronize()
    once = max(time.perf_counter() - t0, 1e-6)
    # Both ranks must make the same number of calls: rank 0's count goes to both.
    agreed = torch.tensor([max(5, min(500, int(0.05 / once) + 1))], device="cuda")
    dist.broadcast(agreed, 0)
    iters = int(agreed.item())
    samples = []
    for _ in range(5):
        dist.barrier()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - t0) / iters)
    return statistics.median(samples)


def worker(rank, sizes, init_file, queue):
    os.environ["NCCL_NVLS_ENABLE"] = "0"
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"file://{init_file}", rank=rank, world_size=RANKS, device_id=torch.device("cuda", rank))
    x = torch.full((1 << 16,), float(rank + 1), device="cuda")
    dist.all_reduce(x)
    assert torch.all(x == RANKS * (RANKS + 1) / 2).item(), "the anchor's all-reduce is wrong"
    busbw = {}
    for mib in sizes:
        x = torch.full((mib * 2**20 // 4,), float(rank + 1), device="cuda")
        seconds = time_allreduce(x)
        busbw[str(mib)] = mib * 2**20 / seconds / 1e9 * 2 * (RANKS - 1) / RANKS
        del x
        torch.cuda.empty_cache()
    if rank == 0:
        queue.put({"busbw": busbw, "torch": torch.__version__, "nccl": ".".join(map(str, torch.cuda.nccl.version()))})
    dist.destroy_process_group()


def main():
    sizes = [int(s) for s in sys.argv[1].split(",")]
    if torch.cuda.device_count() < RANKS:
        raise SystemExit(f"needs {RANKS} GPUs, found {torch.cuda.device_count()}")
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    with tempfile.TemporaryDirectory() as tmp:
        mp.start_processes(worker, args=(sizes, os.path.join(tmp, "init"), queue), nprocs=RANKS, start_method="spawn")
    print(json.dumps(queue.get(timeout=10)))


if __name__ == "__main__":
    main()
