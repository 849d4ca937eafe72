"""A3C with a shared RMSprop whose per-parameter state dicts exist before the workers start, but
empty: the constructor touched self.state[p] (which makes an empty dict) and share_memory() shared
what was there, nothing; the first step() in each worker fills them lazily, privately. The program
exits 0 and the workers never share their moments. A planted bug for `sharebench exec`
(optimizer-state-shared); --fixed fills the state in the constructor.
"""
import argparse

import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--workers", type=int, default=2)
parser.add_argument("--updates", type=int, default=150)
parser.add_argument("--fixed", action="store_true")


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 64), nn.Tanh(), nn.Linear(64, 4))

    def forward(self, x):
        return self.body(x)


class SharedRMSprop(torch.optim.Optimizer):
    def __init__(self, params, lr=7e-4, alpha=0.99, eps=0.1, eager=False):
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps))
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]  # an empty dict until the first step()
                if eager:
                    state["step"] = torch.zeros(1)
                    state["square_avg"] = torch.zeros_like(p.data)

    def share_memory(self):
        for group in self.param_groups:
            for p in group["params"]:
                for value in self.state[p].values():
                    value.share_memory_()

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = torch.zeros(1)
                    state["square_avg"] = torch.zeros_like(p.data)
                state["step"] += 1
                square_avg = state["square_avg"]
                square_avg.mul_(group["alpha"]).addcmul_(p.grad, p.grad, value=1 - group["alpha"])
                p.addcdiv_(p.grad, square_avg.sqrt().add_(group["eps"]), value=-group["lr"])


def worker(rank, args, global_net, optimizer):
    torch.set_num_threads(1)
    torch.manual_seed(100 + rank)
    local_net = Policy()
    for _ in range(args.updates):
        local_net.load_state_dict(global_net.state_dict())
        obs = torch.randn(32, 8)
        loss = F.cross_entropy(local_net(obs), obs[:, :4].argmax(dim=1))
        local_net.zero_grad()
        loss.backward()
        for lp, gp in zip(local_net.parameters(), global_net.parameters()):
            gp._grad = lp.grad
        optimizer.step()


if __name__ == "__main__":
    args = parser.parse_args()
    global_net = Policy()
    global_net.share_memory()
    optimizer = SharedRMSprop(global_net.parameters(), eager=args.fixed)
    optimizer.share_memory()
    workers = [mp.Process(target=worker, args=(i, args, global_net, optimizer)) for i in range(args.workers)]
    [w.start() for w in workers]
    [w.join() for w in workers]
