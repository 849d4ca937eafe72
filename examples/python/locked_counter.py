"""A locked update: workers add to one shared counter (a tensor in shared memory) under a
multiprocessing.Lock, which is a process-shared semaphore. The program checks the total itself.

    sharebench exec --mp-start fork,spawn,forkserver -- python3 examples/python/locked_counter.py

Its broken twin, thread_lock_counter.py, uses a threading.Lock and loses updates.
"""
import sys

import torch
import torch.multiprocessing as mp

try:
    import sharebench_progress
except ImportError:
    sharebench_progress = None

WORKERS, ADDS = 2, 20000


def add(counter, lock, start):
    start.wait()  # every worker adds at the same time
    for i in range(ADDS):
        with lock:
            value = counter[0].item()  # read, modify, write: safe only under a lock all processes share
            counter[0] = value + 1
        if sharebench_progress and i % 100 == 99:
            sharebench_progress.beat(i + 1)


if __name__ == "__main__":
    counter = torch.zeros(1, dtype=torch.int64).share_memory_()
    lock = mp.Lock()
    start = mp.Barrier(WORKERS)
    workers = [mp.Process(target=add, args=(counter, lock, start)) for _ in range(WORKERS)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    total, want = int(counter[0]), WORKERS * ADDS
    print("counter %d of %d (%d lost)" % (total, want, want - total))
    sys.exit(0 if total == want else 1)
