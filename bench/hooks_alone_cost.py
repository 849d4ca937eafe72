#!/usr/bin/env python3
"""What exec's Python hooks alone cost the mnist_hogwild-layout trainer: the program run plainly and
with the hooks loaded as exec loads them (sitecustomize on PYTHONPATH, SHAREBENCH_EVENTS set), without
exec's supervisor, in alternated pairs; the figure is the median of the pairwise ratios (the machine
is shared and noisy: read the ratio, not the seconds).

    /usr/bin/python3 bench/hooks_alone_cost.py [PAIRS] [EPOCHS]   (default 7 pairs, 100 epochs)
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOOKS = os.path.join(ROOT, "wings/exec/python")


def main():
    pairs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    epochs = sys.argv[2] if len(sys.argv) > 2 else "100"
    program = ["/usr/bin/python3", os.path.join(ROOT, "tests/exec_programs/hogwild_no_zero_grad.py"), "--fixed",
               "--epochs", epochs]
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")  # both sides: see exec_hooks_overhead.py

    def run(with_hooks):
        e = dict(env)
        if with_hooks:
            events = os.path.join(tempfile.mkdtemp(), "events")
            open(events, "w").close()
            e.update(SHAREBENCH_EVENTS=events, SHAREBENCH_MP_START="fork", PYTHONPATH=HOOKS)
        t = time.monotonic()
        subprocess.run(program, env=e, check=True, stdout=subprocess.DEVNULL)
        return time.monotonic() - t

    ratios = []
    for i in range(pairs):
        if i % 2:
            hooked, plain = run(True), run(False)
        else:
            plain, hooked = run(False), run(True)
        ratios.append(hooked / plain)
        print(f"pair {i}: plain {plain:.2f} s, hooks {hooked:.2f} s, ratio {hooked / plain:.3f}", flush=True)
    print(f"hooks / plain, median of {pairs} pairs: {statistics.median(ratios):.3f} "
          f"(range {min(ratios):.3f}-{max(ratios):.3f})")


if __name__ == "__main__":
    main()
