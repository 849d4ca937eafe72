#!/usr/bin/env bash
# The planted scenarios (tests/planted), built out of tree against the installed package by the
# CTest fixture planted_build, beyond their pairs (each pair is its own CTest, planted/<scenario>,
# tests/planted_pair_test.py): --model reaches an out-of-tree scenario as a matrix axis, a worker's
# exit(0) under the forkserver leaves the later cells of the same run unaffected, and the
# out-of-tree binary runs `soak` on its own scenarios.
# usage: planted_bugs_test.sh PLANTED_DIR OUTDIR   (PLANTED_DIR: the fixture's, holding build/)
set -uo pipefail
planted=$1
out=$2
rm -rf "$out" && mkdir -p "$out"
status=0
fail() { echo "FAIL: $*"; status=1; }
bench=$planted/build/planted-bench
model=$planted/build/planted-model-bench
[ -x "$bench" ] && [ -x "$model" ] || { echo "FAIL: $planted/build has no planted binaries (the planted_build fixture)"; exit 1; }

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
# The scenarios of the cells it ran (not a word every results file holds, such as the check no-leaks).
python3 - "$out/soak/results.json" <<'PY' || fail "the soak drew none of the out-of-tree scenarios"
import json, sys
own = {"lock-order", "lock-ring", "leaks", "deaths", "memory-growth", "mutual-exclusion", "torn-reads", "replicas"}
drawn = {c["config"]["scenario"] for c in json.load(open(sys.argv[1]))["cells"]}
print("soak drew", sorted(drawn))
sys.exit(0 if drawn & own else 1)
PY
exit $status
