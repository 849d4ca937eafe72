"""A Hogwild trainer that runs until Ctrl-C, as many public trainers do: the workers loop forever,
the parent waits; on Ctrl-C (SIGINT to the whole process group) each process stops where it is
and the parent saves nothing and exits. Run it with a window:

    sharebench exec --duration 10 -- python3 examples/python/never_ending_trainer.py
"""
import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F

try:
    import sharebench_progress
except ImportError:
    sharebench_progress = None


def train(rank, model):
    torch.set_num_threads(1)
    torch.manual_seed(rank)  # data of its own: a forked worker inherits its parent's generator
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    step = 0
    try:
        while True:
            x = torch.randn(32, 16)
            optimizer.zero_grad()
            F.cross_entropy(model(x), (x[:, 0] > 0).long()).backward()
            optimizer.step()
            step += 1
            if sharebench_progress and step % 10 == 0:
                sharebench_progress.beat(step)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2))
    model.share_memory()
    workers = [mp.Process(target=train, args=(rank, model)) for rank in range(2)]
    for w in workers:
        w.start()
    try:
        for w in workers:
            w.join()
    except KeyboardInterrupt:
        for w in workers:
            w.join()
        print("stopped")
