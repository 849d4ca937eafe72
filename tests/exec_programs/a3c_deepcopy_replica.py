"""A3C workers in the layout of public pytorch-a3c code, whose local replica is made with
copy.deepcopy(shared_model) instead of a fresh model. Planted bug: the parent ran one sanity
forward/backward on the shared model before starting the workers, so its parameters carry .grad
tensors, and deepcopy gives every replica copies of them. ensure_shared_grads() links the shared
model's gradients to the replica's only when they are None, so it never links them: backward() fills
the replica's gradients while the shared optimizer steps on the shared ones, which
optimizer.zero_grad() keeps at zero. The shared model never learns. A bug under fork only: spawn and
forkserver pickle a parameter without its .grad, so there the replica starts with none. `--fixed`: the parent clears the
gradients it made (`zero_grad(set_to_none=True)`) before sharing, so each worker links its own.
"""
import argparse
import copy

import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--workers", type=int, default=2)
parser.add_argument("--updates", type=int, default=300)
parser.add_argument("--fixed", action="store_true")


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 32)
        self.actor = nn.Linear(32, 4)
        self.critic = nn.Linear(32, 1)

    def forward(self, x):
        h = F.relu(self.fc(x))
        return self.actor(h), self.critic(h)


def ensure_shared_grads(model, shared_model):
    for param, shared_param in zip(model.parameters(), shared_model.parameters()):
        if shared_param.grad is not None:
            return
        shared_param._grad = param.grad


def train(rank, shared_model, optimizer, updates):
    torch.manual_seed(1 + rank)
    torch.set_num_threads(1)
    model = copy.deepcopy(shared_model)
    for _ in range(updates):
        model.load_state_dict(shared_model.state_dict())
        states = torch.randn(16, 8)
        logits, values = model(states)
        returns = states.sum(dim=1, keepdim=True)
        policy_loss = -F.log_softmax(logits, dim=1)[:, 0].mean()
        value_loss = (returns - values).pow(2).mean()
        optimizer.zero_grad()
        (policy_loss + 0.5 * value_loss).backward()
        ensure_shared_grads(model, shared_model)
        optimizer.step()


if __name__ == "__main__":
    args = parser.parse_args()
    torch.manual_seed(1)
    shared_model = ActorCritic()
    logits, values = shared_model(torch.randn(4, 8))  # a sanity check before training
    (logits.sum() + values.sum()).backward()
    if args.fixed:
        shared_model.zero_grad(set_to_none=True)
    shared_model.share_memory()
    optimizer = torch.optim.SGD(shared_model.parameters(), lr=0.01)
    processes = []
    for rank in range(args.workers):
        p = mp.Process(target=train, args=(rank, shared_model, optimizer, args.updates))
        p.start()
        processes.append(p)
    for p in processes:
        p.join()
    raise SystemExit(0 if all(p.exitcode == 0 for p in processes) else 1)
