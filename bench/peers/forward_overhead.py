"""The Python side of bench/forward_bench.cc: one forward pass of the standard MLP under no-grad,
at width 8 (the interpreter's and dispatcher's cost per forward) and 256 (the standard model), as
the inference peer of torch_mp_peer.py runs it. Prints microseconds per forward, the median of 5
repetitions of 20 000 forwards each.

    OPENBLAS_NUM_THREADS=1 python3 bench/peers/forward_overhead.py
"""
import os
import statistics
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402


class Mlp(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(64, hidden), nn.Linear(hidden, hidden), nn.Linear(hidden, 10)

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


def main():
    torch.set_num_threads(1)
    x = torch.randn(2048, 64)
    steps = 20000
    for hidden in (8, 256):
        model = Mlp(hidden)
        times = []
        with torch.no_grad():
            for _ in range(5):
                t0 = time.perf_counter()
                for s in range(steps):
                    i = s % 64
                    model(x[i * 32:(i + 1) * 32])
                times.append((time.perf_counter() - t0) / steps * 1e6)
        print(f"python forward hidden:{hidden} {statistics.median(times):.1f} us")


if __name__ == "__main__":
    main()
