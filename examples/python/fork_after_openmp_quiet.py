"""BROKEN under fork, though it does not hang this time: the parent runs a parallel op on an
OpenMP pool of 2 threads, then forks workers that keep the 2 intra-op threads but happen to run
only small ops (below the parallel grain). The day a worker runs a large op it waits forever in
libgomp for pool threads it does not have (fork_after_openmp.py). Exits 0 under every method.

    sharebench exec --mp-start fork,spawn,forkserver -- python3 examples/python/fork_after_openmp_quiet.py

Caught under fork by fork-safety (a fork while the pool ran with 2 intra-op threads), with the
line that forked. Its twin, fork_after_openmp_fixed.py, drops to one thread before forking.
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
    workers = [mp.Process(target=work, args=(r,)) for r in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    print("exit codes", [w.exitcode for w in workers])
