#!/usr/bin/env bash
# The a3c strategy (scenarios/a3c.cc): `run --scenario a3c --known-bugs` under fork, spawn and
# forkserver at 1 and 2 processes, REPETITIONS times each. Asserted:
#   - exit 0: every correct variant passes, every planted bug is caught in every repetition;
#   - each planted bug is caught by its own check (private-state, private-step, lazy-state by
#     optimizer-state-shared; stale-grads by grads-delivered) and no check outside its expectation
#     fails on it; no check fails on a correct variant;
#   - the shared optimizer is Adam: a3c/locked at one process ends at the serial Adam run's held-out
#     loss (the same arithmetic, the same batches);
#   - the figures a3c exists to report are in results.json: lock wait, sync time, the shared
#     counter's lost increments, and for the lock-free variants the overlapping steps.
# usage: a3c_test.sh SHAREBENCH OUTDIR REPETITIONS
source "$(dirname "$0")/test_lib.sh" "$@"
reps=${3:-3}

"$bin" run --blocks 0 --scenario a3c --known-bugs --start fork,spawn,forkserver --procs 1,2 --steps 200 --hang-timeout 10 \
  --repetitions "$reps" --format none --out "$out/all" >"$out/all.log" 2>&1
code=$?
[ $code -eq 0 ] || { fail "a3c --known-bugs exited $code, want 0"; "$bin" report "$out/all/results.json" --format console | tail -30; }

python3 - "$out/all/results.json" "$reps" <<'PY' || fail "a3c results"
import json, sys
run = json.load(open(sys.argv[1])); reps = int(sys.argv[2])
own_check = {"private-state": "optimizer-state-shared", "private-step": "optimizer-state-shared",
             "lazy-state": "optimizer-state-shared", "stale-grads": "grads-delivered"}
allowed = {"convergence"}  # the bugs' may-fail check
problems = []
cells = {c["id"]: c for c in run["cells"]}
variants = {c["config"]["variant"] for c in run["cells"]}
for v in ["locked", "hogwild", "rmsprop", *own_check]:
    if v not in variants: problems.append(f"no cell of a3c/{v}")
for c in run["cells"]:
    v = c["config"]["variant"]
    if len(c["repetitions"]) != reps: problems.append(f'{c["id"]}: {len(c["repetitions"])} repetitions, want {reps}')
    for i, rep in enumerate(c["repetitions"]):
        failed = {k["name"] for k in rep["checks"] if k["verdict"] == "fail"}
        m = rep["metrics"]
        if v in own_check:
            if own_check[v] not in failed: problems.append(f'{c["id"]} #{i}: {own_check[v]} did not fail')
            if failed - {own_check[v]} - allowed: problems.append(f'{c["id"]} #{i}: also failed {failed - {own_check[v]} - allowed}')
        elif failed:
            problems.append(f'{c["id"]} #{i}: a correct variant failed {failed}')
        for metric in ["sync_frac", "lost_step_increments", "optimizer_steps"]:
            if metric not in m: problems.append(f'{c["id"]} #{i}: no {metric}')
        if v in ("locked", "private-state", "private-step", "lazy-state", "stale-grads") and "lock_wait_frac" not in m:
            problems.append(f'{c["id"]} #{i}: no lock_wait_frac')
        if v in ("hogwild", "rmsprop") and "overlapping_sections" not in m:
            problems.append(f'{c["id"]} #{i}: no overlapping_sections')
        if v == "locked" and c["config"]["procs"] == 1:
            got, want = m["heldout_loss"], m["serial_heldout_loss"]
            if abs(got - want) > 1e-4: problems.append(f'{c["id"]} #{i}: held-out loss {got} is not the serial Adam run\'s {want}')
for p in problems: print("FAIL:", p)
print(f"{len(run['cells'])} cells x {reps} repetitions checked, {len(problems)} problems")
sys.exit(1 if problems else 0)
PY

# A bad --sync-every is refused with one line.
"$bin" run --scenario a3c/locked --sync-every 0 --format none --out "$out/bad" >"$out/bad.log" 2>&1
code=$?
[ $code -eq 2 ] || fail "--sync-every 0: exit $code, want 2"
grep -q -- "--sync-every" "$out/bad.log" || fail "--sync-every 0: the error does not name the flag"
exit $status
