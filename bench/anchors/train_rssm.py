"""torch eager anchor of examples/train-rssm.ts: the same RSSM ensemble (encoder 16 -> 64 tanh,
5 GRUs of hidden 128 as torch.nn.GRU on cuDNN, a linear head per member 128 -> 16), the same
batch (32 trajectories of 16 steps) and the same training step: upload the batch, forward, the
mean squared error of every member's predictions, backward, AdamW (lr 3e-3, no weight decay;
torch's default foreach implementation) and zero_grad, the loss read to the host. f32 with TF32
off. Prints one JSON line: {"torch": version, "stepMs": median over `steps` steps after 10 warm-ups}.
"""
import json
import statistics
import sys
import time

import numpy as np
import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 50
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
dev = "cuda"
OBS, LATENT, HIDDEN, MEMBERS, BATCH, SEQ = 16, 64, 128, 5, 32, 16
torch.manual_seed(0)


class Rssm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = torch.nn.Linear(OBS, LATENT)
        self.grus = torch.nn.ModuleList(torch.nn.GRU(LATENT, HIDDEN, batch_first=True) for _ in range(MEMBERS))
        self.heads = torch.nn.ModuleList(torch.nn.Linear(HIDDEN, OBS) for _ in range(MEMBERS))

    def forward(self, obs, targets):
        latent = torch.tanh(self.encoder(obs))
        errors = [((head(gru(latent)[0]) - targets) ** 2).mean() for gru, head in zip(self.grus, self.heads)]
        return torch.stack(errors).mean()


model = Rssm().to(dev)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0)
rng = np.random.default_rng(0)
batches = [(rng.standard_normal((BATCH, SEQ, OBS), dtype=np.float32), rng.standard_normal((BATCH, SEQ, OBS), dtype=np.float32)) for _ in range(4)]

times = []
for step in range(10 + steps):
    inputs, targets = batches[step % len(batches)]
    torch.cuda.synchronize()
    start = time.perf_counter()
    loss = model(torch.from_numpy(inputs).to(dev), torch.from_numpy(targets).to(dev))
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    loss.item()
    torch.cuda.synchronize()
    if step >= 10:
        times.append((time.perf_counter() - start) * 1e3)
print(json.dumps({"torch": torch.__version__, "stepMs": statistics.median(times)}))
