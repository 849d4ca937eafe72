"""A DataLoader whose worker crashes, in a child process, as PyTorch's own test_dataloader.py
(test_segfault) writes it: the child iterates a loader whose dataset segfaults in a worker; torch's
SIGCHLD handler sees the worker die and the loader raises in the child ("DataLoader worker (pid N)
is killed by signal" or "exited unexpectedly", naming the first dead worker it looked at); the
child fails; the parent reads its exit code and expects that failure. Every death was noticed
along the chain: deaths-noticed must pass.

--unchecked: the parent starts the child and exits 0 without reading its exit code. The child's
failure went unnoticed (and through it its workers'): deaths-noticed must fail, naming the child.

The worker crashes a moment into its first item, not at once: torch's SIGCHLD handler raises in the
child's main thread wherever it is, and once (the oracle suite's run of 26 Nov 2026, under fork)
that was inside an index queue's put(), between taking the queue's lock and the `with` that
releases it (CPython runs a signal handler between any two bytecodes). The child then hung at
exit, its finalizer waiting for that lock: a real hang, caught and shown with both stacks by exec,
but not this program's subject. By the time the worker crashes, the child waits in get().
"""
import ctypes
import sys
import time

import torch
import torch.multiprocessing as mp
from torch.utils.data import DataLoader, Dataset


class SegfaultDataset(Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, i):
        time.sleep(0.3)
        return ctypes.string_at(0)  # reads address 0: SIGSEGV in the worker


def load_one_batch():
    loader = DataLoader(SegfaultDataset(), batch_size=2, num_workers=2)
    next(iter(loader))


if __name__ == "__main__":
    torch.set_num_threads(1)
    child = mp.Process(target=load_one_batch)
    child.start()
    child.join(60)
    if "--unchecked" in sys.argv:
        sys.exit(0)
    if child.exitcode == 0:
        sys.exit("the loader's child succeeded although its dataset segfaults")
    print("the loader's child failed as it should: exit code %d" % child.exitcode)
