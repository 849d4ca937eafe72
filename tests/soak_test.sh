#!/usr/bin/env bash
# A small soak as a test: 24 short cells under random faults from a fixed seed must all end as
# their fault says (harness checks pass, liveness fails where it must), every kind of fault must
# have been injected, the watchdog must have caught the long stalls as hangs, and nothing of the
# run may remain: no process carrying its mark, no /dev/shm entry with its prefix (the soak counts
# both itself; a global look at /dev/shm would see the other tests ctest runs alongside).
# usage: soak_test.sh SHAREBENCH OUTDIR
source "$(dirname "$0")/test_lib.sh" "$@"

# A 4 s hang timeout: under ctest -j2 on two cores a spawn of two LibTorch workers and a manager can
# take over 2 s, and a slow launch is still judged by the hang timeout (issue: a launch deadline).
"$bin" soak --cells 24 --seed 7 --hang-timeout 4 --out "$out/soak" >"$out/soak.log" 2>&1
code=$?
cat "$out/soak.log"
[ $code -eq 0 ] || fail "soak exited $code, want 0"
python3 - "$out/soak/soak.json" <<'PY' || status=1
import json, sys
s = json.load(open(sys.argv[1]))
problems = []
if s["cells"] != 24: problems.append(f"cells {s['cells']}, want 24")
if s["as_expected"] != 24: problems.append(f"as expected {s['as_expected']}, want 24")
for kind in ("kill", "stall (long)", "stall (short)"):
    if s["faults_planned"].get(kind, 0) == 0: problems.append(f"the plan for seed 7 holds no {kind}")
for kind, n in s["faults_planned"].items():
    if kind != "none" and s["faults_injected"].get(kind, 0) != n:
        problems.append(f"{kind}: {n} planned, {s['faults_injected'].get(kind, 0)} injected")
if s["hangs"] < s["faults_planned"].get("stall (long)", 0): problems.append(f"only {s['hangs']} hangs detected")
if s["leftover_processes"] or s["leftover_segments"]: problems.append("the run left something behind")
for p in problems: print("FAIL:", p)
sys.exit(1 if problems else 0)
PY
exit $status
