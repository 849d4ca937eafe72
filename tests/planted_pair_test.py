#!/usr/bin/env python3
"""One planted scenario of tests/planted, built against the installed package, judged as its own
CTest (planted/<scenario>): its planted bugs and their clean twins run under fork, spawn and
forkserver; every bug must be caught in every repetition by the checks its source declares beside
it (`// expect SCENARIO/VARIANT: CHECK says "WORDS"...`, as LLVM's TSan tests keep the expected
report in the test file), each message holding those words; every twin must be `ok` in every
repetition; a planted bug without an expect line fails; and nothing of the run may remain (no
/dev/shm entry with its prefix, no process of it).

    python3 tests/planted_pair_test.py BINARY OUTDIR REPETITIONS SCENARIO SOURCE_DIR [RUN-ARGS...]
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys

binary, out, reps, scenario, src = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
extra = sys.argv[6:]
shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)
problems = []

# What the source declares, beside the planted code.
expect = {}  # "scenario/variant" -> [(check, [words])]
for path in sorted(glob.glob(os.path.join(src, "tests", "planted", "*.cc"))):
    for line in open(path, encoding="utf-8"):
        m = re.match(r'\s*// expect ([\w.-]+/[\w.-]+): ([\w-]+) says (.*)$', line)
        if m and m.group(1).split("/")[0] == scenario:
            expect.setdefault(m.group(1), []).append((m.group(2), re.findall(r'"([^"]*)"', m.group(3))))
if not expect:
    problems.append(f"no `// expect {scenario}/...` line in tests/planted/*.cc: nothing to hold the bugs to")

log = open(os.path.join(out, "run.log"), "w")
code = subprocess.run([binary, "run", "--known-bugs", "--scenario", scenario, "--start", "fork,spawn,forkserver",
                       "--repetitions", str(reps), "--blocks", "0", "--out", os.path.join(out, "run"),
                       "--format", "console"] + extra, stdout=log, stderr=subprocess.STDOUT, timeout=1500).returncode
if code != 0:
    problems.append(f"the run exited {code}, want 0 (every bug caught, every twin clean): see {out}/run.log")

run = json.load(open(os.path.join(out, "run", "results.json")))
pid = run["run_id"].rsplit("-", 1)[1]
leftovers = [n for n in os.listdir("/dev/shm") if n.startswith(f"sharebench-{pid}-")]
if leftovers:
    problems.append(f"/dev/shm holds {leftovers}")
for p in os.listdir("/proc"):
    if not p.isdigit():
        continue
    try:
        env = open(f"/proc/{p}/environ", "rb").read().split(b"\0")
    except OSError:
        continue
    if f"SHAREBENCH_RUNNER_PID={pid}".encode() in env:
        problems.append(f"process {p} of the run is alive")

seen = set()
for cell in run["cells"]:
    c = cell["config"]
    name, start, kind = f'{c["scenario"]}/{c["variant"]}', c["start"], cell["outcome"]["kind"]
    if len(cell["repetitions"]) != reps:
        problems.append(f"{cell['id']}: {len(cell['repetitions'])} repetitions, want {reps}")
    if not cell["known_bug"]:
        if kind != "ok":
            problems.append(f"{cell['id']}: twin outcome {kind}, want ok ({cell['outcome'].get('summary')})")
        if scenario.startswith("shared-"):  # the promise was made and judged, not skipped
            for r in cell["repetitions"]:
                k = {x["name"]: x for x in r["checks"]}.get("model-shared")
                if not k or k["verdict"] != "pass":
                    problems.append(f"{cell['id']} repetition {r['index']}: no passing model-shared check")
        continue
    if name not in expect:
        problems.append(f"{cell['id']}: a planted bug with no `// expect {name}: ...` line beside it")
        continue
    seen.add((name, start))
    if kind != "bug-caught":
        problems.append(f"{cell['id']}: outcome {kind}, want bug-caught ({cell['outcome'].get('summary')})")
    for r in cell["repetitions"]:
        checks = {x["name"]: x for x in r["checks"]}
        for check, words in expect[name]:
            k = checks.get(check)
            if not k or k["verdict"] != "fail":
                problems.append(f"{cell['id']} repetition {r['index']}: {check} did not fail")
                continue
            text = k["message"] + " " + " ".join(w.get("error", "") + " " + w.get("stderr_tail", "") for w in r["workers"])
            missing = [w for w in words if w not in text]
            if missing:
                problems.append(f"{cell['id']} repetition {r['index']}: {check} message lacks {missing}: {k['message'][:300]}")
for name in expect:
    for start in ("fork", "spawn", "forkserver"):
        if (name, start) not in seen:
            problems.append(f"{name} never ran under {start}")

for p in problems:
    print("FAIL:", p)
print(f"planted {scenario}: {len(seen)} bug cells caught in every one of {reps} repetitions, {len(problems)} problem(s)")
sys.exit(1 if problems else 0)
