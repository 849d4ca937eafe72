"""An A3C launcher in the layout of the most copied PyTorch A3C repository: a shared model, a
shared frame counter (mp.Value) and a lock made in the parent, handed to every trainer. The trainer
counts its frames with `counter.value += 1` and forgets the lock: two trainers read the same value
and both write it plus one. A planted bug for `sharebench exec` (lost-updates); --fixed counts
under the lock (`with lock: counter.value += 1`).
"""
import argparse

import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--num-processes", type=int, default=2)
parser.add_argument("--num-steps", type=int, default=3000)
parser.add_argument("--fixed", action="store_true")


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 16)
        self.actor = nn.Linear(16, 2)
        self.critic = nn.Linear(16, 1)

    def forward(self, x):
        h = torch.tanh(self.fc(x))
        return self.actor(h), self.critic(h)


def train(rank, args, shared_model, counter, lock):
    torch.manual_seed(1 + rank)
    torch.set_num_threads(1)
    model = ActorCritic()
    model.load_state_dict(shared_model.state_dict())
    state = torch.randn(1, 4)
    for step in range(args.num_steps):
        with torch.no_grad():
            logits, value = model(state)
        action = F.softmax(logits, dim=-1).multinomial(1)
        state = torch.randn(1, 4) * 0.1 + action.float()
        if args.fixed:
            with lock:
                counter.value += 1
        else:
            counter.value += 1


if __name__ == "__main__":
    args = parser.parse_args()
    torch.manual_seed(1)
    shared_model = ActorCritic()
    shared_model.share_memory()
    counter = mp.Value('i', 0)
    lock = mp.Lock()
    processes = []
    for rank in range(args.num_processes):
        p = mp.Process(target=train, args=(rank, args, shared_model, counter, lock))
        p.start()
        processes.append(p)
    for p in processes:
        p.join()
    print("frames counted: %d of %d" % (counter.value, args.num_processes * args.num_steps))
