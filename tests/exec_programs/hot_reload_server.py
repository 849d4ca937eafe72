"""A model server that hot-reloads its weights, in the layout of public serving code: the parent
shares one model (share_memory()), starts inference workers that answer requests with forward(),
and keeps loading the newest checkpoint into that same model while they run. Planted bug: nothing
keeps a reload and a forward() apart, so a worker answers with some layers of the old checkpoint
and some of the new one. `--copy-loop` reloads with a loop of copy_() over the parameters, as some
servers write it, instead of load_state_dict(). `--fixed`: one mp.Lock, passed to every worker,
held around each reload and each request's forward().
"""
import argparse
import time

import torch
import torch.multiprocessing as mp
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--workers", type=int, default=2)
parser.add_argument("--requests", type=int, default=1500)
parser.add_argument("--copy-loop", action="store_true")
parser.add_argument("--fixed", action="store_true")


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU())
        self.head = nn.Linear(256, 10)

    def forward(self, x):
        return self.head(self.body(x))


def newest_checkpoint(version):
    # stands for torch.load() of the file the trainer wrote last
    torch.manual_seed(version)
    return Classifier().state_dict()


def serve(rank, model, lock, requests, answered):
    torch.set_num_threads(1)
    torch.manual_seed(rank)
    count = 0
    with torch.no_grad():
        for _ in range(requests):
            request = torch.randn(16, 64)
            if lock is not None:
                with lock:
                    scores = model(request)
            else:
                scores = model(request)
            count += int(scores.argmax(dim=1)[0].item() >= 0)
    with answered.get_lock():
        answered.value += count


def reload(model, version, copy_loop):
    state = newest_checkpoint(version)
    if copy_loop:
        with torch.no_grad():
            for param, new in zip(model.parameters(), state.values()):
                param.copy_(new)
    else:
        model.load_state_dict(state)


if __name__ == "__main__":
    args = parser.parse_args()
    torch.set_num_threads(1)
    model = Classifier()
    model.eval()
    model.share_memory()
    lock = mp.Lock() if args.fixed else None
    answered = mp.Value("i", 0)
    workers = [mp.Process(target=serve, args=(rank, model, lock, args.requests, answered))
               for rank in range(args.workers)]
    for w in workers:
        w.start()
    version = 0
    while any(w.is_alive() for w in workers):
        version += 1
        if lock is not None:
            with lock:
                reload(model, version, args.copy_loop)
        else:
            reload(model, version, args.copy_loop)
        time.sleep(0.002)
    for w in workers:
        w.join()
    print("answered %d of %d requests, %d reloads" % (answered.value, args.workers * args.requests, version))
    raise SystemExit(0 if all(w.exitcode == 0 for w in workers) else 1)
