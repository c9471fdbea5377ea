"""The torch side of the optimizer tests: torch.optim.SGD or AdamW over the given parameters and
per-step gradients (float32, on the GPU where torch has CUDA), printing one JSON line with the
parameters after the last step. Reads {"rule", "options", "params": [[...]], "grads": [[[...]]]}
(grads[step][param]) from the JSON file named by argv[1]; options use PyTorch's names."""
import json
import sys

import torch


def main() -> None:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    with open(sys.argv[1], encoding="utf8") as f:
        spec = json.load(f)
    params = [torch.tensor(p, dtype=torch.float32, device=device, requires_grad=True) for p in spec["params"]]
    options = spec["options"]
    if "betas" in options:
        options["betas"] = tuple(options["betas"])
    # The single-tensor loop (foreach/fused kernels may reorder the arithmetic).
    make = torch.optim.SGD if spec["rule"] == "sgd" else torch.optim.AdamW
    opt = make(params, foreach=False, **options)
    for step in spec["grads"]:
        for p, g in zip(params, step):
            p.grad = torch.tensor(g, dtype=torch.float32, device=device)
        opt.step()
    print(json.dumps({"device": device, "params": [p.detach().cpu().tolist() for p in params]}))


if __name__ == "__main__":
    main()
