"""A producer hands data to the parent through a named POSIX shared-memory segment
(multiprocessing.shared_memory). The parent notices a dead producer and exits 1 rather than hang;
the segment is registered with multiprocessing's resource tracker, which unlinks it when its
creator dies before doing so. Under `--fault kill:child@1` nothing is left in /dev/shm.

    sharebench exec --fault kill:child@1 -- python3 examples/python/shm_handoff.py

Its broken twin, shm_handoff_untracked.py, takes the segment away from the tracker and leaks it.
"""
import queue as queue_module
import sys
import time
from multiprocessing import shared_memory

import multiprocessing as mp

def produce(names, rounds, untracked):
    segment = shared_memory.SharedMemory(create=True, size=1 << 20)
    if untracked:
        # The bug (a common workaround for the tracker unlinking segments "too early"): nobody will
        # unlink this segment if this process dies before its own unlink() below.
        from multiprocessing import resource_tracker
        resource_tracker.unregister(segment._name, "shared_memory")
    names.put(segment.name)
    for i in range(rounds):
        segment.buf[0] = i % 256
        time.sleep(0.05)
    segment.close()
    segment.unlink()


def main(untracked=False):
    names = mp.Queue()
    producer = mp.Process(target=produce, args=(names, 60, untracked))
    producer.start()
    while True:
        try:
            name = names.get(timeout=0.5)
            break
        except queue_module.Empty:
            if not producer.is_alive():
                sys.exit("the producer died before it shared its segment")
    print("producer shares /dev/shm/%s" % name, flush=True)
    while producer.is_alive():
        time.sleep(0.1)
    producer.join()
    if producer.exitcode != 0:
        sys.exit("the producer died (exit code %s)" % producer.exitcode)
    print("done")


if __name__ == "__main__":
    main()
