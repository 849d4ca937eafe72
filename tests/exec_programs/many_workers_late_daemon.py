"""A program of many short workers (a test suite, a DataLoader made again every epoch: PyTorch's
own test_multiprocessing.py forks some 250) that leaves a daemon behind late in its life, as the
file_system sharing strategy's torch_shm_manager is: started by a worker, it outlives the program
until its clients are gone. exec keeps figures for the first 128 processes only; the ones after
must still be watched, or the daemon escapes exec's end and is blamed on the harness (no-leaks).

Default: the daemon is torch_shm_manager (named so here: bash's `exec -a`), a helper by design that
ends 2 s after the program: every check passes.
--stray: the daemon is an ordinary process that outlives the program: no-survivors must fail,
naming it.
"""
import multiprocessing as mp
import subprocess
import sys
import time


def work(i):
    time.sleep(0.3)  # long enough for exec's scans (every 50 ms) to see each one, on a loaded machine too
    return i


if __name__ == "__main__":
    for batch in range(14):  # 140 workers, ten at a time: more processes than exec keeps rows for
        workers = [mp.Process(target=work, args=(batch * 10 + i,)) for i in range(10)]
        for p in workers:
            p.start()
        for p in workers:
            p.join()
            assert p.exitcode == 0, p.exitcode
    name, seconds = ("stray_daemon", 30) if "--stray" in sys.argv else ("torch_shm_manager", 2)
    subprocess.Popen(["bash", "-c", f"exec -a {name} sleep {seconds}"], start_new_session=True)
    print(f"started {name}; leaving it behind")
