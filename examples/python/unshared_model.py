"""BROKEN under fork: hogwild.py without model.share_memory(). Under fork each worker trains its
own copy-on-write copy of the model and the parent's model never changes; the program exits 0 all
the same. Under spawn and forkserver torch moves the parameters to shared memory when it pickles
them for the child, so there the same program is correct.

    sharebench exec --mp-start fork,spawn,forkserver -- python3 examples/python/unshared_model.py

Caught under fork by updates-shared (a child trained its own copy). The fix: hogwild.py.
"""
import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F


def train(rank, model, steps):
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(rank + 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for _ in range(steps):
        x = torch.randn(32, 16, generator=g)
        optimizer.zero_grad()
        F.cross_entropy(model(x), (x[:, 0] > 0).long()).backward()
        optimizer.step()


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2))
    # model.share_memory() is missing
    before = [p.detach().clone() for p in model.parameters()]
    workers = [mp.Process(target=train, args=(rank, model, 200)) for rank in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    moved = any(not torch.equal(a, p) for a, p in zip(before, model.parameters()))
    print("start method %s: the parent's model %s" % (mp.get_start_method(), "changed" if moved else "never changed"))
