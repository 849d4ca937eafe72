"""BROKEN: shared_adam.py with a plain torch.optim.Adam made in the parent and handed to the
workers before it has any state. Adam creates its state on the first step(), so each worker makes
its own step counter and moments: private state while the parameters are shared. Exits 0.

    sharebench exec --mp-start fork,spawn,forkserver -- python3 examples/python/shared_adam_lazy_state.py

Caught by optimizer-state-shared (state created inside each worker). The fix: shared_adam.py
(state made in the parent and share_memory_()'d before the workers start).
"""
import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F

try:
    import sharebench_progress
except ImportError:
    sharebench_progress = None


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 2)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def ensure_shared_grads(model, shared_model):
    for param, shared_param in zip(model.parameters(), shared_model.parameters()):
        shared_param._grad = param.grad


def train(rank, shared_model, optimizer, lock, steps):
    torch.set_num_threads(1)
    torch.manual_seed(rank + 1)
    model = Net()
    for step in range(steps):
        model.load_state_dict(shared_model.state_dict())
        x = torch.randn(32, 16)
        loss = F.cross_entropy(model(x), (x[:, 0] > 0).long())
        model.zero_grad()
        loss.backward()
        with lock:
            ensure_shared_grads(model, shared_model)
            optimizer.step()
        if sharebench_progress:
            sharebench_progress.beat(step + 1)


if __name__ == "__main__":
    torch.manual_seed(0)
    shared_model = Net()
    shared_model.share_memory()
    optimizer = torch.optim.Adam(shared_model.parameters(), lr=1e-3)  # no state yet: made in each worker
    lock = mp.Lock()
    workers = [mp.Process(target=train, args=(rank, shared_model, optimizer, lock, 200)) for rank in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    print("exit codes %s" % [w.exitcode for w in workers])
