"""A producer process that fills one preallocated batch buffer and puts it on a torch.multiprocessing
Queue, batch after batch, as a data pipeline written to avoid allocations might: the buffer is
shared, not copied, so by the time the consumer reads a batch, the producer may already
be writing the next one into it. A planted bug for `sharebench exec` (buffer-lifetime); --fixed
keeps a pool of buffers the consumer hands back (by index, on a second queue) before they are
refilled. --burst puts every batch before the queue's feeder thread first pickles one, as on a machine
whose cores are all busy (here the feeder runs at idle priority on the producer's core), so the buffer
moves into shared memory only after the last put.
"""
import argparse
import os
import resource

import torch
import torch.multiprocessing as mp

parser = argparse.ArgumentParser()
parser.add_argument("--batches", type=int, default=400)
parser.add_argument("--fixed", action="store_true")
parser.add_argument("--burst", action="store_true")
POOL = 4
# Back from SCHED_IDLE to SCHED_OTHER takes root or an RLIMIT_NICE of 20; without either, --burst only
# pins the feeder thread to the producer's core (the order is then likely, not certain).
can_renice = os.geteuid() == 0 or resource.getrlimit(resource.RLIMIT_NICE)[0] >= 20


def produce(batches, ready, free, buffers, done, burst):
    torch.set_num_threads(1)
    if burst:  # through the loop, the feeder thread runs only when this one waits: on its core, at idle priority
        cores = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {min(cores)})
        ready.put((-1, torch.zeros(1)))  # starts the feeder thread (a private tensor, sent once)
        feeder = ready._thread.native_id
        if can_renice:
            os.sched_setscheduler(feeder, os.SCHED_IDLE, os.sched_param(0))
    buf = torch.empty(64, 32)
    for i in range(batches):
        if buffers is not None:
            slot = free.get()  # wait until the consumer handed this buffer back
            buffers[slot].fill_(float(i))
            ready.put((slot, buffers[slot]))
        else:
            buf.fill_(float(i))
            ready.put((i, buf))
    if burst:  # and as any thread after it: on a loaded machine an idle-priority thread may wait for seconds
        if can_renice:
            os.sched_setscheduler(feeder, os.SCHED_OTHER, os.sched_param(0))
        os.sched_setaffinity(0, cores)
    ready.put(None)
    done.wait()  # a producer outlives what it sent: the consumer maps its buffers through it


def consume(ready, free, out):
    torch.set_num_threads(1)
    total = 0.0
    while True:
        item = ready.get()
        if item is None:
            break
        index, batch = item
        if index < 0:
            continue
        total += float(batch.mean())
        if free is not None:
            free.put(index)
    out.put(total)


if __name__ == "__main__":
    args = parser.parse_args()
    ready, out = mp.Queue(), mp.Queue()
    free = mp.Queue() if args.fixed else None
    buffers = None
    if args.fixed:
        buffers = [torch.zeros(64, 32).share_memory_() for _ in range(POOL)]
        for slot in range(POOL):
            free.put(slot)
    done = mp.Event()
    producer = mp.Process(target=produce, args=(args.batches, ready, free, buffers, done, args.burst))
    consumer = mp.Process(target=consume, args=(ready, free, out))
    producer.start()
    consumer.start()
    total = out.get()
    done.set()
    producer.join()
    consumer.join()
    print("consumed mean sum %.0f, sent %.0f" % (total, sum(range(args.batches))))
