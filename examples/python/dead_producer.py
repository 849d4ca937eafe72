"""BROKEN when the producer dies: the consumer (the parent) reads a queue with no timeout and
never looks at the producer. Kill the producer and the parent waits forever in q.get().

    sharebench exec --fault kill:child@1 --hang-timeout 5 -- python3 examples/python/dead_producer.py

Its twin, dead_producer_handled.py, survives the same fault. The producer sends values, not shared
tensors: with a shared tensor the parent may instead die with ConnectionResetError, when the kill
lands between put() and the parent's fetch of the tensor's storage from the producer.
"""
import time

import torch
import torch.multiprocessing as mp


def produce(queue, items):
    for i in range(items):
        queue.put(torch.full((256,), float(i)).tolist())
        time.sleep(0.05)


if __name__ == "__main__":
    items = 60
    queue = mp.Queue()
    producer = mp.Process(target=produce, args=(queue, items))
    producer.start()
    total = 0.0
    for _ in range(items):
        total += queue.get()[0]  # blocks forever once the producer is dead
    producer.join()
    print("received %d items, sum %.0f" % (items, total))
