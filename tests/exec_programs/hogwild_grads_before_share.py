"""Hogwild with a sanity check before the workers start, as a trainer that logs its initial loss
and gradient norm writes it: one backward() in the parent, then model.share_memory(). The gradients
that backward() made are moved into shared memory with the parameters, and fork hands them to
every worker: from then on the workers' backward() calls add into, and their zero_grad() calls
clear, the same .grad buffers while the others step on them. Exits 0. A planted bug for
`sharebench exec` (grads-delivered, under fork; spawn and forkserver pickle no gradients); --fixed
frees the gradients before sharing (model.zero_grad(set_to_none=True)).
"""
import sys

import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F


def batch(generator):
    x = torch.randn(32, 10, generator=generator)
    return x, (x[:, 0] > 0).long()


def train(rank, model):
    torch.set_num_threads(1)
    torch.manual_seed(10 + rank)
    generator = torch.Generator().manual_seed(10 + rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for _ in range(200):
        x, y = batch(generator)
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2))
    x, y = batch(torch.Generator().manual_seed(0))
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    norm = torch.sqrt(sum((p.grad ** 2).sum() for p in model.parameters()))
    print(f"initial loss {loss.item():.3f}, gradient norm {norm.item():.3f}")
    if "--fixed" in sys.argv:
        model.zero_grad(set_to_none=True)
    model.share_memory()
    workers = [mp.Process(target=train, args=(rank, model)) for rank in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
