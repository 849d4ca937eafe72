"""Actors of one A3C-style trainer that explore alike: a shared policy (share_memory()) trained
lock-free by every actor, each sampling its actions with multinomial(). The parent seeds once
(torch.manual_seed(args.seed)) as the most copied A3C launcher does; each actor is meant to reseed
with torch.manual_seed(args.seed + rank), and this one drops the `+ rank`: every actor samples the
same actions from the same random numbers. A planted bug for `sharebench exec` (random-streams).
  --no-reseed  the actor does not seed at all: under fork it inherits its parent's generator, the
               same bug. Under spawn and forkserver it is none: each child starts torch afresh, and
               torch seeds its generator from the OS (measured: two forkserver children, two seeds).
  --fixed      torch.manual_seed(args.seed + rank): the clean twin.
"""
import argparse

import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

parser = argparse.ArgumentParser()
parser.add_argument("--seed", type=int, default=1)
parser.add_argument("--num-processes", type=int, default=2)
parser.add_argument("--num-steps", type=int, default=300)
parser.add_argument("--lr", type=float, default=0.01)
parser.add_argument("--no-reseed", action="store_true")
parser.add_argument("--fixed", action="store_true")


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 32)
        self.actor = nn.Linear(32, 3)

    def forward(self, x):
        return self.actor(torch.tanh(self.fc(x)))


def reward_of(state, action):
    # A fixed world: the best action is the index of the state's largest of its first three values.
    return 1.0 if int(action) == int(state[0, :3].argmax()) else -0.1


def actor(rank, args, shared_model):
    if args.fixed:
        torch.manual_seed(args.seed + rank)
    elif not args.no_reseed:
        torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    optimizer = optim.SGD(shared_model.parameters(), lr=args.lr)
    state = torch.zeros(1, 4)
    for step in range(args.num_steps):
        logits = shared_model(state)
        prob = F.softmax(logits, dim=-1)
        action = prob.multinomial(num_samples=1).detach()
        log_prob = F.log_softmax(logits, dim=-1).gather(1, action)
        loss = -(log_prob * reward_of(state, action)).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        state = torch.rand(1, 4)


if __name__ == "__main__":
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    shared_model = Policy()
    shared_model.share_memory()
    processes = []
    for rank in range(args.num_processes):
        p = mp.Process(target=actor, args=(rank, args, shared_model))
        p.start()
        processes.append(p)
    for p in processes:
        p.join()
    with torch.no_grad():
        state = torch.eye(4)[:3]
        print("greedy actions:", shared_model(state).argmax(dim=1).tolist())
