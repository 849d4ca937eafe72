"""The plain torch.multiprocessing program a user would write for each sharing strategy.

`sharebench peers` runs each strategy beside this program, round after round, on the same
workload (an MLP input-hidden-hidden-classes with ReLU, cross-entropy on batches of one size, one
intra-op thread and one OpenBLAS thread per process, the same steps per worker and the same start
method), and reports the ratio of the two throughputs. Each strategy is written as the public
examples write it: `model.share_memory()` and `torch.optim.SGD` for Hogwild (pytorch/examples'
mnist_hogwild), an `mp.Lock` around the step for a locked trainer, a shared-memory buffer and
`mp.Barrier` for averaging, a hand-written shared Adam (the A3C repositories' SharedAdam) for
A3C, `torch.distributed` with Gloo for all-reduce averaging.

Timed the way sharebench times a cell: each worker marks the clock after its first steps/20 steps
(its warm-up); throughput is the steps made after the marks over the time from the first mark to
the last worker's end. Prints one JSON object on stdout:
  {"strategy": ..., "procs": N, "start": ..., "steps": S, "steps_per_s": R}

    python3 torch_mp_peer.py STRATEGY --procs N --steps S [--batch B] [--start fork|spawn|forkserver]
"""
import argparse
import json
import os
import sys
import tempfile
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

STRATEGIES = ("inference", "hogwild", "locked-whole-step", "locked-update-only", "averaging-params",
              "averaging-grads", "averaging-params-gloo", "averaging-grads-gloo", "a3c-locked", "a3c-hogwild")
TRAIN_ROWS, TEST_ROWS = 8192, 2048


class Mlp(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.fc1 = nn.Linear(a.input, a.hidden)
        self.fc2 = nn.Linear(a.hidden, a.hidden)
        self.fc3 = nn.Linear(a.hidden, a.classes)

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


class SharedAdam(torch.optim.Adam):
    """Adam whose moments and step live in shared memory, as the public A3C programs write it."""

    def __init__(self, params, lr):
        super().__init__(params, lr=lr)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = torch.zeros(1)
                state["exp_avg"] = torch.zeros_like(p.data)
                state["exp_avg_sq"] = torch.zeros_like(p.data)

    def share_memory(self):
        for group in self.param_groups:
            for p in group["params"]:
                for value in self.state[p].values():
                    value.share_memory_()

    def step(self):
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                state["step"] += 1
                step = state["step"].item()
                state["exp_avg"].mul_(beta1).add_(p.grad, alpha=1 - beta1)
                state["exp_avg_sq"].mul_(beta2).addcmul_(p.grad, p.grad, value=1 - beta2)
                denom = (state["exp_avg_sq"] / (1 - beta2 ** step)).sqrt_().add_(group["eps"])
                p.data.addcdiv_(state["exp_avg"], denom, value=-group["lr"] / (1 - beta1 ** step))


class Timer:
    """The warm-up mark and the end of one worker, written into a shared array of 2 per rank."""

    def __init__(self, times, counts, rank, steps):
        self.times, self.counts, self.rank = times, counts, rank
        self.warm_at = max(1, steps // 20)

    def after(self, done):
        if done == self.warm_at:
            self.times[2 * self.rank] = time.perf_counter()
            self.counts[self.rank] = done

    def end(self, steps):
        self.times[2 * self.rank + 1] = time.perf_counter()
        self.counts[self.rank] = steps - self.counts[self.rank]


def batch(data, a, t):
    x, y = data
    i = t % (TRAIN_ROWS // a.batch)
    return x[i * a.batch:(i + 1) * a.batch], y[i * a.batch:(i + 1) * a.batch]


def worker(rank, a, model, data, shared, barrier, lock, times, counts):
    torch.set_num_threads(1)
    timer = Timer(times, counts, rank, a.steps)
    s = a.strategy
    if s.endswith("-gloo"):
        import torch.distributed as dist
        dist.init_process_group("gloo", init_method="file://" + shared, rank=rank, world_size=a.procs)
    barrier.wait()
    if s == "inference":
        x, _ = data
        rows = TEST_ROWS // a.batch
        with torch.no_grad():
            for step in range(a.steps):
                i = TRAIN_ROWS // a.batch + (step * a.procs + rank) % rows
                model(x[i * a.batch:(i + 1) * a.batch])
                timer.after(step + 1)
    elif s in ("hogwild", "locked-whole-step", "locked-update-only"):
        optimizer = torch.optim.SGD(model.parameters(), lr=a.lr)
        for step in range(a.steps):
            x, y = batch(data, a, step * a.procs + rank)
            if s == "locked-whole-step":
                with lock:
                    optimizer.zero_grad()
                    F.cross_entropy(model(x), y).backward()
                    optimizer.step()
            else:
                optimizer.zero_grad()
                F.cross_entropy(model(x), y).backward()
                if s == "locked-update-only":
                    with lock:
                        optimizer.step()
                else:
                    optimizer.step()
            timer.after(step + 1)
    elif s.startswith("averaging"):
        replica = Mlp(a)
        replica.load_state_dict(model.state_dict())
        optimizer = torch.optim.SGD(replica.parameters(), lr=a.lr)
        grads = "grads" in s
        params = list(replica.parameters())
        for step in range(a.steps):
            x, y = batch(data, a, step * a.procs + rank)
            optimizer.zero_grad()
            F.cross_entropy(replica(x), y).backward()
            if grads or (step + 1) % a.average_every == 0:
                tensors = [p.grad for p in params] if grads else [p.data for p in params]
                if s.endswith("-gloo"):
                    flat = torch.cat([t.reshape(-1) for t in tensors])
                    dist.all_reduce(flat)
                    flat /= a.procs
                else:
                    torch.cat([t.reshape(-1) for t in tensors], out=shared[rank])
                    barrier.wait()
                    flat = shared.mean(0)
                    barrier.wait()
                offset = 0
                for t in tensors:
                    t.copy_(flat[offset:offset + t.numel()].view_as(t))
                    offset += t.numel()
            optimizer.step()
            timer.after(step + 1)
    elif s.startswith("a3c"):
        optimizer = shared
        local = Mlp(a)
        for step in range(a.steps):
            local.load_state_dict(model.state_dict())
            x, y = batch(data, a, step * a.procs + rank)
            local.zero_grad()
            F.cross_entropy(local(x), y).backward()

            def deliver_and_step():
                for lp, sp in zip(local.parameters(), model.parameters()):
                    sp._grad = lp.grad
                optimizer.step()
            if s == "a3c-locked":
                with lock:
                    deliver_and_step()
            else:
                deliver_and_step()
            timer.after(step + 1)
    timer.end(a.steps)
    if s.endswith("-gloo"):
        dist.barrier()
        dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("strategy", choices=STRATEGIES)
    p.add_argument("--procs", type=int, default=1)
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--input", type=int, default=64)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--classes", type=int, default=10)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--average-every", type=int, default=10)
    p.add_argument("--start", choices=("fork", "spawn", "forkserver"), default="fork")
    a = p.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(1)
    ctx = mp.get_context(a.start)
    model = Mlp(a)
    model.share_memory()
    x = torch.randn(TRAIN_ROWS + TEST_ROWS, a.input).share_memory_()
    y = torch.randint(0, a.classes, (TRAIN_ROWS + TEST_ROWS,)).share_memory_()
    shared = None
    store = None
    if a.strategy in ("averaging-params", "averaging-grads"):
        shared = torch.zeros(a.procs, sum(p.numel() for p in model.parameters())).share_memory_()
    elif a.strategy.endswith("-gloo"):
        store = tempfile.NamedTemporaryFile(prefix="peer-gloo-", delete=False)
        store.close()
        os.unlink(store.name)
        shared = store.name
    elif a.strategy.startswith("a3c"):
        shared = SharedAdam(model.parameters(), lr=a.lr / 50)
        shared.share_memory()
    barrier, lock = ctx.Barrier(a.procs), ctx.Lock()
    times, counts = ctx.Array("d", 2 * a.procs), ctx.Array("l", a.procs)
    workers = [ctx.Process(target=worker, args=(r, a, model, (x, y), shared, barrier, lock, times, counts))
               for r in range(a.procs)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    if store is not None and os.path.exists(store.name):
        os.unlink(store.name)
    failed = [w.exitcode for w in workers if w.exitcode != 0]
    if failed:
        print(json.dumps({"error": f"workers exited with {failed}"}))
        return 1
    first_warm = min(times[2 * r] for r in range(a.procs))
    last_end = max(times[2 * r + 1] for r in range(a.procs))
    steady = sum(counts[:])
    print(json.dumps({"strategy": a.strategy, "procs": a.procs, "start": a.start, "steps": a.steps,
                      "steps_per_s": steady / (last_end - first_warm), "torch": torch.__version__}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
