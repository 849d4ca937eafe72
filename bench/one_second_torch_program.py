"""A short Python program that imports torch and computes for about a second in one process: the
smallest program a user runs under `sharebench exec` in CI, where exec's fixed costs weigh most
(bench/command_cost.py). Prints nothing; exits 0.
"""
import time

import torch

torch.set_num_threads(1)
x = torch.randn(128, 128)
end = time.monotonic() + 1.0
while time.monotonic() < end:
    x = torch.tanh(x @ x.t() / 128.0)
