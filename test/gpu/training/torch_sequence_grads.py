"""Gradients by torch autograd, for the GPU training tests (attention-backward.test.ts,
gru-backward.test.ts): the same problem as the library's, given as raw little-endian f32 files.

Usage: python3 torch_sequence_grads.py <dir>. <dir>/cases.json lists cases; for each, <dir>/<name>.<part>
holds the f32 values of a part, and the gradients are written back as <name>.grad.<part>.

- {"kind": "attention", "name", "dtype", "batch", "heads", "kv_heads", "seq_q", "seq_k", "dim",
  "causal", "scale", "key_lengths" (list or null)}: parts q, k, v, dout. scaled_dot_product_attention
  in the dtype with a boolean mask (causal top-left aligned, keys past the length masked), k and v
  repeated over the query heads that share them (autograd sums their gradients back); the
  gradients of q, k, v for the output gradient dout. Every query row must see a key.
- {"kind": "gru", "name", "members", "shared_input", "layers", "batch", "steps", "input", "hidden"}:
  parts x, h0 and l<l>.{wih,whh,bih,bhh} (every member's, concatenated), gout, ghidden. One
  torch.nn.GRU(batch_first=True) per member in f32 (TF32 off) with the loss
  Σ gout·output + Σ ghidden·h_n; gradients of x, h0 and every weight and bias.
Prints one JSON line: {"device", "torch"}.
"""
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def load(base, part, shape):
    return torch.from_numpy(np.fromfile(f"{base}.{part}", dtype="<f4").reshape(shape)).cuda()


def save(base, part, t):
    t.detach().float().cpu().numpy().astype("<f4").tofile(f"{base}.grad.{part}")


def attention(case, base):
    b, hq, hk, sq, sk, d = case["batch"], case["heads"], case["kv_heads"], case["seq_q"], case["seq_k"], case["dim"]
    dtype = DTYPES[case["dtype"]]
    q = load(base, "q", (b, hq, sq, d)).to(dtype).requires_grad_()
    k = load(base, "k", (b, hk, sk, d)).to(dtype).requires_grad_()
    v = load(base, "v", (b, hk, sk, d)).to(dtype).requires_grad_()
    dout = load(base, "dout", (b, hq, sq, d)).to(dtype)
    i = torch.arange(sq, device="cuda").view(1, 1, sq, 1)
    j = torch.arange(sk, device="cuda").view(1, 1, 1, sk)
    lengths = case["key_lengths"] or [sk] * b
    valid = j < torch.tensor(lengths, device="cuda").view(b, 1, 1, 1)
    if case["causal"]:
        valid = valid & (j <= i)
    group = hq // hk
    out = F.scaled_dot_product_attention(
        q, k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1), attn_mask=valid, scale=case["scale"]
    )
    out.backward(dout)
    for part, t in (("q", q.grad), ("k", k.grad), ("v", v.grad)):
        save(base, part, t)


def gru(case, base):
    e, layers, b, t, i, h = case["members"], case["layers"], case["batch"], case["steps"], case["input"], case["hidden"]
    shared = case["shared_input"]
    x = load(base, "x", (b, t, i) if shared else (e, b, t, i)).requires_grad_()
    h0 = load(base, "h0", (layers, e, b, h)).requires_grad_()
    gout = load(base, "gout", (e, b, t, h))
    ghidden = load(base, "ghidden", (layers, e, b, h))
    params = []
    loss = 0
    for m in range(e):
        net = torch.nn.GRU(i, h, num_layers=layers, batch_first=True).cuda()
        with torch.no_grad():
            for l in range(layers):
                inp = i if l == 0 else h
                for name, shape in (("wih", (3 * h, inp)), ("whh", (3 * h, h)), ("bih", (3 * h,)), ("bhh", (3 * h,))):
                    member = load(base, f"l{l}.{name}", (e,) + shape)[m]
                    attr = {"wih": "weight_ih", "whh": "weight_hh", "bih": "bias_ih", "bhh": "bias_hh"}[name]
                    getattr(net, f"{attr}_l{l}").copy_(member)
        out, hn = net(x if shared else x[m], h0[:, m].contiguous())
        loss = loss + (out * gout[m]).sum() + (hn * ghidden[:, m]).sum()
        params.append(net)
    loss.backward()
    save(base, "x", x.grad)
    save(base, "h0", h0.grad)
    for l in range(layers):
        for name, attr in (("wih", "weight_ih"), ("whh", "weight_hh"), ("bih", "bias_ih"), ("bhh", "bias_hh")):
            save(base, f"l{l}.{name}", torch.stack([getattr(net, f"{attr}_l{l}").grad for net in params]))


def main():
    directory = sys.argv[1]
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    with open(os.path.join(directory, "cases.json")) as f:
        cases = json.load(f)
    for case in cases:
        base = os.path.join(directory, case["name"])
        (attention if case["kind"] == "attention" else gru)(case, base)
    print(json.dumps({"device": torch.cuda.get_device_name(), "torch": torch.__version__}))


if __name__ == "__main__":
    main()
