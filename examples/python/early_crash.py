"""BROKEN: both workers die in their first step (a shape error, as in a published A3C program
whose workers raise on a wrong input size) within a few milliseconds, and the parent then waits
forever in Queue.get() for results that will never come.

    sharebench exec --hang-timeout 5 -- python3 examples/python/early_crash.py

A hang; exec's table shows both workers, however short their lives, with their exit status and the
end of their traceback, and its diagnosis says where the parent waits and why.
"""
import torch
import torch.multiprocessing as mp


def work(rank, results):
    weights = torch.zeros(8, 4)
    batch = torch.zeros(2, 5)
    results.put((batch @ weights).sum().item())  # RuntimeError: shapes cannot be multiplied


if __name__ == "__main__":
    results = mp.Queue()
    workers = [mp.Process(target=work, args=(rank, results)) for rank in range(2)]
    for w in workers:
        w.start()
    total = sum(results.get() for _ in workers)  # waits forever: nobody will put
    print(total)
