#!/usr/bin/env bash
# The known-bug catalogue as a self-test: `run --known-bugs` exits 0 (every planted bug caught by
# the check that must catch it, every clean twin clean) and its console output names, for every
# caught bug, the check and its evidence line; it exits 1 when any one detector is switched off
# (--disable-check), for each detector of each planted bug.
# usage: known_bugs_test.sh SHAREBENCH OUTDIR [catalogue|detectors]   (both when neither is named)
source "$(dirname "$0")/test_lib.sh" "$@"
part=${3:-both}
case $part in catalogue|detectors|both) ;; *) echo "usage: $0 SHAREBENCH OUTDIR [catalogue|detectors]"; exit 2;; esac
# Stacks from /proc, not gdb: every check here reads the harness's own records (the wait-for graph,
# the lock table), and gdb's reading of LibTorch's symbols cost about 6 s per hung cell (a third of
# this suite). gdb's stacks are tested where they are the point (detector_tests' Gdb* and ForkHazard
# cases, exec's fork-after-OpenMP hang).
quick=(--steps 200 --hang-timeout 3 --stacks proc --format none)

if [ "$part" != detectors ]; then
"$bin" run --blocks 0 --known-bugs --start fork,spawn,forkserver --procs 1,2 --steps 200 --hang-timeout 3 --stacks proc --out "$out/all" \
  >"$out/all.log" 2>&1
code=$?
[ $code -eq 0 ] || { fail "run --known-bugs exited $code, want 0"; "$bin" report "$out/all/results.json" --format console | tail -40; }
# Every caught bug's evidence is on the console: "bug caught CELL by CHECK: MESSAGE".
python3 - "$out/all/results.json" "$out/all.log" <<'PY' || fail "the console does not show every caught bug's evidence"
import json, sys
run = json.load(open(sys.argv[1])); log = open(sys.argv[2]).read()
caught = [c for c in run["cells"] if c["outcome"]["kind"] == "bug-caught"]
missing = [f'{c["id"]} by {e["check"]}' for c in caught for e in c["outcome"]["evidence"]
           if f'bug caught {c["id"]} by {e["check"]}: {e["message"]}' not in log or not e["message"]]
print(f"evidence lines: {len(caught)} caught bugs, {len(missing)} without their evidence on the console")
for m in missing: print("  missing:", m)
sys.exit(1 if missing or not caught else 0)
PY
fi
[ "$part" = catalogue ] && exit $status

# variant:check pairs: the planted bug and one detector that must catch it.
for pair in locked/local-lock:mutual-exclusion locked/owner-death:liveness hogwild/forked-copy:updates-reached-model \
            hogwild/forked-copy:model-shared inference/private-copy:model-shared \
            deadlock/lock-order:liveness deadlock/lock-order:deadlock-free deadlock/lock-order:lock-order \
            deadlock/lock-order-staggered:lock-order inference/writer:parameters-unchanged \
            inference/writer:probe-identical averaging/no-barrier:replicas-agree averaging/skip-round:replicas-agree \
            snapshot/element-lock:consistent-snapshots ipc/early-reuse:message-checksums \
            ipc/early-reuse:buffer-lifetime ipc/producer-exits:producer-lifetime \
            fork/threads-holding-lock:liveness fork/threads-holding-lock:fork-safe \
            a3c/private-state:optimizer-state-shared a3c/private-step:optimizer-state-shared \
            a3c/lazy-state:optimizer-state-shared a3c/stale-grads:grads-delivered; do
  variant=${pair%%:*}
  check=${pair#*:}
  "$bin" run --scenario "$variant" --start fork --procs 2 "${quick[@]}" --disable-check "$check" \
    --out "$out/off-${variant//\//-}-$check" >/dev/null 2>&1
  code=$?
  if [ $code -eq 1 ]; then
    echo "ok: $variant with $check switched off fails the run"
  else
    fail "$variant with $check switched off: exit $code, want 1"
  fi
done
exit $status
