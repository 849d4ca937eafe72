#!/usr/bin/env bash
# Planted bugs written as a user would write them (tests/planted), built out of tree against the
# installed package: every bug must be caught by the harness's own check in every repetition under
# fork, spawn and forkserver, every clean twin must stay clean in every repetition, and nothing of
# any run may remain afterwards (no /dev/shm entry with a run's prefix, no process of a run).
# Also: the out-of-tree binary runs `soak` on its own scenarios, and a worker's exit(0) under the
# forkserver leaves the later cells of the same run unaffected.
# usage: planted_bugs_test.sh BUILD_DIR SOURCE_DIR OUTDIR [REPETITIONS]
set -uo pipefail
build=$1
src=$2
out=$3
reps=${4:-10}
rm -rf "$out" && mkdir -p "$out"
status=0
fail() { echo "FAIL: $*"; status=1; }

source "$src/tests/lib/planted_out_of_tree.sh"
build_planted_out_of_tree "$build" "$src" "$out"

bench=$out/build/planted-bench
model=$out/build/planted-model-bench
starts=fork,spawn,forkserver
# Every planted bug and every twin, in one run per binary. The lock ring needs three ranks to be a
# ring worth the name; three for all keeps it one run.
"$bench" run --known-bugs --scenario lock-order,lock-ring,leaks,deaths,memory-growth,mutual-exclusion,torn-reads,replicas \
  --start $starts --procs 3 --steps 100 --repetitions "$reps" --hang-timeout 3 --out "$out/torch-free" --format console \
  >"$out/torch-free.log" 2>&1
code=$?
[ $code -eq 0 ] || { tail -60 "$out/torch-free.log"; fail "planted-bench run exited $code, want 0"; }
"$model" run --known-bugs --scenario shared-model,shared-reader --start $starts --procs 2 --repetitions "$reps" \
  --out "$out/model" --format console >"$out/model.log" 2>&1
code=$?
[ $code -eq 0 ] || { tail -40 "$out/model.log"; fail "planted-model-bench run exited $code, want 0"; }

python3 - "$reps" "$out/torch-free/results.json" "$out/model/results.json" <<'PY' || status=1
import json, os, sys
reps = int(sys.argv[1])
problems = []
# What must catch each planted bug: the check, and words its message must hold.
must = {
    "lock-order/inverted": ("lock-order", ["A → B → A", "A then B by rank", "B then A by rank"]),
    "lock-ring/ring": ("liveness", ["L0", "L1", "L2", "rank 0", "rank 1", "rank 2"]),
    "leaks/fd": ("no-leaks", ["descriptor", "/dev/null", "rank"]),
    "leaks/shm": ("no-leaks", ["/dev/shm", "planted-"]),
    "leaks/helper": ("no-leaks", ["started by rank"]),
    "deaths/exit0": ("liveness", ["exit(0)", "step 3"]),
    "deaths/terminate": ("liveness", ["signal 6", "step 3", "the shared queue was closed under us"]),
    "memory-growth/grows": ("memory", ["MiB"]),
    "mutual-exclusion/private-lock": ("mutual-exclusion", ["began while another worker was inside", "does not exclude"]),
    "torn-reads/no-recheck": ("consistent-snapshots", ["torn"]),
    "replicas/skip-round": ("replicas-agree", ["round 1"]),
    "shared-model/cloned": ("updates-reached-model", ["no update reached"]),
    "shared-model/to-double": ("updates-reached-model", ["no update reached"]),
    "shared-reader/round-trip": ("model-shared", ["rank 0:", "in private memory", "reader"]),
}
# And the harness's own model-shared check, beside the scenario's (what a user gets without wiring).
also = {
    "shared-model/cloned": ("model-shared", ["in private memory"]),
    "shared-model/to-double": ("model-shared", ["in private memory"]),
}
seen = {}
for path in sys.argv[2:]:
    run = json.load(open(path))
    pid = run["run_id"].rsplit("-", 1)[1]
    leftovers = [n for n in os.listdir("/dev/shm") if n.startswith(f"sharebench-{pid}-")]
    if leftovers: problems.append(f"{path}: /dev/shm holds {leftovers}")
    for p in os.listdir("/proc"):
        if not p.isdigit(): continue
        try: env = open(f"/proc/{p}/environ", "rb").read().split(b"\0")
        except OSError: continue
        if f"SHAREBENCH_RUNNER_PID={pid}".encode() in env: problems.append(f"{path}: process {p} of the run is alive")
    for cell in run["cells"]:
        c = cell["config"]
        name = f'{c["scenario"]}/{c["variant"]}'
        start = c["start"]
        kind = cell["outcome"]["kind"]
        reps_run = len(cell["repetitions"])
        if reps_run != reps: problems.append(f"{cell['id']}: {reps_run} repetitions, want {reps}")
        expected_bug = cell["known_bug"] and (name, start) != ("memory-growth/grows", "thread")
        if name in must and expected_bug:
            seen[(name, start)] = True
            if kind != "bug-caught": problems.append(f"{cell['id']}: outcome {kind}, want bug-caught ({cell['outcome'].get('summary')})")
            for (check, words), r in [(c, r) for c in [must[name]] + ([also[name]] if name in also else []) for r in cell["repetitions"]]:
                k = {x["name"]: x for x in r["checks"]}.get(check)
                if not k or k["verdict"] != "fail":
                    problems.append(f"{cell['id']} repetition {r['index']}: {check} did not fail")
                    continue
                text = k["message"] + " " + " ".join(w.get("error", "") + " " + w.get("stderr_tail", "") for w in r["workers"])
                missing = [w for w in words if w not in text]
                if missing: problems.append(f"{cell['id']} repetition {r['index']}: {check} message lacks {missing}: {k['message'][:300]}")
        elif cell["known_bug"]:
            problems.append(f"{cell['id']}: a planted bug with no entry in this test")
        else:
            if kind != "ok": problems.append(f"{cell['id']}: twin outcome {kind}, want ok ({cell['outcome'].get('summary')})")
            if c["scenario"].startswith("shared-"):  # the promise was made and judged, not skipped
                for r in cell["repetitions"]:
                    k = {x["name"]: x for x in r["checks"]}.get("model-shared")
                    if not k or k["verdict"] != "pass": problems.append(f"{cell['id']} repetition {r['index']}: no passing model-shared check")
for name in must:
    for start in ("fork", "spawn", "forkserver"):
        if (name, start) not in seen: problems.append(f"{name} never ran under {start}")
for p in problems: print("FAIL:", p)
print(f"planted bugs: {len(seen)} bug cells caught in every repetition, {len(problems)} problem(s)")
sys.exit(1 if problems else 0)
PY

# --model reaches an out-of-tree scenario through the installed model zoo, as a matrix axis: one
# cell per model and variant, each recording its own model's size, the silent copy caught on each.
"$model" run --known-bugs --model convnet-s,transformer-s --scenario shared-reader --start fork --procs 2 \
  --out "$out/sweep" --format none >"$out/sweep.log" 2>&1
code=$?
[ $code -eq 0 ] || { tail -30 "$out/sweep.log"; fail "--model sweep out of tree exited $code, want 0"; }
python3 - "$out/sweep/results.json" <<'PY' || fail "the --model sweep out of tree"
import json, sys
cells = json.load(open(sys.argv[1]))["cells"]
got = {(c["config"]["workload"]["model"], c["config"]["variant"]): c for c in cells}
want_params = {"convnet-s": 67642, "transformer-s": 164618}
bad = []
if sorted(got) != sorted((m, v) for m in want_params for v in ("bound", "round-trip")): bad.append(f"cells {sorted(got)}")
for (m, v), c in got.items():
    params = c["repetitions"][0]["metrics"].get("model_parameters")
    if params != want_params.get(m): bad.append(f"{c['id']}: model_parameters {params}, want {want_params.get(m)}")
    if c["outcome"]["kind"] != ("bug-caught" if v == "round-trip" else "ok"): bad.append(f"{c['id']}: {c['outcome']['summary']}")
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY

# A worker's exit(0) under the forkserver: the later cells of the same run are unaffected.
"$bench" run --known-bugs --scenario deaths/exit0,deaths/returns,replicas/every-round --start forkserver --procs 2 \
  --repetitions 3 --out "$out/exit" --format none >"$out/exit.log" 2>&1
code=$?
[ $code -eq 0 ] || { cat "$out/exit.log"; fail "exit(0) then clean cells under forkserver: exited $code, want 0"; }

# soak on the out-of-tree binary's own scenarios.
"$bench" soak --cells 12 --seed 3 --hang-timeout 4 --out "$out/soak" >"$out/soak.log" 2>&1
code=$?
[ $code -eq 0 ] || { cat "$out/soak.log"; fail "soak of the out-of-tree binary exited $code, want 0"; }
grep -q 'lock-order\|lock-ring\|leaks\|deaths\|memory-growth\|mutual-exclusion\|torn-reads\|replicas' "$out/soak/results.json" ||
  fail "the soak drew none of the out-of-tree scenarios"
exit $status
