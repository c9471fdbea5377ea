"""Anchor timings for bench/training.ts: torch autograd's backward of
torch.nn.functional.scaled_dot_product_attention, and a torch.nn.GRU (cuDNN) training step.

Usage: python3 training.py '<json>' with {"attention": [cases], "gru": [cases]}.
- attention case {"key", "dtype", "batch", "heads", "seq", "dim", "causal"}: fresh standard-normal
  q, k, v, dout [batch, heads, seq, dim]; out = SDPA(q, k, v, is_causal) once, then the timed call
  is out.backward(dout, retain_graph=True) alone (PyTorch picks its flash / cuDNN / memory-efficient
  kernel as for any caller). Reported in TFLOP/s with 10·B·H·S²·D flops (halved for causal) and µs.
- gru case {"key", "batch", "input", "hidden", "steps", "layers", "mode": "f32" | "tf32"}: one step
  is the forward over a fresh x (requires_grad) from h0 (requires_grad) and the backward of
  Σ gout·output + Σ ghidden·h_n, gradients accumulating into the weights (no optimizer). TF32 off
  for 'f32', torch's default for cuDNN RNNs (allowed) for 'tf32'. Reported in µs per step.
Prints one JSON line: {"device", "torch", "attention": {key: {tflops, us}}, "gru": {key: us}}.
"""
import json
import sys

import torch
import torch.nn.functional as F

from timing import time_gpu

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def attention(case):
    shape = (case["batch"], case["heads"], case["seq"], case["dim"])
    dtype = DTYPES[case["dtype"]]
    q, k, v = (torch.randn(shape, device="cuda", dtype=dtype, requires_grad=True) for _ in range(3))
    dout = torch.randn(shape, device="cuda", dtype=dtype)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=case["causal"])

    def step():
        q.grad = k.grad = v.grad = None
        out.backward(dout, retain_graph=True)

    us = time_gpu(step, target_ms=60.0, reps=5)
    flops = 10.0 * case["batch"] * case["heads"] * case["seq"] ** 2 * case["dim"] * (0.5 if case["causal"] else 1.0)
    return {"tflops": flops / us / 1e6, "us": us}


def gru(case):
    b, i, h, t, layers = case["batch"], case["input"], case["hidden"], case["steps"], case["layers"]
    torch.backends.cudnn.allow_tf32 = case["mode"] == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = case["mode"] == "tf32"
    net = torch.nn.GRU(i, h, num_layers=layers, batch_first=True).cuda()
    x = torch.randn(b, t, i, device="cuda", requires_grad=True)
    h0 = (torch.randn(layers, b, h, device="cuda") * 0.5).requires_grad_()
    gout = torch.randn(b, t, h, device="cuda")
    ghidden = torch.randn(layers, b, h, device="cuda")

    def step():
        out, hn = net(x, h0)
        ((out * gout).sum() + (hn * ghidden).sum()).backward()

    return time_gpu(step, target_ms=60.0, reps=5)


def main():
    cases = json.loads(sys.argv[1])
    torch.backends.cudnn.benchmark = False
    result = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "attention": {}, "gru": {}}
    for case in cases.get("attention", []):
        result["attention"][case["key"]] = attention(case)
        torch.cuda.empty_cache()
    for case in cases.get("gru", []):
        result["gru"][case["key"]] = gru(case)
        torch.cuda.empty_cache()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
