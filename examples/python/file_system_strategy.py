"""torch.multiprocessing's `file_system` sharing strategy: shared tensors are named files in
/dev/shm, kept alive by torch_shm_manager, a daemon that outlives the program until its clients
are gone, then removes them and exits. Workers send results back through a queue, as PyTorch's
own multiprocessing tests do. Correct: exec must not call the daemon or its segments a leak.

    sharebench exec --mp-start fork,spawn,forkserver -- python3 examples/python/file_system_strategy.py
"""
import torch
import torch.multiprocessing as mp

# At import, so that spawned and forkserver children (which import this module again) use it too.
mp.set_sharing_strategy("file_system")


def work(rank, shared, results):
    torch.set_num_threads(1)
    shared[rank].add_(rank + 1)
    results.put(torch.full((64,), float(rank)))  # a new tensor, shared through the strategy


if __name__ == "__main__":
    shared = torch.zeros(2, 1024).share_memory_()
    results = mp.Queue()
    workers = [mp.Process(target=work, args=(rank, shared, results)) for rank in range(2)]
    for w in workers:
        w.start()
    got = sorted(float(results.get(timeout=60)[0]) for _ in workers)
    for w in workers:
        w.join()
    ok = got == [0.0, 1.0] and shared.sum().item() == 1024 * 3
    print("received %s, shared sum %.0f" % (got, shared.sum().item()))
    raise SystemExit(0 if ok else 1)
