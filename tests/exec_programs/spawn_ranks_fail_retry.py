"""A launcher that retries, as scripts with elastic restarts write it: it starts an mp.spawn group,
does its own work for a while, then joins; every rank has raised by then. torch's join reports the
first failed rank (ProcessRaisedException) and reaps the other without reading its code; the
launcher catches the exception, says so and exits 0 ("giving up after 2 attempts"), as PyTorch's
own test_multiprocessing_spawn.py asserts the exception and goes on. The program was told of the
group's failure: deaths-noticed must pass (it failed on the second rank, which test_exception_all
hits when both ranks are dead before join looks).

--detached: the launcher starts the ranks with join=False and exits 0 without ever joining: no one
was told, and deaths-noticed must fail.
"""
import sys
import time

import torch
import torch.multiprocessing as mp


def run(rank):
    torch.set_num_threads(1)
    raise ValueError("rank %d: the shard is missing" % rank)


if __name__ == "__main__":
    if "--detached" in sys.argv:
        context = mp.start_processes(run, nprocs=2, join=False, start_method="spawn")
        while any(p.is_alive() for p in context.processes):
            time.sleep(0.05)
        print("launched; not waiting")
        sys.exit(0)
    for attempt in (1, 2):
        context = mp.start_processes(run, nprocs=2, join=False, start_method="spawn")
        while any(p.is_alive() for p in context.processes):  # the launcher's own work meanwhile
            time.sleep(0.05)
        try:
            while not context.join():
                pass
        except mp.ProcessRaisedException as e:
            print("attempt %d failed: %s" % (attempt, str(e).strip().splitlines()[-1]))
    print("giving up after 2 attempts")
