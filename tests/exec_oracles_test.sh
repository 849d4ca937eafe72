#!/usr/bin/env bash
# `sharebench exec` judging what the processes did, on programs written as public A3C, Hogwild and
# launcher code writes them (tests/exec_programs/, not examples/): each planted bug caught by its
# check in every repetition under fork, spawn and forkserver, naming the object, the line and the
# fix; each clean twin (the same program with --fixed or --healthy) passing every check, with every
# sharing check carrying its exposure. A false alarm on a twin fails this test as much as a miss.
# usage: exec_oracles_test.sh SHAREBENCH OUTDIR SOURCE_DIR [REPETITIONS [every|in-turn]]
source "$(dirname "$0")/test_lib.sh" "$@"
source "$(dirname "$0")/exec_lib.sh"
src=$3
exec_planted_pairs "${4:-1}" "${5:-every}"

# --- Counters: a shared Adam whose step count is a Python number in param_groups. ------------------
expect group_step 1 $all -- "$py" "$progs/a3c_group_step.py"
judge group_step "$(caught optimizer-state-shared "param_groups[0][\x27step\x27] advanced in" a3c_group_step.py)"
judge group_step "$(caught optimizer-state-shared "not at all in the parent" a3c_group_step.py)"
expect group_step_fixed 0 $all -- "$py" "$progs/a3c_group_step.py" --fixed
judge group_step_fixed "$clean"
judge group_step_fixed "$(exercised optimizer-state-shared grads-delivered updates-shared deaths-noticed)"

# --- State: per-parameter dicts made empty in the parent, filled lazily by each child's step(). ------
expect lazy_dicts 1 $all -- "$py" "$progs/a3c_lazy_state.py"
judge lazy_dicts "$(caught optimizer-state-shared "per-parameter state dict(s) were empty" a3c_lazy_state.py)"
judge lazy_dicts "$(caught optimizer-state-shared "state[\x27square_avg\x27]" a3c_lazy_state.py)"
expect lazy_dicts_fixed 0 $all -- "$py" "$progs/a3c_lazy_state.py" --fixed
judge lazy_dicts_fixed "$clean"
judge lazy_dicts_fixed "$(exercised optimizer-state-shared grads-delivered)"

# --- Gradients: a running sum (local gradients never cleared, relinked every step). -----------------
expect running_sum 1 $all -- "$py" "$progs/a3c_running_sum.py"
judge running_sum "$(caught grads-delivered "applied a running sum" a3c_running_sum.py)"
expect running_sum_fixed 0 $all -- "$py" "$progs/a3c_running_sum.py" --fixed
judge running_sum_fixed "$clean"
judge running_sum_fixed "$(exercised grads-delivered updates-shared)"
# mnist_hogwild's layout without optimizer.zero_grad(): the same oracle, another pattern.
expect no_zero_grad 1 $all -- "$py" "$progs/hogwild_no_zero_grad.py"
judge no_zero_grad "$(caught grads-delivered "applied a running sum" hogwild_no_zero_grad.py)"
expect no_zero_grad_fixed 0 $all -- "$py" "$progs/hogwild_no_zero_grad.py" --fixed
judge no_zero_grad_fixed "$clean"
judge no_zero_grad_fixed "$(exercised grads-delivered)"

# --- Learning: a warm-up with integer division keeps the learning rate at 0; the shared model never
# changes in the parent though the workers step it with fresh gradients. ------------------------------
expect warmup_lr 1 $all -- "$py" "$progs/hogwild_warmup_lr.py"
judge warmup_lr "$(caught model-learned "the parent\x27s copy never changed" hogwild_warmup_lr.py)"
judge warmup_lr 'all(verdict(c, "grads-delivered", r) == "pass" and verdict(c, "updates-shared", r) == "pass" for c in cells for r in reps)'
expect warmup_lr_fixed 0 $all -- "$py" "$progs/hogwild_warmup_lr.py" --fixed
judge warmup_lr_fixed "$clean"
judge warmup_lr_fixed "$(exercised model-learned grads-delivered updates-shared)"

# --- Dead workers: the parent joins and exits 0 without looking. -------------------------------------
expect die_unnoticed 1 $all -- "$py" "$progs/workers_die_unnoticed.py"
judge die_unnoticed "$(caught deaths-noticed "mat1 and mat2 shapes cannot be multiplied" workers_die_unnoticed.py)"
judge die_unnoticed 'all(verdict(c, "exit-status", r) == "pass" for c in cells for r in reps)'
# The parent that checks: the program fails (exit-status), deaths-noticed holds.
expect die_noticed 1 $all -- "$py" "$progs/workers_die_unnoticed.py" --fixed
judge die_noticed 'all(verdict(c, "deaths-noticed", r) == "pass" and verdict(c, "exit-status", r) == "fail" for c in cells for r in reps)'
expect die_healthy 0 $all -- "$py" "$progs/workers_die_unnoticed.py" --healthy
judge die_healthy "$clean"
judge die_healthy "$(exercised deaths-noticed grads-delivered)"
# mp.spawn re-raises a rank's exception: noticed; the rank's own exception is in the table.
expect spawn_raises 1 --repetitions "$SB_REPS" -- "$py" "$progs/spawn_rank_raises.py"
judge spawn_raises 'all(verdict(c, "deaths-noticed", r) == "pass" for c in cells for r in reps)'
judge spawn_raises 'all(any(p["role"] == "child" and p["end"] == "exited 1" and "rank 1 could not load its shard" in p["error"] for p in c["repetitions"][r]["processes"]) for c in cells for r in reps)'

# Every rank of a spawn group raised before the launcher joined: torch's join reports the first and
# reaps the other unread; the launcher catches the exception and exits 0. It was told: noticed.
# The launcher asks for spawn itself (start_processes(start_method="spawn")): --mp-start changes nothing.
expect ranks_retry 0 --mp-start spawn --repetitions "$SB_REPS" -- "$py" "$progs/spawn_ranks_fail_retry.py"
judge ranks_retry "$clean"
judge ranks_retry "$(exercised deaths-noticed)"
expect ranks_detached 1 --mp-start spawn --repetitions "$SB_REPS" -- "$py" "$progs/spawn_ranks_fail_retry.py" --detached
judge ranks_detached "$(caught deaths-noticed "the shard is missing" spawn_ranks_fail_retry.py)"
# A DataLoader's worker segfaults in a child, as PyTorch's test_dataloader.py writes it: the loader
# raises in the child (naming one dead worker), the child fails, the parent reads its exit code.
# Noticed all along the chain, under forkserver too (where the forkserver, not the child, is the
# workers' parent). The twin's parent never reads the child's exit code.
expect loader_segfault 0 $all -- "$py" "$progs/loader_worker_segfault.py"
judge loader_segfault "$clean"
judge loader_segfault "$(exercised deaths-noticed)"
expect loader_segfault_unchecked 1 $all -- "$py" "$progs/loader_worker_segfault.py" --unchecked
judge loader_segfault_unchecked "$(caught deaths-noticed "RuntimeError: DataLoader worker" loader_worker_segfault.py)"

# --- Past exec's 128 rows: a late daemon is still watched (a helper let finish, a stray a survivor),
# not left to escape exec's end and be blamed on the harness (no-leaks). How many processes exec
# follows does not depend on how they started: fork alone here (a run of 140 workers takes 15 s
# under spawn), every start method in the slow suite's repetitions. -----------------------------------
rows=$all
[ "$SB_REPS" -gt 1 ] || rows="--mp-start fork --repetitions $SB_REPS"
expect late_helper 0 $rows -- "$py" "$progs/many_workers_late_daemon.py"
judge late_helper "$clean"
judge late_helper 'all(len(c["repetitions"][r]["processes"]) > 128 for c in cells for r in reps)'
expect late_stray 1 $rows -- "$py" "$progs/many_workers_late_daemon.py" --stray
judge late_stray 'all(verdict(c, "no-survivors", r) == "fail" and "stray_daemon" in check(c, "no-survivors", r)["message"] and verdict(c, "no-leaks", r) == "pass" for c in cells for r in reps)'

# --- Memory users pay for: a Dataset of Python lists read by forked DataLoader workers (fork only:
# under spawn each worker unpickles its own copy, which is not inherited). ----------------------------
fork_reps="--mp-start fork --repetitions $SB_REPS"
expect lists 1 $fork_reps -- "$py" "$progs/dataset_python_lists.py"
judge lists "$(caught copy-on-read "Reading a Python object writes its reference count" dataset_python_lists.py)"
judge lists 'all(check(c, "copy-on-read", r)["value"] >= 64 for c in cells for r in reps)'
expect arrays 0 $fork_reps -- "$py" "$progs/dataset_python_lists.py" --arrays
judge arrays "$clean"
judge arrays "$(exercised copy-on-read)"

# --- Advice that matches what the program did: shared, then converted (.double()). ------------------
expect converted 1 --mp-start fork --repetitions "$SB_REPS" -- "$py" "$progs/hogwild_converted_after_share.py"
judge converted "$(caught updates-shared "share_memory() was called at" hogwild_converted_after_share.py)"
judge converted 'all("call share_memory() after converting" in check(c, "updates-shared", r)["message"] for c in cells for r in reps)'
expect converted_fixed 0 $all -- "$py" "$progs/hogwild_converted_after_share.py" --fixed
judge converted_fixed "$clean"

# --- Hand-written SGD that rebinds each parameter, `p.data = p.data - lr * p.grad`: from its first step
# each worker trains private tensors (shared when it received them); the twin updates in place.
expect manual_sgd 1 $all -- "$py" "$progs/hogwild_manual_sgd.py"
judge manual_sgd "$(caught updates-shared "with its 4 parameter tensors in shared memory, and by its end 0 of them were there" hogwild_manual_sgd.py)"
judge manual_sgd "$(caught updates-shared "p.data.sub_(lr * p.grad)" hogwild_manual_sgd.py)"
expect manual_sgd_fixed 0 $all -- "$py" "$progs/hogwild_manual_sgd.py" --fixed
judge manual_sgd_fixed "$clean"
judge manual_sgd_fixed "$(exercised updates-shared)"

# --- A backward() in the parent before share_memory(): its gradients are shared too, and under fork every
# worker adds into and clears the same .grad buffers (spawn and forkserver pickle no gradients).
expect grads_shared 1 --mp-start fork --repetitions "$SB_REPS" -- "$py" "$progs/hogwild_grads_before_share.py"
judge grads_shared "$(caught grads-delivered "stepped on gradients in shared memory" hogwild_grads_before_share.py)"
judge grads_shared "$(caught grads-delivered "model.zero_grad(set_to_none=True)" hogwild_grads_before_share.py)"
expect grads_shared_fresh 0 --mp-start spawn,forkserver --repetitions "$SB_REPS" -- "$py" "$progs/hogwild_grads_before_share.py"
judge grads_shared_fresh "$clean"
expect grads_shared_fixed 0 $all -- "$py" "$progs/hogwild_grads_before_share.py" --fixed
judge grads_shared_fixed "$clean"
judge grads_shared_fixed "$(exercised grads-delivered)"
# A3C workers whose replica is copy.deepcopy(shared_model) of a model that ran backward() before it was
# shared: under fork the replica gets copies of the shared .grad, ensure_shared_grads() never links, and
# the shared optimizer steps on buffers zero_grad() keeps at zero. Spawn and forkserver hand over no
# .grad (torch pickles a parameter without it): the same program is correct there.
expect deepcopy_replica 1 --mp-start fork --repetitions "$SB_REPS" -- "$py" "$progs/a3c_deepcopy_replica.py"
judge deepcopy_replica "$(caught grads-delivered "that were zero at every step it was sampled at" a3c_deepcopy_replica.py)"
judge deepcopy_replica "$(caught grads-delivered "copy.deepcopy(shared_model)" a3c_deepcopy_replica.py)"
judge deepcopy_replica "$(caught model-learned "the parent\x27s copy never changed" a3c_deepcopy_replica.py)"
expect deepcopy_replica_fresh 0 --mp-start spawn,forkserver --repetitions "$SB_REPS" -- "$py" "$progs/a3c_deepcopy_replica.py"
judge deepcopy_replica_fresh "$clean"
judge deepcopy_replica_fresh "$(exercised grads-delivered model-learned)"
expect deepcopy_replica_fixed 0 $all -- "$py" "$progs/a3c_deepcopy_replica.py" --fixed
judge deepcopy_replica_fixed "$clean"
judge deepcopy_replica_fixed "$(exercised grads-delivered model-learned)"

# --- The parent evaluates another object than the model its workers trained: a checkpoint rank 0 saved
# after its first epoch, loaded into a new Net after join(); --no-save loads nothing (a fresh Net).
# --fixed saves the shared model after join() and evaluates that file; --evaluate-shared tests the
# shared model itself, as mnist_hogwild does. -------------------------------------------------------------
expect stale_checkpoint 1 $all -- "$py" "$progs/hogwild_evaluates_checkpoint.py"
judge stale_checkpoint "$(caught trained-model-used "used another Net object at" hogwild_evaluates_checkpoint.py)"
judge stale_checkpoint "$(caught trained-model-used "hogwild_evaluates_checkpoint.py:69 in test (1 use, the last after its workers ended), never the Net its children trained" hogwild_evaluates_checkpoint.py)"
judge stale_checkpoint "$(caught trained-model-used "handed over at " hogwild_evaluates_checkpoint.py)"
judge stale_checkpoint "$(caught trained-model-used "Fix: after join(), use the model handed to the workers" hogwild_evaluates_checkpoint.py)"
expect fresh_net 1 $all -- "$py" "$progs/hogwild_evaluates_checkpoint.py" --no-save
judge fresh_net "$(caught trained-model-used "used another Net object at" hogwild_evaluates_checkpoint.py)"
expect checkpoint_fixed 0 $all -- "$py" "$progs/hogwild_evaluates_checkpoint.py" --fixed
judge checkpoint_fixed "$clean"
judge checkpoint_fixed "$(exercised trained-model-used model-learned)"
expect evaluate_shared 0 $all -- "$py" "$progs/hogwild_evaluates_checkpoint.py" --evaluate-shared
judge evaluate_shared "$clean"
judge evaluate_shared "$(exercised trained-model-used)"

# --- Pool's own terminate() at the end of `with Pool()`: not a death. ---------------------------------
expect pool 0 $all -- "$py" "$progs/pool_map.py"
judge pool "$clean"
judge pool "$(exercised deaths-noticed)"

# --- Nothing to judge: a program without children says so, it does not pass. -------------------------
cat >"$out/no_children.py" <<'PY'
import torch
model = torch.nn.Linear(4, 2)
torch.optim.SGD(model.parameters(), lr=0.1).step()
PY
expect no_children 0 -- "$py" "$out/no_children.py"
judge no_children 'all(verdict(cells[0], n) == "not-exercised" for n in ("fork-safety", "updates-shared", "optimizer-state-shared", "grads-delivered", "deaths-noticed"))'
exit $status
