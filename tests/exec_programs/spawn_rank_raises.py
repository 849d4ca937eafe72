"""torch.multiprocessing.spawn, as PyTorch's own tutorials launch workers, with one rank raising.
mp.spawn re-raises it in the parent, which fails: exit-status fails, deaths-noticed holds (the
program noticed), and the rank's own exception is shown in the process table.
"""
import torch
import torch.multiprocessing as mp


def run(rank, world_size):
    torch.set_num_threads(1)
    if rank == 1:
        raise ValueError("rank 1 could not load its shard")
    torch.ones(4).sum()


if __name__ == "__main__":
    mp.spawn(run, args=(2,), nprocs=2, join=True)
