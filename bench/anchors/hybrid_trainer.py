"""torch eager anchor of examples/hybrid-trainer.ts: the same pipeline, shapes and stage timing.

encode: linear 64 -> 128 + ReLU; predict: 5 GRUs (hidden 256, PyTorch's gate order) rolled out
10 steps, each step's hidden state projected to 128 and fed back (batched over the members with
bmm, as an eager torch user would write it); compress: residuals against the observed
trajectory, rank-8 torch.svd_lowrank (q = rank + 10, niter = 2, as gpu.svd's defaults), the
rank-8 reconstruction and the kept energy read to the host; correct: prediction + reconstruction.
f32 with TF32 off. Each stage is timed as the example times it (device synchronised before and
after); the figures are medians of `passes` passes after `warmup` passes.
Prints one JSON line: {"torch": version, "<stage>": ms, ..., "whole pass": ms}.
"""
import json
import statistics
import sys
import time

import torch
import torch.nn.functional as F

warmup = int(sys.argv[1]) if len(sys.argv) > 1 else 10
passes = int(sys.argv[2]) if len(sys.argv) > 2 else 30

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
dev = "cuda"
BATCH, OBS, STATE, HIDDEN, MEMBERS, STEPS, RANK = 32, 64, 128, 256, 5, 10, 8
g = torch.Generator(device=dev).manual_seed(int(time.time()))


def randn(*shape, std=1.0):
    return torch.randn(*shape, device=dev, generator=g) * std


enc_w, enc_b = randn(STATE, OBS, std=OBS**-0.5), randn(STATE, std=OBS**-0.5)
w_ih = randn(MEMBERS, 3 * HIDDEN, STATE, std=HIDDEN**-0.5)
w_hh = randn(MEMBERS, 3 * HIDDEN, HIDDEN, std=HIDDEN**-0.5)
b_ih = randn(MEMBERS, 1, 3 * HIDDEN, std=HIDDEN**-0.5)
b_hh = randn(MEMBERS, 1, 3 * HIDDEN, std=HIDDEN**-0.5)
head_w = randn(MEMBERS, STATE, HIDDEN, std=HIDDEN**-0.5)
head_b = randn(MEMBERS, 1, STATE, std=0.01)
observations = randn(BATCH, OBS)
observed = randn(BATCH, STEPS, STATE, std=0.5)


def rollout(latent):
    x = latent.expand(MEMBERS, BATCH, STATE)
    h = torch.zeros(MEMBERS, BATCH, HIDDEN, device=dev)
    states = []
    for _ in range(STEPS):
        gx = torch.baddbmm(b_ih, x, w_ih.transpose(1, 2))
        gh = torch.baddbmm(b_hh, h, w_hh.transpose(1, 2))
        xr, xz, xn = gx.chunk(3, -1)
        hr, hz, hn = gh.chunk(3, -1)
        r = torch.sigmoid(xr + hr)
        z = torch.sigmoid(xz + hz)
        n = torch.tanh(xn + r * hn)
        h = (1 - z) * n + z * h
        x = torch.baddbmm(head_b, h, head_w.transpose(1, 2))
        states.append(x)
    return torch.stack(states, 2)  # [E, B, T, S]


def timed(fn):
    torch.cuda.synchronize()
    start = time.perf_counter()
    out = fn()
    torch.cuda.synchronize()
    return out, (time.perf_counter() - start) * 1e3


def compress(prediction):
    matrix = (observed - prediction).reshape(BATCH * STEPS, STATE)
    u, s, v = torch.svd_lowrank(matrix, q=RANK + 10, niter=2)
    u, s, v = u[:, :RANK], s[:RANK], v[:, :RANK]
    low_rank = ((u * s) @ v.T).reshape(BATCH, STEPS, STATE)
    energy = (s.square().sum() / matrix.square().sum()).item()
    return low_rank, energy


def pipeline():
    times = {}
    latent, times["encode_state"] = timed(lambda: F.relu(F.linear(observations, enc_w, enc_b)))
    states, times["predict"] = timed(lambda: rollout(latent))
    prediction = states.mean(0)
    (low_rank, _), times["compress_residuals"] = timed(lambda: compress(prediction))
    _, times["apply_corrections"] = timed(lambda: prediction + low_rank)
    return times


for _ in range(warmup):
    pipeline()
runs = []
for _ in range(passes):
    times, total = timed(pipeline)
    times["whole pass"] = total
    runs.append(times)
out = {"torch": torch.__version__}
for key in runs[0]:
    out[key] = statistics.median(r[key] for r in runs)
print(json.dumps(out))
