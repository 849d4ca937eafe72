#!/usr/bin/env bash
# `sharebench exec` judging races on shared state in a user's program (wings/exec/checks/:
# lost-updates, consistent-snapshots, mutual-exclusion, buffer-lifetime), on programs written as the seeds and public
# A3C, Hogwild and IMPALA code write them (tests/exec_programs/): each planted bug caught by its check
# in every repetition under fork, spawn and forkserver, naming both sides' lines and the fix; each
# clean twin passing with the check exercised. A false alarm on a twin fails this test as much as a
# miss. The checks judge the structure (which processes did what under which lock), so a run whose
# interleaving happened to lose nothing is caught too; only the torn read is judged by what happened,
# and its planted program reads thousands of times a second against a writer that never stops.
# usage: exec_races_test.sh SHAREBENCH OUTDIR SOURCE_DIR [REPETITIONS]
source "$(dirname "$0")/test_lib.sh" "$@"
source "$(dirname "$0")/exec_lib.sh"
src=$3
export SB_REPS=${4:-2}
py=/usr/bin/python3
"$py" -c "import torch" 2>/dev/null || { echo "FAIL: $py cannot import torch (apt-get install python3-torch; ci/setup does)"; exit 1; }
progs="$src/tests/exec_programs"
cd "$out"
all="--mp-start fork,spawn,forkserver --repetitions $SB_REPS"
every='all(PRED for c in cells for r in reps)'
caught() {  # caught CHECK TEXT PROGRAM: the check failed in every cell and repetition, saying TEXT and the program's line
  local pred="verdict(c, \"$1\", r) == \"fail\" and \"$2\" in check(c, \"$1\", r)[\"message\"] and \"$3:\" in check(c, \"$1\", r)[\"message\"]"
  echo "${every/PRED/$pred}"
}
clean='all(c["outcome"]["kind"] == "ok" and all(k["verdict"] in ("pass", "not-exercised") and "exposure" in k for k in c["repetitions"][r]["checks"]) for c in cells for r in reps)'
exercised() {  # exercised CHECK...: each passed with a non-zero exposure everywhere
  local names=$(printf '"%s",' "$@")
  echo "all(verdict(c, n, r) == \"pass\" and check(c, n, r)[\"exposure\"][\"count\"] > 0 for c in cells for r in reps for n in ($names))"
}

# --- Seed 000's Example 2: a module-level threading.Lock around optimizer.step() in four processes. --
expect seed000 1 $all -- "$py" "$progs/seed000_threading_lock.py"
judge seed000 "$(caught mutual-exclusion "threading.Lock made at" seed000_threading_lock.py)"
judge seed000 "$(caught mutual-exclusion "around optimizer.step() on the same shared memory in 4 processes" seed000_threading_lock.py)"
judge seed000 "$(caught mutual-exclusion "seed000_threading_lock.py:24 in train_step" seed000_threading_lock.py)"
judge seed000 "$(caught mutual-exclusion "Fix: make one multiprocessing.Lock" seed000_threading_lock.py)"
expect seed000_fixed 0 $all -- "$py" "$progs/seed000_threading_lock.py" --fixed
judge seed000_fixed "$clean"
judge seed000_fixed "$(exercised mutual-exclusion)"

# --- Seed 004: an Array printed element by element while the master negates it, element by element. -
expect seed004 1 $all -- "$py" "$progs/seed004_array_torn.py"
judge seed004 "$(caught consistent-snapshots "changed while it was being read element by element" seed004_array_torn.py)"
judge seed004 "$(caught consistent-snapshots "in <genexpr>; " seed004_array_torn.py)"  # a reader's line
judge seed004 "$(caught consistent-snapshots "seed004_array_torn.py:45 in <module>. Each element" seed004_array_torn.py)"  # the writer's
judge seed004 "$(caught consistent-snapshots "snapshot = arr[:]" seed004_array_torn.py)"
expect seed004_fixed 0 $all -- "$py" "$progs/seed004_array_torn.py" --fixed
judge seed004_fixed "$clean"
judge seed004_fixed "$(exercised consistent-snapshots)"

# --- The A3C frame counter, `counter.value += 1` without the lock the launcher made. -----------------
expect a3c_counter 1 $all -- "$py" "$progs/a3c_counter_unlocked.py"
judge a3c_counter "$(caught lost-updates "Value(\x27i\x27) made at" a3c_counter_unlocked.py)"
judge a3c_counter "$(caught lost-updates "by 2 processes with no lock they share" a3c_counter_unlocked.py)"
judge a3c_counter "$(caught lost-updates "a3c_counter_unlocked.py:47 in train; pid" a3c_counter_unlocked.py)"
judge a3c_counter "$(caught lost-updates "increment(s) made" a3c_counter_unlocked.py)"
judge a3c_counter "$(caught lost-updates "counter.get_lock()" a3c_counter_unlocked.py)"
judge a3c_counter 'all(check(c, "lost-updates", r)["exposure"]["count"] >= 6000 for c in cells for r in reps)'
expect a3c_counter_fixed 0 $all -- "$py" "$progs/a3c_counter_unlocked.py" --fixed
judge a3c_counter_fixed "$clean"
judge a3c_counter_fixed "$(exercised lost-updates mutual-exclusion)"

# --- A global step in a one-element shared tensor, `global_step += 1` beside Hogwild's step; the twin
# holds a Manager's lock (one lock in the manager's process, a proxy in each worker). ---------------
expect global_step 1 $all -- "$py" "$progs/global_step_tensor.py"
judge global_step "$(caught lost-updates "shared tensor of 1 element(s)" global_step_tensor.py)"
judge global_step "$(caught lost-updates "global_step_tensor.py:34 in train; pid" global_step_tensor.py)"
judge global_step 'all(verdict(c, "mutual-exclusion", r) != "fail" and verdict(c, "grads-delivered", r) == "pass" for c in cells for r in reps)'
expect global_step_fixed 0 $all -- "$py" "$progs/global_step_tensor.py" --fixed
judge global_step_fixed "$clean"
judge global_step_fixed "$(exercised lost-updates mutual-exclusion)"

# --- Send, then refill: one batch buffer put on a Queue again and again (seed 001: shared, not copied);
# the twin's pool of buffers comes back from the consumer before each refill. --------------------------
expect send_refill 1 $all -- "$py" "$progs/send_then_refill.py"
judge send_refill "$(caught buffer-lifetime "was changed before it was received" send_then_refill.py)"
judge send_refill "$(caught buffer-lifetime "send_then_refill.py:29 in produce" send_then_refill.py)"  # the sender's line
judge send_refill "$(caught buffer-lifetime "send_then_refill.py:38 in consume" send_then_refill.py)"  # the receiver's
judge send_refill "$(caught buffer-lifetime "q.put(buf.clone())" send_then_refill.py)"
expect send_refill_fixed 0 $all -- "$py" "$progs/send_then_refill.py" --fixed
judge send_refill_fixed "$clean"
judge send_refill_fixed "$(exercised buffer-lifetime)"

# --- Racy by design, clean: Hogwild's unlocked steps (the parameters are not counters), and a process
# that only reads a counter others update under their lock. -----------------------------------------
expect hogwild 0 $all -- "$py" "$src/examples/python/hogwild.py"
judge hogwild "$clean"
judge hogwild 'all(verdict(c, n) == "not-exercised" for c in cells for n in ("lost-updates", "consistent-snapshots", "mutual-exclusion", "buffer-lifetime"))'
exit $status
