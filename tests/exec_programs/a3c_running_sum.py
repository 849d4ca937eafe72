"""The most copied A3C trainer's update loop, run on torch 2.x semantics: optimizer.zero_grad() over
the shared model sets the shared gradients to None, ensure_shared_grads links the local ones again,
and nothing ever clears the local model's gradients. Each backward() adds to the last, so every
step applies the running sum of all gradients so far. Exits 0. A planted bug for `sharebench exec`
(grads-delivered: a running sum); --fixed clears the local gradients too (model.zero_grad()).
"""
import argparse

import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--num-processes", type=int, default=2)
parser.add_argument("--num-steps", type=int, default=150)
parser.add_argument("--fixed", action="store_true")


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 32)
        self.actor = nn.Linear(32, 4)
        self.critic = nn.Linear(32, 1)

    def forward(self, x):
        h = torch.relu(self.fc(x))
        return self.actor(h), self.critic(h)


def ensure_shared_grads(model, shared_model):
    for param, shared_param in zip(model.parameters(), shared_model.parameters()):
        if shared_param.grad is not None:
            return
        shared_param._grad = param.grad


def train(rank, args, shared_model, optimizer, counter, lock):
    torch.manual_seed(rank)
    torch.set_num_threads(1)
    model = ActorCritic()
    for _ in range(args.num_steps):
        model.load_state_dict(shared_model.state_dict())
        x = torch.randn(16, 8)
        logits, value = model(x)
        loss = F.cross_entropy(logits, x[:, :4].argmax(1)) + 0.5 * (value.squeeze(1) - x[:, 0]).pow(2).mean()
        optimizer.zero_grad(set_to_none=True)
        if args.fixed:
            model.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 50)
        ensure_shared_grads(model, shared_model)
        optimizer.step()
        with lock:
            counter.value += 1


if __name__ == "__main__":
    args = parser.parse_args()
    torch.manual_seed(1)
    shared_model = ActorCritic()
    shared_model.share_memory()
    optimizer = torch.optim.SGD(shared_model.parameters(), lr=0.01)
    counter, lock = mp.Value("i", 0), mp.Lock()
    processes = []
    for rank in range(args.num_processes):
        p = mp.Process(target=train, args=(rank, args, shared_model, optimizer, counter, lock))
        p.start()
        processes.append(p)
    for p in processes:
        p.join()
