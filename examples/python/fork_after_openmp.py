"""BROKEN under fork: the parent runs a parallel op on an OpenMP pool of 2 threads, then forks
workers that run parallel ops too. A forked child inherits the pool's state but not its threads,
and waits for them forever in libgomp (reproduced on the project's machine). Under spawn and
forkserver each worker starts from a fresh interpreter: it passes.

    sharebench exec --mp-start fork,spawn --hang-timeout 5 -- python3 examples/python/fork_after_openmp.py

The fix: torch.set_num_threads(1) in the parent before it forks, or spawn/forkserver.
"""
import torch
import torch.multiprocessing as mp


def work(rank):
    x = torch.ones(1 << 24)
    for _ in range(3):
        x.add_(1)  # 16M floats: above the grain, so it enters the OpenMP parallel region
    print("worker %d done" % rank, flush=True)


if __name__ == "__main__":
    torch.set_num_threads(2)
    torch.ones(1 << 24).add_(1)  # the parent's OpenMP pool is now running
    workers = [mp.Process(target=work, args=(r,)) for r in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    print("exit codes", [w.exitcode for w in workers])
