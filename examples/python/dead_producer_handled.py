"""The twin of dead_producer.py: the consumer reads with a timeout and checks that the producer
is alive; when it is dead, it says so and exits 1, so the program ends instead of hanging.
A tensor on a queue carries only a handle: the receiver fetches its storage from the sender, so a
producer killed between put() and that fetch makes get() raise ConnectionError, handled the same.

    sharebench exec --fault kill:child@1 -- python3 examples/python/dead_producer_handled.py
"""
import queue as queue_module
import sys
import time

import torch
import torch.multiprocessing as mp


def produce(queue, items):
    for i in range(items):
        queue.put(torch.full((256,), float(i)))
        time.sleep(0.05)


if __name__ == "__main__":
    items = 60
    queue = mp.Queue()
    producer = mp.Process(target=produce, args=(queue, items))
    producer.start()
    total = 0.0
    received = 0
    while received < items:
        try:
            total += queue.get(timeout=0.5)[0].item()
            received += 1
        except (queue_module.Empty, ConnectionError) as error:
            if isinstance(error, ConnectionError):
                producer.join(timeout=1.0)  # a reset from a live producer is not this program's case
                if producer.is_alive():
                    raise
            if not producer.is_alive():
                print("the producer died (exit code %s) after %d items" % (producer.exitcode, received), flush=True)
                sys.exit(1)
    producer.join()
    print("received %d items, sum %.0f" % (items, total))
