"""A "training with a lock" example as tutorials publish it (less an optimizer.share_memory() call,
which SGD does not have): four mp.Process workers each take one optimizer step on a shared model,
inside a module-level threading.Lock. Under fork each process
gets its own copy of that lock; under spawn and forkserver each child makes a new one when it
imports the module. It excludes no one. A planted bug for `sharebench exec` (mutual-exclusion);
--fixed makes one multiprocessing.Lock in the parent and passes it to every worker.
"""
import sys
import threading

import torch
import torch.multiprocessing as mp
import torch.nn as nn

lock = threading.Lock()  # Using threading.Lock for simplicity in this example.


def train_step(model, optimizer, input_data, target_data, shared_lock=None):
    with shared_lock or lock:  # Critical section: Only one process modifies parameters at a time.
        optimizer.zero_grad()
        output = model(input_data)
        loss = nn.functional.mse_loss(output, target_data)
        loss.backward()
        optimizer.step()


if __name__ == '__main__':
    fixed = "--fixed" in sys.argv[1:]
    model = nn.Linear(10, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    model.share_memory()

    inputs = [torch.randn(1, 10) for _ in range(4)]
    targets = [torch.randn(1, 2) for _ in range(4)]
    shared_lock = mp.Lock() if fixed else None

    processes = []
    for i in range(4):
        p = mp.Process(target=train_step, args=(model, optimizer, inputs[i], targets[i], shared_lock))
        processes.append(p)
        p.start()

    for p in processes:
        p.join()
