"""A master that negates every element of a multiprocessing Array as fast as it can while three
workers print it, as a question-and-answer thread on sharing weights through an Array shows it,
bounded. In the form of its first attempt, each element is read and written under the Array's own
lock, which guards one element at a time: a worker prints a mix of two versions (0,-1,2,-3,...). A
planted bug for `sharebench exec` (consistent-snapshots); --fixed is the thread's final form, one
RLock passed as the Array's lock and held around the whole loops. The master runs for --seconds
(the original runs until Ctrl-C), then terminates its workers as the original does.
"""
import sys
import time
from multiprocessing import Array, Process, RLock
from time import sleep


def worker(n, array, arrayLock):
    while True:
        if arrayLock is not None:
            arrayLock.acquire()
        print("Worker: %i -> %s" % (n, ",".join(str(i) for i in array)), flush=True)
        if arrayLock is not None:
            arrayLock.release()
        sleep(0.02 * (n + 1))


if __name__ == '__main__':
    fixed = "--fixed" in sys.argv[1:]
    seconds = float(sys.argv[sys.argv.index("--seconds") + 1]) if "--seconds" in sys.argv else 1.5
    if fixed:
        arrayLock = RLock()
        array = Array('i', range(10), lock=arrayLock)
    else:
        arrayLock = None
        array = Array('i', range(10))

    pd = {}
    for i in range(3):
        pd[i] = Process(target=worker, args=(i, array, arrayLock))
        pd[i].start()

    until = time.monotonic() + seconds
    while time.monotonic() < until:
        if arrayLock is not None:
            arrayLock.acquire()
        for i in range(len(array)):
            array[i] = -array[i]
        if arrayLock is not None:
            arrayLock.release()

    for p in pd.values():
        p.terminate()
    for p in pd.values():
        p.join()
