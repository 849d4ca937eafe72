#!/usr/bin/env python3
"""What `sharebench exec`'s Python sharing hooks cost a program: wall time and memory per process,
side by side in one run, rounds interleaved (plain python3, exec --sharing-checks off, exec with
them on), medians reported with the ratios. The machine is shared and noisy: compare the ratios.

    python3 bench/exec_hooks_overhead.py build/sharebench [ROUNDS] [PROGRAM]   (default 11 rounds, all)

Wall time is the program's own (exec's program_s: from its start to its end); memory is each
child's peak USS from exec's process table (on against off: a plain run has no table).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

PY = "/usr/bin/python3"  # Debian's, with python3-torch
HERE = os.path.dirname(os.path.abspath(__file__))
# (name, path from the project's root, arguments): our examples, then a Hogwild trainer in
# pytorch/examples' mnist_hogwild layout, long enough (100 epochs, about 4 s on the 2-core VM) that start-up does not dominate.
PROGRAMS = [("hogwild.py", "examples/python/hogwild.py", []),
            ("shared_adam.py", "examples/python/shared_adam.py", []),
            ("dataloader_workers.py", "examples/python/dataloader_workers.py", []),
            ("mnist_hogwild layout", "tests/exec_programs/hogwild_no_zero_grad.py", ["--fixed", "--epochs", "100"])]


def plain(script):
    t = time.monotonic()
    subprocess.run([PY] + script, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - t, None


def under_exec(binary, script, checks):
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([binary, "exec", "--format", "none", "--out", out, "--sharing-checks", checks, "--", PY] + script,
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        rep = json.load(open(os.path.join(out, "results.json")))["cells"][0]["repetitions"][0]
        children = [p["uss_mb_peak"] for p in rep["processes"] if p["role"] == "child" and p["uss_mb_peak"] > 0]
        return rep["metrics"]["program_s"], statistics.median(children) if children else None


def main():
    binary = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 11
    print("| program | plain s | exec, checks off s | exec, checks on s | on / plain | on / off | child USS off MiB | on MiB |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|")
    only = sys.argv[3] if len(sys.argv) > 3 else None  # a program's name: that one alone
    for name, path, args in PROGRAMS:
        if only and name != only:
            continue
        script = [os.path.join(HERE, "..", path)] + args
        walls = {"plain": [], "off": [], "on": []}
        uss = {"off": [], "on": []}
        for _ in range(rounds):
            walls["plain"].append(plain(script)[0])
            for checks in ("off", "on"):
                wall, mem = under_exec(binary, script, checks)
                walls[checks].append(wall)
                if mem is not None:
                    uss[checks].append(mem)
        m = {k: statistics.median(v) for k, v in walls.items()}
        u = {k: statistics.median(v) if v else float("nan") for k, v in uss.items()}
        print("| %s | %.2f | %.2f | %.2f | %.3f | %.3f | %.1f | %.1f |" % (
            name, m["plain"], m["off"], m["on"], m["on"] / m["plain"], m["on"] / m["off"], u["off"], u["on"]))


if __name__ == "__main__":
    main()
