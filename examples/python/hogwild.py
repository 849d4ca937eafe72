"""Hogwild: workers train one model whose parameters live in shared memory (share_memory()),
without locks, as in PyTorch's mnist_hogwild example. The loss must fall.

    sharebench exec --mp-start fork,spawn,forkserver -- python3 examples/python/hogwild.py

Each worker reports its steps through sharebench_progress (does nothing outside sharebench exec).
"""
import argparse
import sys

import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F

try:
    import sharebench_progress
except ImportError:  # run without sharebench exec
    sharebench_progress = None


def data(seed, rows=2048):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, 32, generator=g)
    teacher = torch.randn(32, 4, generator=torch.Generator().manual_seed(0))
    return x, (x @ teacher).argmax(dim=1)


def loss_of(model):
    x, y = data(999)
    with torch.no_grad():
        return F.cross_entropy(model(x), y).item()


def train(rank, model, steps):
    torch.set_num_threads(1)  # one intra-op thread per worker: no OpenMP pool to inherit or fight over
    torch.manual_seed(rank + 1)  # batches of its own: a forked worker inherits its parent's generator
    x, y = data(rank + 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(steps):
        i = torch.randint(0, x.shape[0], (32,))
        optimizer.zero_grad()
        F.cross_entropy(model(x[i]), y[i]).backward()
        optimizer.step()  # updates the shared parameters in place, no lock
        if sharebench_progress:
            sharebench_progress.beat(step + 1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
    model.share_memory()
    before = loss_of(model)
    workers = [mp.Process(target=train, args=(r, model, args.steps)) for r in range(args.workers)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    after = loss_of(model)
    print("start method %s: loss %.3f -> %.3f, exit codes %s" % (mp.get_start_method(), before, after,
                                                                 [w.exitcode for w in workers]))
    if any(w.exitcode != 0 for w in workers) or not after < 0.8 * before:
        sys.exit(1)


if __name__ == "__main__":
    main()
