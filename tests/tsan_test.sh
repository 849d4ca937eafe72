#!/usr/bin/env bash
# ThreadSanitizer reports, checked for what they must and must not say (LLVM's tsan tests in
# spirit: a _race case and its _norace twin). Runs the TSan build with the thread start method.
#   hogwild                 must report a data race, in the shared-parameter update (apply_sgd)
#   locked                  must report nothing
#   deadlock/lock-order-staggered  must report a lock-order inversion, though the run never hangs
#   deadlock/same-order     must report nothing
# usage: tsan_test.sh SHAREBENCH_TSAN SUPPRESSIONS OUTDIR
set -uo pipefail
bin=$1
supp=$2
out=$3
rm -rf "$out" && mkdir -p "$out"
# die_after_fork=0: the thread host is forked from the runner, which may own an OpenMP pool.
export TSAN_OPTIONS="suppressions=$supp die_after_fork=0 second_deadlock_stack=1 halt_on_error=0 exitcode=0"
status=0
fail() { echo "FAIL: $*"; status=1; }

run() {
  local name=$1
  shift
  # TSan makes every step 5-20x slower and printing a report takes seconds: a long hang timeout.
  "$bin" run "$@" --start thread --procs 2 --hang-timeout 120 --deadline 600 --format none --out "$out/$name" 2>"$out/$name.tsan"
  local code=$?
  [ $code -eq 0 ] || fail "$name: sharebench exited $code (see $out/$name.tsan)"
  echo "$name: $(grep -c 'WARNING: ThreadSanitizer' "$out/$name.tsan") TSan report(s)"
}

run hogwild --scenario hogwild --steps 200
grep -q 'WARNING: ThreadSanitizer: data race' "$out/hogwild.tsan" || fail "hogwild: no data race reported"
grep -q 'apply_sgd' "$out/hogwild.tsan" || fail "hogwild: the race is not in the parameter update (apply_sgd)"

run locked --scenario locked --steps 200
grep -q 'WARNING: ThreadSanitizer' "$out/locked.tsan" && { fail "locked: TSan reported something"; head -60 "$out/locked.tsan"; }

run staggered --scenario deadlock/lock-order-staggered
grep -q 'WARNING: ThreadSanitizer: lock-order-inversion' "$out/staggered.tsan" || fail "lock-order-staggered: no lock-order inversion reported"

run same-order --scenario deadlock/same-order --steps 200
grep -q 'WARNING: ThreadSanitizer' "$out/same-order.tsan" && { fail "same-order: TSan reported something"; head -60 "$out/same-order.tsan"; }

# `repro --under tsan` re-runs a cell of a results file in the TSan build and thread mode.
SHAREBENCH_TSAN_BINARY=$bin "$bin" repro "$out/hogwild/results.json" 'hogwild/lock-free@thread:2' --under tsan \
  >/dev/null 2>"$out/repro.tsan"
grep -q 'WARNING: ThreadSanitizer: data race' "$out/repro.tsan" || fail "repro --under tsan: no data race reported"

exit $status
