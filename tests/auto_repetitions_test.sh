#!/usr/bin/env bash
# --repetitions auto on a real run: bad input refused with one sentence; a small matrix run under
# a budget that cannot settle everything. Each ranked cell's short pilot is kept as a calibration
# repetition and its steps raised; each ranked cell gets at least two measured repetitions while
# the lock scenario (not throughput) runs once; the run ends near its budget; the recommendation is
# in results.json and opens the console and Markdown reports, with the deadlock cells named as not
# ranked; the reproduce line carries the raised steps; and every strategy of a group ran the same
# steps in the repetitions that count (each pilot calibrates its own; the group runs the most).
# usage: auto_repetitions_test.sh SHAREBENCH OUTDIR
source "$(dirname "$0")/test_lib.sh" "$@"

refused() {  # refused WORDS ARGS...: `run ARGS` exits 2 with WORDS on stderr
  local words=$1; shift
  "$bin" run "$@" --format none --out "$out/refused" 2>"$out/refused.err" >/dev/null
  local rc=$?
  [ "$rc" = 2 ] || fail "run $* exited $rc, not 2"
  grep -q -- "$words" "$out/refused.err" || fail "run $*: stderr lacks '$words': $(cat "$out/refused.err")"
}
refused "--budget needs --blocks auto or --repetitions auto" --scenario hogwild --blocks 3 --budget 10m
refused "--budget needs --blocks auto or --repetitions auto" --scenario hogwild --blocks 0 --budget 10m
refused "--blocks and --repetitions auto are two ways to repeat" --scenario hogwild --blocks 3 --repetitions auto
refused "--blocks must be" --scenario hogwild --blocks many
refused "--blocks cannot rank a --shard" --scenario hogwild --blocks 3 --shard 1/2
refused "--interval needs --repetitions auto" --scenario hogwild --interval 3
refused "--budget must be a duration" --scenario hogwild --repetitions auto --budget soon
refused "--interval must be a number" --scenario hogwild --repetitions auto --interval 0
refused "--repetitions must be" --scenario hogwild --repetitions sometimes

budget=45
start=$(date +%s)
"$bin" run --scenario hogwild,locked/update-only,deadlock/same-order --start fork --procs 1,2 --steps 40 --repetitions auto --budget ${budget}s \
  --out "$out/run" --format console,md --color never >"$out/console.txt" 2>"$out/stderr.txt" || fail "the auto run exited $?"
took=$(( $(date +%s) - start ))
echo "the run took ${took}s under a ${budget}s budget"
# The budget covers the whole run; one repetition begun just inside it may end after it.
[ "$took" -le $((budget + 15)) ] || fail "the run took ${took}s, far past its ${budget}s budget"
head -1 "$out/console.txt" | grep -q '^Recommendation:' || fail "the console does not open with the recommendation: $(head -2 "$out/console.txt")"
grep -q 'not ranked: 2 not throughput' "$out/console.txt" || fail "the console does not count the deadlock cells as not ranked"
grep -q '^## Recommendation' "$out/run/report.md" || fail "report.md has no recommendation"
grep -q -- '--repetitions auto:' "$out/stderr.txt" || fail "stderr does not say how the repetitions went: $(cat "$out/stderr.txt")"

/usr/bin/python3 - "$out/run/results.json" <<'PY' || status=1
import json, sys
run = json.load(open(sys.argv[1]))
problems = []
policy = run["repetition_policy"]
if not policy["automatic"] or policy["budget_s"] != 45:
    problems.append(f"repetition_policy is {policy}")
rec = run["recommendation"]
groups = {(g["kind"], g["procs"]) for g in rec["groups"]}
if groups != {("training", 1), ("training", 2)}:
    problems.append(f"recommendation groups {groups}")
excluded = {e["cell"]: e["category"] for e in rec["excluded"]}
for cell in run["cells"]:
    reps = cell["repetitions"]
    measured = [r for r in reps if not r.get("calibration")]
    if cell["scenario"] == "deadlock":
        if len(reps) != 1: problems.append(f"{cell['id']} ran {len(reps)} repetitions, not 1")
        if excluded.get(cell["id"]) != "not throughput": problems.append(f"{cell['id']} not excluded as not throughput")
        continue
    if not reps[0].get("calibration"):
        problems.append(f"{cell['id']}: a 40-step pilot was not kept as calibration ({reps[0]['metrics'].get('run_s')} s timed)")
    steps = cell["config"]["workload"]["steps"]
    if steps <= 40: problems.append(f"{cell['id']}: steps not raised ({steps})")
    if f"--steps {steps}" not in cell["repro"]: problems.append(f"{cell['id']}: repro lacks --steps {steps}: {cell['repro']}")
    if len(measured) < 2: problems.append(f"{cell['id']}: {len(measured)} measured repetitions")
    for r in measured:
        if r["metrics"].get("run_s", 0) < 0.2: problems.append(f"{cell['id']} rep {r['index']} timed {r['metrics'].get('run_s')} s")
        if "warmup_s" not in r["metrics"]: problems.append(f"{cell['id']} rep {r['index']}: no warm-up excluded")
# Equal work in a group: one steps figure for every cell, and every measured repetition ran it.
by_id = {c["id"]: c for c in run["cells"]}
for g in rec["groups"]:
    cells = [by_id[r["cell"]] for r in g["ranked"]]
    steps = {c["config"]["workload"]["steps"] for c in cells}
    done = {r["metrics"].get("steps_total") for c in cells for r in c["repetitions"] if not r.get("calibration")}
    if len(cells) < 2: problems.append(f"group {g['kind']} {g['procs']}: {len(cells)} cell(s), nothing to compare")
    if len(steps) != 1: problems.append(f"group {g['kind']} {g['procs']}: unequal steps {sorted(steps)}")
    if len(done) != 1: problems.append(f"group {g['kind']} {g['procs']}: measured repetitions ran {sorted(map(str, done))} steps in all")
for p in problems: print("FAIL:", p)
sys.exit(1 if problems else 0)
PY
[ $status = 0 ] && echo "PASS: --repetitions auto"
exit $status
