"""torch.nn.GRU (cuDNN) anchor for bench/gru.ts, and the reference outputs for the
"matches torch.nn.GRU with identical weights" proof.

Usage: python3 gru.py <dir>. <dir>/cases.json lists cases {name, batch, input, hidden, steps,
layers, proof}; for a proof case the weights, x and h0 are raw little-endian f32 files
<name>.{x,h0,l<l>.wih,l<l>.whh,l<l>.bih,l<l>.bhh} written by the bench, and torch's output and
final state (strict f32: TF32 off) are written to <name>.torch_out / <name>.torch_hn. Every case
is timed with TF32 off ('f32') and with torch's default for cuDNN RNNs (TF32 allowed: 'tf32').
Prints one JSON line: {name: {f32_us, tf32_us}}.
"""
import json
import os
import sys

import numpy as np
import torch

from timing import time_gpu


def load(path, shape):
    return torch.from_numpy(np.fromfile(path, dtype="<f4").reshape(shape)).cuda()


def build(case, directory):
    b, i, h, t, layers = case["batch"], case["input"], case["hidden"], case["steps"], case["layers"]
    gru = torch.nn.GRU(i, h, num_layers=layers, batch_first=True).cuda()
    if case["proof"]:
        base = os.path.join(directory, case["name"])
        with torch.no_grad():
            for l in range(layers):
                inp = i if l == 0 else h
                getattr(gru, f"weight_ih_l{l}").copy_(load(f"{base}.l{l}.wih", (3 * h, inp)))
                getattr(gru, f"weight_hh_l{l}").copy_(load(f"{base}.l{l}.whh", (3 * h, h)))
                getattr(gru, f"bias_ih_l{l}").copy_(load(f"{base}.l{l}.bih", (3 * h,)))
                getattr(gru, f"bias_hh_l{l}").copy_(load(f"{base}.l{l}.bhh", (3 * h,)))
        x = load(f"{base}.x", (b, t, i))
        h0 = load(f"{base}.h0", (layers, b, h))
    else:
        x = torch.randn(b, t, i, device="cuda")
        h0 = torch.randn(layers, b, h, device="cuda") * 0.5
    return gru, x, h0


def main():
    directory = sys.argv[1]
    with open(os.path.join(directory, "cases.json")) as f:
        cases = json.load(f)
    torch.backends.cudnn.benchmark = False
    results = {}
    for case in cases:
        gru, x, h0 = build(case, directory)
        times = {}
        with torch.no_grad():
            for mode in ("f32", "tf32"):
                torch.backends.cudnn.allow_tf32 = mode == "tf32"
                torch.backends.cuda.matmul.allow_tf32 = mode == "tf32"
                if mode == "f32" and case["proof"]:
                    out, hn = gru(x, h0)
                    base = os.path.join(directory, case["name"])
                    out.float().cpu().numpy().astype("<f4").tofile(f"{base}.torch_out")
                    hn.float().cpu().numpy().astype("<f4").tofile(f"{base}.torch_hn")
                times[f"{mode}_us"] = time_gpu(lambda: gru(x, h0), target_ms=40.0, reps=5)
        results[case["name"]] = times
        del gru, x, h0
        torch.cuda.empty_cache()
    print(json.dumps(results))


if __name__ == "__main__":
    main()
