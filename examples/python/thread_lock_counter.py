"""BROKEN: the twin of locked_counter.py with a threading.Lock. Each process has its own copy of
it (fork copies it, spawn and forkserver import the module afresh), so it excludes nothing
between processes: read-modify-write updates are lost, the program's own check fails (exit 1).
"""
import sys
import threading

import torch
import torch.multiprocessing as mp

try:
    import sharebench_progress
except ImportError:
    sharebench_progress = None

WORKERS, ADDS = 2, 20000
lock = threading.Lock()  # the bug: a process-local lock guarding process-shared memory


def add(counter, start):
    start.wait()  # every worker adds at the same time
    for i in range(ADDS):
        with lock:
            value = counter[0].item()
            counter[0] = value + 1
        if sharebench_progress and i % 100 == 99:
            sharebench_progress.beat(i + 1)


if __name__ == "__main__":
    counter = torch.zeros(1, dtype=torch.int64).share_memory_()
    start = mp.Barrier(WORKERS)
    workers = [mp.Process(target=add, args=(counter, start)) for _ in range(WORKERS)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    total, want = int(counter[0]), WORKERS * ADDS
    print("counter %d of %d (%d lost)" % (total, want, want - total))
    sys.exit(0 if total == want else 1)
