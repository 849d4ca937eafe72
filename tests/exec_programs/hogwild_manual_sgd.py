"""Hogwild with a hand-written SGD step, as tutorials and A3C ports write it when they skip
torch.optim: `p.data = p.data - lr * p.grad`. The assignment binds each parameter to a new tensor,
made by the subtraction in the worker's private memory, so from the first step every worker trains
its own copy and the shared model the parent holds never changes. Nothing fails and the program
exits 0. A planted bug for `sharebench exec` (updates-shared: the parameters were shared when the
worker received them and private at its end); --fixed updates in place (`p.data.sub_(...)`, as
torch.optim does), so every step lands in shared memory.
"""
import sys

import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def train(rank, model, lr, fixed):
    torch.set_num_threads(1)
    torch.manual_seed(1 + rank)
    for _ in range(150):
        x = torch.randn(16, 8)
        loss = F.cross_entropy(model(x), (x[:, :4].argmax(dim=1)))
        model.zero_grad()
        loss.backward()
        for p in model.parameters():
            if fixed:
                p.data.sub_(lr * p.grad)
            else:
                p.data = p.data - lr * p.grad


if __name__ == "__main__":
    torch.manual_seed(0)
    model = Policy()
    model.share_memory()
    before = [p.detach().clone() for p in model.parameters()]
    workers = [mp.Process(target=train, args=(rank, model, 0.05, "--fixed" in sys.argv)) for rank in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    moved = sum(not torch.equal(a, b) for a, b in zip(before, model.parameters()))
    print(f"parameter tensors the workers changed in the shared model: {moved} of {len(before)}")
