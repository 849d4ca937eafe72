"""Hogwild as pytorch/examples writes it, with one line moved: the model is shared, then converted
to float64 for numerical reasons. .double() makes new parameter tensors, outside shared memory, so
under fork each worker trains its own copy and the parent's model never changes. Exits 0. A
planted bug for `sharebench exec` (updates-shared, with the advice to share after converting);
--fixed converts first.
"""
import sys

import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 32)
        self.fc2 = nn.Linear(32, 2)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def train(rank, model):
    torch.set_num_threads(1)
    torch.manual_seed(rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for _ in range(100):
        x = torch.randn(32, 10, dtype=torch.float64)
        loss = F.cross_entropy(model(x), (x[:, 0] > 0).long())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    model = Net()
    if "--fixed" in sys.argv:
        model.double()
        model.share_memory()
    else:
        model.share_memory()
        model.double()
    processes = [mp.Process(target=train, args=(rank, model)) for rank in range(2)]
    for p in processes:
        p.start()
    for p in processes:
        p.join()
