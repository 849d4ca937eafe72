"""An inference worker pool in the layout of PyTorch's serving examples: the parent loads a model,
shares it (share_memory()), and starts workers that each run forward() in a loop on requests of their
own, reading the answer with argmax().item(). Correct: nothing writes the model while it serves. The
cost benchmark's second program (bench/exec_hooks_overhead.py): exec's hooks must cost a program
that only calls forward() next to nothing.
"""
import argparse

import torch
import torch.multiprocessing as mp
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--workers", type=int, default=2)
parser.add_argument("--requests", type=int, default=3000)


def serve(rank, model, requests, answered):
    torch.set_num_threads(1)
    torch.manual_seed(rank)
    count = 0
    with torch.no_grad():
        for _ in range(requests):
            request = torch.randn(8, 64)
            count += int(model(request).argmax(dim=1)[0].item() >= 0)
    with answered.get_lock():
        answered.value += count


if __name__ == "__main__":
    args = parser.parse_args()
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    model.eval()
    model.share_memory()
    answered = mp.Value("i", 0)
    workers = [mp.Process(target=serve, args=(rank, model, args.requests, answered)) for rank in range(args.workers)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    print("answered %d of %d" % (answered.value, args.workers * args.requests))
