#!/usr/bin/env bash
# `sharebench exec`'s sharing checks on examples/python, programs written as popular A3C, Hogwild
# and DataLoader code writes them: every broken program caught by its own check, naming the object
# and the source line, in every repetition under every start method it is broken under; every
# correct twin clean (a false alarm fails this test as much as a miss). Then the rest of what the
# hooks give: short-lived processes in the table with how they ended, a diagnosis line, a trainer
# that never ends judged over a window, torch_shm_manager not called a leak.
# Each broken program runs REPETITIONS times under each start method (default 1: the sharing
# checks read state, not luck; the slow suite asks for 3).
# usage: exec_sharing_test.sh SHAREBENCH OUTDIR SOURCE_DIR [REPETITIONS]
source "$(dirname "$0")/test_lib.sh" "$@"
source "$(dirname "$0")/exec_lib.sh"
src=$3
export SB_REPS=${4:-1}
py=/usr/bin/python3  # Debian's, with python3-torch (ci/setup installs it)
"$py" -c "import torch" 2>/dev/null || { echo "FAIL: $py cannot import torch (apt-get install python3-torch; ci/setup does)"; exit 1; }
ex="$src/examples/python"
cd "$out"
all="--mp-start fork,spawn,forkserver"
shared_checks='("fork-safety", "updates-shared", "optimizer-state-shared", "grads-delivered")'

# --- A3C's shared Adam: correct, then each of its three known bugs. ---------------------------------
expect shared_adam 0 $all -- "$py" "$ex/shared_adam.py"
judge shared_adam 'all(c["outcome"]["kind"] == "ok" for c in cells) and all(verdict(c, n) == "pass" for c in cells for n in ("optimizer-state-shared", "grads-delivered", "updates-shared"))'
judge shared_adam 'all(any("no increment lost" in n for n in c["repetitions"][0]["notes"]) for c in cells)'
# The state is made in the parent but its step counter is a Python int.
expect int_step 1 $all --repetitions "$SB_REPS" -- "$py" "$ex/shared_adam_int_step.py"
judge int_step 'all(verdict(c, "optimizer-state-shared", r) == "fail" and "state[\x27step\x27]" in check(c, "optimizer-state-shared", r)["message"] and "shared_adam_int_step.py:" in check(c, "optimizer-state-shared", r)["message"] for c in cells for r in reps)'
judge int_step 'all(verdict(c, "grads-delivered", r) == "pass" and verdict(c, "updates-shared", r) == "pass" for c in cells for r in reps)'
# The optimizer handed over before it has any state: each worker makes its own.
expect lazy_state 1 $all --repetitions "$SB_REPS" -- "$py" "$ex/shared_adam_lazy_state.py"
judge lazy_state 'all(verdict(c, "optimizer-state-shared", r) == "fail" and "its state was empty" in check(c, "optimizer-state-shared", r)["message"] and "shared_adam_lazy_state.py:" in check(c, "optimizer-state-shared", r)["message"] for c in cells for r in reps)'
# Gradients linked once, then replaced by zero_grad(set_to_none=True).
expect stale_grads 1 $all --repetitions "$SB_REPS" -- "$py" "$ex/shared_adam_stale_grads.py"
judge stale_grads 'all(verdict(c, "grads-delivered", r) == "fail" and "same gradient" in check(c, "grads-delivered", r)["message"] and verdict(c, "optimizer-state-shared", r) == "pass" for c in cells for r in reps)'

# --- A model forgotten to be shared: a bug under fork only (spawn and forkserver share it when they
# pickle it); Hogwild with share_memory() is its twin (judged in exec_races_test.sh: every check clean,
# updates-shared and grads-delivered passing, no note). ------------------------------------------------
expect unshared 1 $all --repetitions "$SB_REPS" -- "$py" "$ex/unshared_model.py"
judge unshared '[c["outcome"]["kind"] for c in cells] == ["unexpected", "ok", "ok"]'
judge unshared 'all(verdict(cells[0], "updates-shared", r) == "fail" and "trained its own copy of Sequential" in check(cells[0], "updates-shared", r)["message"] and "unshared_model.py:" in check(cells[0], "updates-shared", r)["message"] for r in reps)'

# --- A fork while OpenMP's pool runs, that does not hang this time: caught under fork; its twin drops
# to one thread before forking. ------------------------------------------------------------------------
expect omp_quiet 1 $all --repetitions "$SB_REPS" -- "$py" "$ex/fork_after_openmp_quiet.py"
judge omp_quiet '[c["outcome"]["kind"] for c in cells] == ["unexpected", "ok", "ok"]'
judge omp_quiet 'all(verdict(cells[0], "fork-safety", r) == "fail" and "fork_after_openmp_quiet.py:" in check(cells[0], "fork-safety", r)["message"] for r in reps) and all(verdict(cells[0], "exit-status", r) == "pass" for r in reps)'
expect omp_fixed 0 $all -- "$py" "$ex/fork_after_openmp_fixed.py"
judge omp_fixed 'verdict(cells[0], "fork-safety") == "pass"'

# --- Correct programs that use torch's machinery: no false alarm. ------------------------------------
# DataLoader workers forked while the parent's pool runs (they drop to one thread first thing).
expect dataloader 0 $all -- "$py" "$ex/dataloader_workers.py"
judge dataloader 'verdict(cells[0], "fork-safety") == "pass"'
# The file_system strategy: torch_shm_manager outlives the program by design, then reclaims.
expect file_system 0 $all -- "$py" "$ex/file_system_strategy.py"
judge file_system 'all(verdict(c, n) == "pass" for c in cells for n in ("no-leaks", "no-survivors", "shm-reclaimed"))'
judge file_system 'all(any(p["role"] == "helper" and "torch_shm_manager" in p["command"] and p["end"].startswith("exited") for p in c["repetitions"][0]["processes"]) for c in cells)'
# Of this program's processes alone (a neighbour's runs may hold their own): no torch_<pid>_ segment
# any of them made is left in /dev/shm, and no torch_shm_manager of theirs is still running.
python3 - "$out/file_system/results.json" <<'PY' || fail "the file_system program left segments or a torch_shm_manager behind"
import json, os, sys
run = json.load(open(sys.argv[1]))
procs = [p for c in run["cells"] for r in c["repetitions"] for p in r["processes"]]
pids = {p["pid"] for p in procs}
left = [n for n in os.listdir("/dev/shm") if n.startswith("torch_") and n.split("_")[1].isdigit() and int(n.split("_")[1]) in pids]
def running_manager(pid):
    try:
        return open(f"/proc/{pid}/comm").read().strip() == "torch_shm_manag"
    except OSError:
        return False
managers = [p["pid"] for p in procs if "torch_shm_manager" in p["command"] and running_manager(p["pid"])]
print(f"{len(pids)} processes: {len(left)} segments left {left}, torch_shm_managers running {managers}")
sys.exit(1 if left or managers or not pids else 0)
PY
# Parameter averaging over Gloo (each worker trains its own replica on purpose) passes every check in
# exec_test.sh, which runs it under every start method with the checks on.

# --- Workers that die within milliseconds: in the table with their exit status and traceback, and
# in the diagnosis of the hang they cause. ------------------------------------------------------------
expect early 1 --hang-timeout 5 -- "$py" "$ex/early_crash.py"
judge early 'cells[0]["repetitions"][0]["status"] == "hang"'
judge early 'sum(p["role"] == "child" and p["end"] == "exited 1" and "RuntimeError" in p["error"] for p in cells[0]["repetitions"][0]["processes"]) == 2'
judge early '"waits in get (multiprocessing/queues.py" in cells[0]["repetitions"][0]["diagnosis"] and "early_crash.py:" in cells[0]["repetitions"][0]["diagnosis"] and "2 of its children ended badly" in cells[0]["repetitions"][0]["diagnosis"]'
"$bin" report "$out/early/results.json" --format console >"$out/early.console" 2>&1
grep -q "diagnosis (repetition 0): the program" "$out/early.console" || fail "the console report does not show the diagnosis"

# --- A trainer that runs until Ctrl-C, judged over a 6 s window: SIGINT, a clean shutdown, ok. ------
start_s=$(date +%s)
expect never_ending 0 --duration 6 -- "$py" "$ex/never_ending_trainer.py"
took=$(( $(date +%s) - start_s ))
[ "$took" -le 30 ] || fail "--duration 6 took $took s"
judge never_ending 'verdict(cells[0], "exit-status") == "pass" and "SIGINT" in check(cells[0], "exit-status")["message"] and cells[0]["repetitions"][0]["metrics"]["steps_total"] > 0'
pgrep -f "$ex/never_ending_trainer.py" >/dev/null && fail "a process of never_ending_trainer.py is still alive"

# --- Off with one option: no sharing check at all. ----------------------------------------------------
expect checks_off 0 --mp-start fork --sharing-checks off -- "$py" "$ex/unshared_model.py"
judge checks_off 'not any(k["name"] in '"$shared_checks"' for k in cells[0]["repetitions"][0]["checks"])'
bad() {
  "$bin" "$@" >"$out/bad.out" 2>"$out/bad.err"
  local code=$?
  [ $code -eq 2 ] && [ "$(wc -l <"$out/bad.err")" -eq 1 ] || fail "$*: exit $code, stderr: $(cat "$out/bad.err")"
}
bad exec --sharing-checks maybe -- true
bad exec --duration 30 --deadline 20 -- true
bad run --scenario locked --duration 5
exit $status
