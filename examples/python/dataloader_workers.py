"""A DataLoader with worker processes feeding a training loop, the parent on 2 intra-op threads
(its OpenMP pool running when the workers are forked). Correct: DataLoader's workers drop to one
intra-op thread first thing, so the fork is safe, and they hand batches back through shared
memory.

    sharebench exec --mp-start fork,spawn,forkserver -- python3 examples/python/dataloader_workers.py
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Points(Dataset):
    def __len__(self):
        return 2048

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        x = torch.randn(16, generator=g)
        return x, int(x[0] > 0)


if __name__ == "__main__":
    torch.set_num_threads(2)
    torch.ones(1 << 24).add_(1)  # the parent's OpenMP pool is running
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(Points(), batch_size=64, num_workers=2)
    for epoch in range(2):
        for x, y in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
    print("loss %.3f" % loss.item())
