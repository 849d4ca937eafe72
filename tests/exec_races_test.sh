#!/usr/bin/env bash
# `sharebench exec` judging races on shared state in a user's program (wings/exec/checks/:
# lost-updates, consistent-snapshots, mutual-exclusion, buffer-lifetime, random-streams), on programs written as tutorials, answers and public
# A3C, Hogwild and IMPALA code write them (tests/exec_programs/): each planted bug caught by its check
# in every repetition under fork, spawn and forkserver, naming both sides' lines and the fix; each
# clean twin passing with the check exercised. A false alarm on a twin fails this test as much as a
# miss. The checks judge the structure (which processes did what under which lock), so a run whose
# interleaving happened to lose nothing is caught too; only the torn read is judged by what happened,
# and its planted program reads thousands of times a second against a writer that never stops.
# usage: exec_races_test.sh SHAREBENCH OUTDIR SOURCE_DIR [REPETITIONS [every|in-turn]]
source "$(dirname "$0")/test_lib.sh" "$@"
source "$(dirname "$0")/exec_lib.sh"
src=$3
exec_planted_pairs "${4:-2}" "${5:-every}"

# --- A tutorial's "training with a lock": a module-level threading.Lock around optimizer.step() in four processes.
expect lock_step 1 $all -- "$py" "$progs/module_lock_around_step.py"
judge lock_step "$(caught mutual-exclusion "threading.Lock made at" module_lock_around_step.py)"
judge lock_step "$(caught mutual-exclusion "around optimizer.step() on the same shared memory in 4 processes" module_lock_around_step.py)"
judge lock_step "$(caught mutual-exclusion "module_lock_around_step.py:24 in train_step" module_lock_around_step.py)"
judge lock_step "$(caught mutual-exclusion "Fix: make one multiprocessing.Lock" module_lock_around_step.py)"
expect lock_step_fixed 0 $all -- "$py" "$progs/module_lock_around_step.py" --fixed
judge lock_step_fixed "$clean"
judge lock_step_fixed "$(exercised mutual-exclusion)"

# --- An Array printed element by element while the master negates it, element by element. ---------
# For 4 s: the torn read is judged by what happened, and on a loaded machine a forkserver's workers
# may be up for only the last part of the program's default 1.5 s (3 reads, none torn, under stress-ng).
expect array_torn 1 $all -- "$py" "$progs/array_printed_while_negated.py" --seconds 4
judge array_torn "$(caught consistent-snapshots "changed while it was being read element by element" array_printed_while_negated.py)"
judge array_torn "$(caught consistent-snapshots "in <genexpr>; " array_printed_while_negated.py)"  # a reader's line
judge array_torn "$(caught consistent-snapshots "array_printed_while_negated.py:45 in <module>. Each element" array_printed_while_negated.py)"  # the writer's
judge array_torn "$(caught consistent-snapshots "snapshot = arr[:]" array_printed_while_negated.py)"
expect array_torn_fixed 0 $all -- "$py" "$progs/array_printed_while_negated.py" --fixed
judge array_torn_fixed "$clean"
judge array_torn_fixed "$(exercised consistent-snapshots)"

# --- A server that hot-reloads a shared model (load_state_dict, or a loop of copy_) while its workers
# run forward() on it; the twin holds one mp.Lock around each reload and each forward(). ---------------
expect hot_reload 1 $all -- "$py" "$progs/hot_reload_server.py" --requests 800
judge hot_reload "$(caught consistent-snapshots "was read while a new version was being published into it" hot_reload_server.py)"
judge hot_reload "$(caught consistent-snapshots "hot_reload_server.py:50 in serve; " hot_reload_server.py)"  # a reader's line
judge hot_reload "$(caught consistent-snapshots "published by pid " hot_reload_server.py)"
judge hot_reload "$(caught consistent-snapshots "hot_reload_server.py:63 in reload. " hot_reload_server.py)"  # the publisher's
judge hot_reload "$(caught consistent-snapshots "share_memory() at " hot_reload_server.py)"
judge hot_reload "$(caught consistent-snapshots "double buffering" hot_reload_server.py)"
expect hot_reload_copy 1 $all -- "$py" "$progs/hot_reload_server.py" --requests 800 --copy-loop
judge hot_reload_copy "$(caught consistent-snapshots "hot_reload_server.py:61 in reload. " hot_reload_server.py)"
expect hot_reload_fixed 0 $all -- "$py" "$progs/hot_reload_server.py" --requests 800 --fixed
judge hot_reload_fixed "$clean"
judge hot_reload_fixed "$(exercised consistent-snapshots)"

# A model shared, then compiled for the parent by TorchScript and torch.fx while workers call it: the
# hooks count calls through the class's __call__ and leave forward() as written (wrapping forward()
# made torch.jit.script fail on the hooks' own source).
expect scripted 0 $all -- "$py" "$progs/scripted_after_share.py"
judge scripted "$clean"

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

# --- Send, then refill: one batch buffer put on a Queue again and again (shared, not copied);
# the twin's pool of buffers comes back from the consumer before each refill. --------------------------
expect send_refill 1 $all -- "$py" "$progs/send_then_refill.py"
judge send_refill "$(caught buffer-lifetime "was changed before it was received" send_then_refill.py)"
judge send_refill "$(caught buffer-lifetime "send_then_refill.py:44 in produce" send_then_refill.py)"  # the sender's line
judge send_refill "$(caught buffer-lifetime "send_then_refill.py:57 in consume" send_then_refill.py)"  # the receiver's
judge send_refill "$(caught buffer-lifetime "q.put(buf.clone())" send_then_refill.py)"
# The same on a machine whose cores are all busy: the queue's feeder thread first runs after the last
# put, so the buffer is shared only once the loop is done (and dropped by the producer before its end).
expect send_refill_burst 1 $all -- "$py" "$progs/send_then_refill.py" --burst
judge send_refill_burst "$(caught buffer-lifetime "was changed before it was received" send_then_refill.py)"
judge send_refill_burst "$(caught buffer-lifetime "send_then_refill.py:44 in produce" send_then_refill.py)"
expect send_refill_fixed 0 $all -- "$py" "$progs/send_then_refill.py" --fixed
judge send_refill_fixed "$clean"
judge send_refill_fixed "$(exercised buffer-lifetime)"

# --- Actors that explore alike: each reseeds with the parent's seed (the `+ rank` dropped), or not at
# all (a forked actor inherits its parent's generator; under spawn and forkserver each child starts
# torch afresh, seeded from the OS, and is clean).
expect one_seed 1 $all -- "$py" "$progs/a3c_actors_one_seed.py"
judge one_seed "$(caught random-streams "drew the same torch random numbers" a3c_actors_one_seed.py)"
judge one_seed "$(caught random-streams "each called torch.manual_seed(1) (" a3c_actors_one_seed.py)"
judge one_seed "$(caught random-streams "a3c_actors_one_seed.py:47 in actor" a3c_actors_one_seed.py)"
judge one_seed "$(caught random-streams "torch.manual_seed(seed + rank)" a3c_actors_one_seed.py)"
expect no_reseed 1 --mp-start fork --repetitions $SB_REPS -- "$py" "$progs/a3c_actors_one_seed.py" --no-reseed
judge no_reseed "$(caught random-streams "forked with its parent\x27s generator (seed 1) at " a3c_actors_one_seed.py)"
judge no_reseed "$(caught random-streams "a3c_actors_one_seed.py:71 in <module> and never reseeded" a3c_actors_one_seed.py)"
expect no_reseed_fresh 0 --mp-start spawn,forkserver --repetitions $SB_REPS -- "$py" "$progs/a3c_actors_one_seed.py" --no-reseed
judge no_reseed_fresh "$clean"  # each child starts torch afresh, seeded from the OS
judge no_reseed_fresh "$(exercised random-streams)"
expect one_seed_fixed 0 $all -- "$py" "$progs/a3c_actors_one_seed.py" --fixed
judge one_seed_fixed "$clean"
judge one_seed_fixed "$(exercised random-streams)"

# --- Racy by design, clean: Hogwild's unlocked steps (the parameters are not counters), and a process
# that only reads a counter others update under their lock. -----------------------------------------
expect hogwild 0 $all -- "$py" "$src/examples/python/hogwild.py"
judge hogwild "$clean"
judge hogwild 'all(verdict(c, n) == "not-exercised" for c in cells for n in ("lost-updates", "consistent-snapshots", "mutual-exclusion", "buffer-lifetime"))'
judge hogwild 'all(verdict(c, n, r) == "pass" for c in cells for r in reps for n in ("updates-shared", "grads-delivered"))'
judge hogwild 'all(not c["repetitions"][r].get("notes") for c in cells for r in reps)'
exit $status
