"""A3C's shared optimizer, written as the popular A3C repositories write it, correctly: the
SharedAdam's state (step counter and both moments) is made in the parent and moved to shared
memory before the workers start; each worker keeps a local replica, syncs it from the shared
model, computes its gradients locally, hands them to the shared parameters and steps the shared
optimizer under a lock.

    sharebench exec --mp-start fork,spawn,forkserver -- python3 examples/python/shared_adam.py

Its broken twins: shared_adam_int_step.py, shared_adam_lazy_state.py, shared_adam_stale_grads.py.
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


class SharedAdam(torch.optim.Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        super().__init__(params, lr=lr, betas=betas, eps=eps)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = torch.tensor(0.0)
                state["exp_avg"] = torch.zeros_like(p.data)
                state["exp_avg_sq"] = torch.zeros_like(p.data)

    def share_memory(self):
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"].share_memory_()
                state["exp_avg"].share_memory_()
                state["exp_avg_sq"].share_memory_()


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
    optimizer = SharedAdam(shared_model.parameters(), lr=1e-3)
    optimizer.share_memory()
    lock = mp.Lock()
    workers = [mp.Process(target=train, args=(rank, shared_model, optimizer, lock, 200)) for rank in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    step = optimizer.state[next(shared_model.parameters())]["step"]
    print("shared step counter %d, exit codes %s" % (int(step), [w.exitcode for w in workers]))
