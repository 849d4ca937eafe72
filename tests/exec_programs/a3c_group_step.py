"""A3C trainer in the layout of the popular public A3C repositories (main.py / train.py /
my_optim.py in one file), whose shared Adam keeps its step count in param_groups: a Python number
each worker advances in its own copy. Every process's bias correction starts over; the program
exits 0. A planted bug for `sharebench exec` (optimizer-state-shared: the counter advanced in the
children and not in the parent); a3c_group_step.py --fixed keeps it in a shared tensor.
"""
import argparse
import math
import os

import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser(description="A3C")
parser.add_argument("--lr", type=float, default=0.0001)
parser.add_argument("--num-processes", type=int, default=2)
parser.add_argument("--num-steps", type=int, default=150)
parser.add_argument("--seed", type=int, default=1)
parser.add_argument("--fixed", action="store_true", help="keep the step count in a shared tensor")


class ActorCritic(nn.Module):
    def __init__(self, num_inputs=8, action_space=4):
        super(ActorCritic, self).__init__()
        self.linear = nn.Linear(num_inputs, 64)
        self.critic_linear = nn.Linear(64, 1)
        self.actor_linear = nn.Linear(64, action_space)

    def forward(self, inputs):
        x = F.elu(self.linear(inputs))
        return self.critic_linear(x), self.actor_linear(x)


class SharedAdam(torch.optim.Optimizer):
    """Adam with its moments in shared memory; the step count lives with the hyper-parameters."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, shared_step=False):
        defaults = dict(lr=lr, betas=betas, eps=eps)
        super(SharedAdam, self).__init__(params, defaults)
        for group in self.param_groups:
            group["step"] = torch.zeros(1) if shared_step else 0
            for p in group["params"]:
                state = self.state[p]
                state["exp_avg"] = p.data.new().resize_as_(p.data).zero_()
                state["exp_avg_sq"] = p.data.new().resize_as_(p.data).zero_()

    def share_memory(self):
        for group in self.param_groups:
            if torch.is_tensor(group["step"]):
                group["step"].share_memory_()
            for p in group["params"]:
                state = self.state[p]
                state["exp_avg"].share_memory_()
                state["exp_avg_sq"].share_memory_()

    def step(self, closure=None):
        for group in self.param_groups:
            group["step"] += 1
            step = float(group["step"])
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                exp_avg.mul_(beta1).add_(p.grad.data, alpha=1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(p.grad.data, p.grad.data, value=1 - beta2)
                denom = exp_avg_sq.sqrt().add_(group["eps"])
                step_size = group["lr"] * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
                p.data.addcdiv_(exp_avg, denom, value=-step_size)
        return None


def ensure_shared_grads(model, shared_model):
    for param, shared_param in zip(model.parameters(), shared_model.parameters()):
        if shared_param.grad is not None:
            return
        shared_param._grad = param.grad


def train(rank, args, shared_model, optimizer):
    torch.manual_seed(args.seed + rank)
    torch.set_num_threads(1)
    model = ActorCritic()
    model.train()
    for _ in range(args.num_steps):
        model.load_state_dict(shared_model.state_dict())
        state = torch.randn(16, 8)
        value, logit = model(state)
        log_prob = F.log_softmax(logit, dim=1)
        action = log_prob.exp().multinomial(num_samples=1).detach()
        reward = (action.float() - 1.5).abs()
        advantage = reward - value
        loss = 0.5 * advantage.pow(2).mean() - (log_prob.gather(1, action) * advantage.detach()).mean()
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 50)
        ensure_shared_grads(model, shared_model)
        optimizer.step()


if __name__ == "__main__":
    os.environ["OMP_NUM_THREADS"] = "1"
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    shared_model = ActorCritic()
    shared_model.share_memory()
    optimizer = SharedAdam(shared_model.parameters(), lr=args.lr, shared_step=args.fixed)
    optimizer.share_memory()
    processes = []
    for rank in range(0, args.num_processes):
        p = mp.Process(target=train, args=(rank, args, shared_model, optimizer))
        p.start()
        processes.append(p)
    for p in processes:
        p.join()
