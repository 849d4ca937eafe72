"""Parameter averaging over Gloo: each worker trains its own replica on its own data and, every
few steps, all workers average their parameters with all_reduce (torch.distributed, backend gloo,
a file rendezvous). The program checks that the replicas agree at the end.

    sharebench exec --mp-start fork,spawn,forkserver -- python3 examples/python/param_averaging.py
"""
import os
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F

try:
    import sharebench_progress
except ImportError:
    sharebench_progress = None

WORKERS, STEPS, EVERY = 2, 200, 10


def train(rank, rendezvous, results):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="file://" + rendezvous, rank=rank, world_size=WORKERS)
    torch.manual_seed(0)  # the same initial replica everywhere
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(rank + 1)
    for step in range(STEPS):
        x = torch.randn(32, 16, generator=g)
        optimizer.zero_grad()
        F.cross_entropy(model(x), (x[:, 0] > 0).long()).backward()
        optimizer.step()
        if (step + 1) % EVERY == 0:
            with torch.no_grad():
                for p in model.parameters():
                    dist.all_reduce(p.data)
                    p.data /= WORKERS
        if sharebench_progress:
            sharebench_progress.beat(step + 1)
    flat = torch.cat([p.detach().flatten() for p in model.parameters()])
    results[rank] = flat.clone()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as directory:
        rendezvous = os.path.join(directory, "rendezvous")
        with mp.Manager() as manager:
            results = manager.dict()
            workers = [mp.Process(target=train, args=(r, rendezvous, results)) for r in range(WORKERS)]
            for w in workers:
                w.start()
            for w in workers:
                w.join()
            if any(w.exitcode != 0 for w in workers) or len(results) != WORKERS:
                sys.exit("a worker failed: exit codes %s" % [w.exitcode for w in workers])
            spread = max((results[r] - results[0]).abs().max().item() for r in range(WORKERS))
    print("replicas differ by at most %g after %d steps" % (spread, STEPS))
    sys.exit(0 if spread == 0 else 1)
