#!/usr/bin/env python3
"""What `sharebench exec`'s Python sharing hooks cost a program: wall time and memory per process,
side by side in one run, rounds interleaved in a shuffled order (plain python3, exec
--sharing-checks off, exec with them on), medians reported with the ratios. The machine is shared and noisy: compare the ratios.

    python3 bench/exec_hooks_overhead.py build/sharebench [ROUNDS] [PROGRAM] [BASELINE]
        (default 11 rounds, every program; BASELINE: another build's sharebench, run with the
        checks on in the same rounds, for a before-and-after: its column is baseline / plain)

Wall time is the program's own (exec's program_s: from its start to its end); memory is each
child's peak USS from exec's process table (on against off: a plain run has no table). Each round
also gives a ratio of its own (on against the plain run beside it); their median is steadier than a
ratio of medians on a noisy machine. `supervisor %` is the CPU time exec's supervisor spent watching
(its `supervisor_cpu_s`) over the program's wall time, as a share of one core: what exec takes from
a program that keeps every core busy.
"""
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

PY = "/usr/bin/python3"  # Debian's, with python3-torch
HERE = os.path.dirname(os.path.abspath(__file__))
# (name, path from the project's root, arguments, environment): our examples, then a Hogwild trainer
# in pytorch/examples' mnist_hogwild layout, long enough (100 epochs, about 2.5 s on the 2-core VM)
# that start-up does not dominate. Its workers call torch.set_num_threads(1), but Debian's torch
# computes with OpenBLAS, whose own thread in each worker spins (sched_yield) beside it: two
# workers then contend for two cores with two spinners, and the program's own wall time moves by
# +-30 % from run to run (2.7 s to 4.7 s, six plain runs in a row), which drowns any harness's cost.
# With OPENBLAS_NUM_THREADS=1, the same on both sides, six plain runs stay within 2.36-2.46 s.
PROGRAMS = [("hogwild.py", "examples/python/hogwild.py", [], {}),
            ("shared_adam.py", "examples/python/shared_adam.py", [], {}),
            ("dataloader_workers.py", "examples/python/dataloader_workers.py", [], {}),
            ("mnist_hogwild layout", "tests/exec_programs/hogwild_no_zero_grad.py", ["--fixed", "--epochs", "100"],
             {"OPENBLAS_NUM_THREADS": "1"}),
            # The same trainer four times as long (about 10 s): what is left of exec's cost there is
            # what it costs per second, its start-up (a few ms a process) spread thinner.
            ("mnist_hogwild layout, 400 epochs", "tests/exec_programs/hogwild_no_zero_grad.py",
             ["--fixed", "--epochs", "400"], {"OPENBLAS_NUM_THREADS": "1"}),
            # An inference pool: two workers run forward() on a shared model, 20 us a request, and
            # read each answer with item(), which the race hooks look at; about 4.5 s, 3 of them serving.
            ("inference server", "tests/exec_programs/inference_server.py", ["--requests", "150000"],
             {"OPENBLAS_NUM_THREADS": "1"})]
ENV = dict(os.environ)  # the program's environment, plain or under exec alike


def plain(script):
    t = time.monotonic()
    subprocess.run([PY] + script, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    return time.monotonic() - t, None


def under_exec(binary, script, checks, supervisor=None):
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([binary, "exec", "--format", "none", "--out", out, "--sharing-checks", checks, "--", PY] + script,
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
        rep = json.load(open(os.path.join(out, "results.json")))["cells"][0]["repetitions"][0]
        children = [p["uss_mb_peak"] for p in rep["processes"] if p["role"] == "child" and p["uss_mb_peak"] > 0]
        m = rep["metrics"]
        if supervisor is not None:
            supervisor.append(100 * m.get("supervisor_cpu_s", float("nan")) / m["program_s"])
        return m["program_s"], statistics.median(children) if children else None



def main():
    binary = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 11
    only = sys.argv[3] if len(sys.argv) > 3 else None  # a program's name: that one alone
    baseline = sys.argv[4] if len(sys.argv) > 4 else None
    print("| program | plain s | exec, checks off s | exec, checks on s | on / plain | on / off | paired on / plain | "
          "supervisor % | child USS off MiB | on MiB |" + (" baseline / plain | paired |" if baseline else ""))
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|" + ("--:|--:|" if baseline else ""))
    for name, path, args, env in PROGRAMS:
        if only and name != only:
            continue
        ENV.clear()
        ENV.update(os.environ, **env)
        script = [os.path.join(HERE, "..", path)] + args
        walls = {"plain": [], "off": [], "on": [], "baseline": []}
        supervisor = []  # the supervisor's CPU time over the program's wall time, %, checks on
        uss = {"off": [], "on": []}
        order = random.Random(rounds)  # each round runs the sides in an order of its own, the same on every sitting
        for _ in range(rounds):
            sides = ["plain", "off", "on"] + (["baseline"] if baseline else [])
            order.shuffle(sides)  # a side that always ran first (after the last round's exec) would be favoured
            for side in sides:
                if side == "plain":
                    walls["plain"].append(plain(script)[0])
                elif side == "baseline":
                    walls["baseline"].append(under_exec(baseline, script, "on")[0])
                else:
                    wall, mem = under_exec(binary, script, side, supervisor if side == "on" else None)
                    walls[side].append(wall)
                    if mem is not None:
                        uss[side].append(mem)
        m = {k: statistics.median(v) for k, v in walls.items() if v}
        u = {k: statistics.median(v) if v else float("nan") for k, v in uss.items()}
        paired = lambda side: statistics.median(a / b for a, b in zip(walls[side], walls["plain"]))
        row = "| %s | %.2f | %.2f | %.2f | %.3f | %.3f | %.3f | %.1f | %.1f | %.1f |" % (
            name, m["plain"], m["off"], m["on"], m["on"] / m["plain"], m["on"] / m["off"], paired("on"),
            statistics.median(supervisor), u["off"], u["on"])
        if baseline:
            row += " %.3f | %.3f |" % (m["baseline"] / m["plain"], paired("baseline"))
        print(row, flush=True)

if __name__ == "__main__":
    main()
