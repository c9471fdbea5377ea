"""The torch autograd side of the training tests: runs each case's op with torch on the GPU (the
CPU where torch has no CUDA), backward with the given seed, and prints one JSON line with each
case's output and input gradients. Reads the cases from the JSON file named by argv[1]:
{"cases": [{"name", "op", "dtype", "inputs": [{"shape", "values", "grad", "int"}], "seed"}]}.
f32 products run without TF32, as the library's 'highest' precision does."""
import json
import sys

import torch
import torch.nn.functional as F

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}

OPS = {
    "layerNorm": lambda x, g, b: F.layer_norm(x, (x.shape[-1],), g, b, eps=1e-5),
    "matmulBiasGelu": lambda a, b, bias: F.gelu(a @ b + bias),
    "matmulTransposed": lambda a, b, c: 0.5 * (a.transpose(-1, -2) @ b.transpose(-1, -2)) + 2 * c,
    "linearSilu": lambda x, w, b: F.silu(F.linear(x, w, b)),
    "softmax": lambda x: torch.softmax(x, -1),
    "logSoftmax": lambda x: torch.log_softmax(x, -1),
    "mseLoss": lambda p, t: F.mse_loss(p, t),
    "crossEntropyIndices": lambda x, t: F.cross_entropy(x, t.long(), ignore_index=-100),
    "crossEntropyProbabilities": lambda x, p: F.cross_entropy(x, p, reduction="sum"),
    "maximumTanh": lambda a, b: torch.maximum(a, b) * torch.tanh(a),
    "maxMean": lambda x: torch.max(x, dim=1, keepdim=True).values - x.mean(),
    "geluTanhSqrt": lambda x: F.gelu(x, approximate="tanh") + torch.sqrt(x * x + 1),
}


def main() -> None:
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    device = "cuda" if torch.cuda.is_available() else "cpu"
    with open(sys.argv[1], encoding="utf8") as f:
        cases = json.load(f)["cases"]
    results = []
    for case in cases:
        dtype = DTYPES[case["dtype"]]
        tensors = []
        for spec in case["inputs"]:
            t = torch.tensor(spec["values"], dtype=torch.int32 if spec.get("int") else dtype, device=device).reshape(spec["shape"])
            if spec["grad"]:
                t.requires_grad_(True)
            tensors.append(t)
        out = OPS[case["op"]](*tensors)
        seed = torch.tensor(case["seed"], dtype=dtype, device=device).reshape(out.shape)
        out.backward(seed)
        grads = [t.grad.float().flatten().tolist() for t, spec in zip(tensors, case["inputs"]) if spec["grad"]]
        results.append({"name": case["name"], "dtype": case["dtype"], "output": out.detach().float().flatten().tolist(), "grads": grads})
    print(json.dumps({"device": device, "torch": torch.__version__, "results": results}))


if __name__ == "__main__":
    main()
