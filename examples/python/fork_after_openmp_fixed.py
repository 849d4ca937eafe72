"""The fix of fork_after_openmp_quiet.py: the parent ran a parallel op on an OpenMP pool of 2
threads, and drops to one intra-op thread before it forks, so its children never enter the pool's
parallel region (the pool's threads are still alive, idle). Clean under every start method.

    sharebench exec --mp-start fork,spawn,forkserver -- python3 examples/python/fork_after_openmp_fixed.py
"""
import torch
import torch.multiprocessing as mp


def work(rank):
    x = torch.ones(1000)  # small: below the grain, never enters the parallel region
    for _ in range(100):
        x.add_(1)


if __name__ == "__main__":
    torch.set_num_threads(2)
    torch.ones(1 << 24).add_(1)  # the parent's OpenMP pool is now running
    torch.set_num_threads(1)  # the fix: children inherit one intra-op thread and never use the pool
    workers = [mp.Process(target=work, args=(r,)) for r in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    print("exit codes", [w.exitcode for w in workers])
