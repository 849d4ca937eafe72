"""A Hogwild trainer that keeps its global step in a one-element shared tensor, as IMPALA- and
A3C-style code often does (`global_step += 1` beside the parameters, all in shared memory). The
parameters may race by design; the step count may not: two workers read the same step and both
write it plus one. A planted bug for `sharebench exec` (lost-updates); --fixed counts under a lock
from a multiprocessing Manager, which every worker holds a proxy of.
"""
import argparse

import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--workers", type=int, default=2)
parser.add_argument("--steps", type=int, default=1500)
parser.add_argument("--fixed", action="store_true")


def train(rank, model, global_step, lock, steps):
    torch.manual_seed(rank)
    torch.set_num_threads(1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(steps):
        x = torch.randn(8, 6)
        loss = F.mse_loss(model(x), x[:, :1])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()  # Hogwild: the parameters race on purpose
        if lock is not None:
            with lock:
                global_step += 1
        else:
            global_step += 1


if __name__ == "__main__":
    args = parser.parse_args()
    model = nn.Linear(6, 1)
    model.share_memory()
    global_step = torch.zeros(1, dtype=torch.int64).share_memory_()
    manager = mp.Manager() if args.fixed else None
    lock = manager.Lock() if manager else None
    workers = [mp.Process(target=train, args=(rank, model, global_step, lock, args.steps)) for rank in range(args.workers)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    print("global step %d of %d" % (int(global_step), args.workers * args.steps))
