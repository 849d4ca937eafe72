#!/usr/bin/env python3
"""What a sharebench command costs a user, timed as their shell sees it: the whole process from
outside, not a span the harness reports about itself.

    /usr/bin/python3 bench/command_cost.py build/sharebench [PAIRS]   (default 9)

Two parts, each side by side in one run (the machine is shared and noisy: read the ratios):

1. Start-up. `--version`, `list`, `report --format md` on a 120-cell results file, and
   `exec -- /bin/true`: median wall and peak RSS of the command, run PAIRS times each, beside the
   same command given to the LibTorch binary (sharebench-torch beside it), which is what every
   command cost before the front stopped loading LibTorch.
2. exec's whole cost. A program plainly and under `sharebench exec` (checks on, --format none),
   in alternated pairs (plain first in even pairs, exec first in odd ones); the figure is the median
   of the pairwise ratios. Programs: a trainer in pytorch/examples' mnist_hogwild layout (about 5 s,
   OPENBLAS_NUM_THREADS=1 on both sides: see exec_hooks_overhead.py) and a one-second program that
   imports torch. Beside it, the CPU time the whole command used (user and system, every process of
   the tree, from wait4) against the plain program's: less noisy than wall time, it is the work exec
   adds, wherever it ran. And from exec's own results, where the difference goes: the program's span
   against the plain run, reading and judging the hooks' events (`end_reading_s`), waiting for the
   tree after the program's end (`tree_end_wait_s`), and the rest (start-up, launch, writing the
   results); and the hooks' import in one Python process (`python3 -X importtime`).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

PY = "/usr/bin/python3"  # Debian's, with python3-torch
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAMS = [
    ("mnist_hogwild layout (~5 s)", [os.path.join(ROOT, "tests/exec_programs/hogwild_no_zero_grad.py"), "--fixed",
                                     "--epochs", "240"]),
    ("one-second torch program", [os.path.join(ROOT, "bench/one_second_torch_program.py")]),
]
ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1")


def timed(argv, env=ENV, cpu=None):
    """Wall seconds and the process's own peak RSS (MiB), from wait4; its tree's CPU seconds appended to `cpu`."""
    t = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.monotonic() - t
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {p.returncode}")
    if cpu is not None:
        cpu.append(usage.ru_utime + usage.ru_stime)  # the tree's: every descendant was reaped within it
    return wall, usage.ru_maxrss / 1024.0


def results_of_120_cells(binary, folder):
    """A real one-cell run, its cell copied to 120 distinct cells (3 start methods x 1..40 processes)."""
    one = os.path.join(folder, "one")
    subprocess.run([binary, "run", "--scenario", "inference", "--procs", "1", "--repetitions", "1", "--steps", "20",
                    "--format", "none", "--out", one], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(os.path.join(one, "results.json")) as f:
        run = json.load(f)
    cell = run["cells"][0]
    cells = []
    for start in ("fork", "spawn", "forkserver"):
        for procs in range(1, 41):
            c = json.loads(json.dumps(cell))
            c["config"]["start"], c["config"]["procs"] = start, procs
            cells.append(c)
    run["cells"] = cells
    path = os.path.join(folder, "results-120.json")
    with open(path, "w") as f:
        json.dump(run, f)
    return path


def start_up(binary, pairs, folder):
    torch_binary = os.path.join(os.path.dirname(os.path.abspath(binary)), "sharebench-torch")
    results = results_of_120_cells(binary, folder)
    commands = [("--version", ["--version"]), ("list", ["list"]),
                ("report --format md (120 cells)", ["report", "--format", "md", "--out", os.path.join(folder, "md"), results]),
                ("exec -- /bin/true", ["exec", "--format", "none", "--out", os.path.join(folder, "x"), "--", "/bin/true"])]
    print(f"Start-up: median of {pairs} runs each, front beside the LibTorch binary, alternated")
    print(f"{'command':34} {'front ms':>9} {'MiB':>6} {'torch ms':>9} {'MiB':>6} {'front/torch':>12}")
    for name, args in commands:
        front, torch = [], []
        for i in range(pairs):
            order = [(front, binary), (torch, torch_binary)]
            for sink, b in (order if i % 2 == 0 else order[::-1]):
                sink.append(timed([b] + args))
        fw, fm = statistics.median(w for w, _ in front), max(m for _, m in front)
        tw, tm = statistics.median(w for w, _ in torch), max(m for _, m in torch)
        print(f"{name:34} {fw * 1e3:9.1f} {fm:6.1f} {tw * 1e3:9.1f} {tm:6.1f} {fw / tw:12.3f}")


def hooks_import_ms(binary, folder):
    """The hooks' import in one Python process: sitecustomize's cumulative import time."""
    log = os.path.join(folder, "importtime.txt")
    subprocess.run([binary, "exec", "--format", "none", "--out", os.path.join(folder, "imp"), "--", "sh", "-c",
                    f"{PY} -X importtime -c 'import torch' 2> {log}"], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, env=ENV)
    cumulative = {}
    with open(log) as f:
        for line in f:
            parts = [p.strip() for p in line.split("|")]
            if len(parts) == 3 and parts[1].isdigit():
                cumulative[parts[2]] = int(parts[1]) / 1000.0
    return cumulative.get("sitecustomize"), cumulative.get("torch")


def exec_cost(binary, pairs, folder):
    print(f"\nexec's whole cost: {pairs} alternated pairs each, median of pairwise ratios (exec / plain)")
    print(f"{'program':30} {'plain s':>8} {'exec s':>8} {'ratio':>7} {'span/plain':>11} {'end read s':>11} "
          f"{'tree wait s':>12} {'rest s':>7} {'CPU plain s':>12} {'CPU exec s':>11} {'supervisor s':>13}")
    for name, script in PROGRAMS:
        plains, execs, ratios, spans, reads, waits, rests = [], [], [], [], [], [], []
        plain_cpu, exec_cpu, supervisor = [], [], []
        for i in range(pairs):
            out = os.path.join(folder, f"e{i}")
            run_plain = lambda: timed([PY] + script, cpu=plain_cpu)[0]
            run_exec = lambda: timed([binary, "exec", "--format", "none", "--out", out, "--", PY] + script, cpu=exec_cpu)[0]
            if i % 2 == 0:
                p, e = run_plain(), run_exec()
            else:
                e, p = run_exec(), run_plain()
            with open(os.path.join(out, "results.json")) as f:
                m = json.load(f)["cells"][0]["repetitions"][0]["metrics"]
            plains.append(p), execs.append(e), ratios.append(e / p), spans.append(m["program_s"] / p)
            reads.append(m.get("end_reading_s", 0.0)), waits.append(m.get("tree_end_wait_s", 0.0))
            rests.append(e - m["program_s"] - reads[-1] - waits[-1])
            supervisor.append(m.get("supervisor_cpu_s", 0.0))
        med = statistics.median
        print(f"{name:30} {med(plains):8.3f} {med(execs):8.3f} {med(ratios):7.3f} {med(spans):11.3f} "
              f"{med(reads):11.3f} {med(waits):12.3f} {med(rests):7.3f} {med(plain_cpu):12.3f} {med(exec_cpu):11.3f} "
              f"{med(supervisor):13.3f}   (ratios {min(ratios):.3f}-{max(ratios):.3f})")
    hooks, torch = hooks_import_ms(binary, folder)
    print(f"\nThe hooks' import in one Python process: {hooks} ms (sitecustomize, cumulative), beside torch's {torch} ms")


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    pairs = int(sys.argv[2]) if len(sys.argv) > 2 else 9
    with tempfile.TemporaryDirectory() as folder:
        start_up(binary, pairs, folder)
        exec_cost(binary, pairs, folder)
    print(f"\nmachine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f} at the end; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")


if __name__ == "__main__":
    main()
