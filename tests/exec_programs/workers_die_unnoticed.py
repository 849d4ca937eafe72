"""A worker pool written as many training scripts write it: start, join, print "done". When the
workers raise, the parent never looks at their exit codes and exits 0 with nothing trained.
A planted bug for `sharebench exec` (deaths-noticed); --fixed checks each exitcode after join() and
exits 1 when a worker failed; --healthy has workers that do not raise (the clean twin).
"""
import sys

import torch
import torch.multiprocessing as mp
import torch.nn as nn


def train(rank, model, healthy):
    torch.set_num_threads(1)
    torch.manual_seed(rank)  # data of its own: a forked worker inherits its parent's generator
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(50):
        x = torch.randn(8, 4)
        if not healthy and step == 0:
            x = torch.randn(8, 5)  # a shape mistake: mat1 and mat2 shapes cannot be multiplied
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    healthy, fixed = "--healthy" in sys.argv, "--fixed" in sys.argv
    model = nn.Linear(4, 2)
    model.share_memory()
    workers = [mp.Process(target=train, args=(rank, model, healthy)) for rank in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    if fixed and any(w.exitcode != 0 for w in workers):
        sys.exit("a worker failed: exit codes %s" % [w.exitcode for w in workers])
    print("done")
