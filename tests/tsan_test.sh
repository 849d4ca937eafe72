#!/usr/bin/env bash
# ThreadSanitizer reports are verdicts: in the TSan build each worker's reports go to files in the
# repetition's private directory, come back into the results, and a `sanitizer` check fails the
# cell on any. Checked for what they must and must not say (LLVM's tsan tests in spirit: a _race
# case and its _norace twin), with the thread start method:
#   hogwild                        opts out (its race is by design): exit 0, the race (in apply_sgd)
#                                  still in the results
#   locked, deadlock/same-order    the sanitizer check passes
#   a3c/hogwild, a3c/locked        the lock-free shared optimizer's race (in SharedOptimizer::step)
#                                  is in the results with no check; the locked one passes
#   deadlock/lock-order-staggered  a lock-order inversion report; the planted bug is still as expected
#   planted data-race/plain        (out of tree, against the installed TSan build, registered as a
#                                  plain variant) the run exits 1, the check names data_race.cc:LINE
#   planted data-race/atomic       its twin: exit 0, the check passes
# usage: tsan_test.sh SHAREBENCH_TSAN SUPPRESSIONS OUTDIR BUILD_DIR SOURCE_DIR
set -uo pipefail
bin=$1
supp=$2
out=$3
build=$4
src=$5
rm -rf "$out" && mkdir -p "$out"
# die_after_fork=0: the thread host is forked from the runner, which may own an OpenMP pool.
# exitcode=0: a report is the sanitizer check's verdict, not a worker's exit status.
export TSAN_OPTIONS="suppressions=$supp die_after_fork=0 second_deadlock_stack=1 halt_on_error=0 exitcode=0"
status=0
fail() { echo "FAIL: $*"; status=1; }

# run NAME WANT_EXIT ARGS...: one cell in thread mode, TSan's slow pace allowed for.
run() {
  local name=$1 want=$2
  shift 2
  "$bin" run --blocks 0 "$@" --start thread --procs 2 --hang-timeout 120 --deadline 600 --format none --out "$out/$name" \
    >"$out/$name.log" 2>&1
  local code=$?
  [ "$code" -eq "$want" ] || { tail -30 "$out/$name.log"; fail "$name: exited $code, want $want"; }
}
# expect NAME PYTHON-CONDITION MESSAGE: a condition on `rep` (first repetition), `checks` (by name)
# and `report` (the sanitizer reports in the results).
expect() {
  python3 - "$out/$1/results.json" "$2" "$1: $3" <<'PY' || status=1
import json, sys
run = json.load(open(sys.argv[1]))
rep = run["cells"][0]["repetitions"][0]
checks = {c["name"]: c for c in rep["checks"]}
report = rep.get("sanitizer_report", "")
if not eval(sys.argv[2]):
    print("FAIL:", sys.argv[3]); print({k: (v["verdict"], v["message"][:200]) for k, v in checks.items()}); print(report[:2000])
    sys.exit(1)
PY
}

run hogwild 0 --scenario hogwild --steps 200
expect hogwild '"sanitizer" not in checks' "opted out, yet a sanitizer check"
expect hogwild '"WARNING: ThreadSanitizer: data race" in report and "apply_sgd" in report' "the race in apply_sgd is not in the results"

run locked 0 --scenario locked --steps 200
expect locked 'checks["sanitizer"]["verdict"] == "pass"' "the sanitizer check did not pass"

# a3c: the lock-free shared optimizer races in its step (by design: opted out per variant, the
# report kept); the locked one is ordered by its lock.
run a3c-hogwild 0 --scenario a3c/hogwild --steps 100
expect a3c-hogwild '"sanitizer" not in checks' "opted out, yet a sanitizer check"
expect a3c-hogwild '"WARNING: ThreadSanitizer: data race" in report and "SharedOptimizer::step" in report' \
  "the race in SharedOptimizer::step is not in the results"
run a3c-locked 0 --scenario a3c/locked --steps 100
expect a3c-locked 'checks["sanitizer"]["verdict"] == "pass" and not report' "the locked shared optimizer raced"

run staggered 0 --scenario deadlock/lock-order-staggered
expect staggered '"lock-order-inversion" in report and checks["sanitizer"]["verdict"] == "fail"' "no lock-order inversion reported"

run same-order 0 --scenario deadlock/same-order --steps 200
expect same-order 'checks["sanitizer"]["verdict"] == "pass"' "the sanitizer check did not pass"

# `repro --under tsan` re-runs a cell of a results file in the TSan build and thread mode.
(cd "$out" && SHAREBENCH_TSAN_BINARY=$bin "$bin" repro "$out/hogwild/results.json" 'hogwild/lock-free@thread:2' --under tsan \
  >"$out/repro.log" 2>&1) || fail "repro --under tsan failed"
grep -q 'WARNING: ThreadSanitizer: data race' "$out/runs/latest/results.json" || fail "repro --under tsan: no data race in its results"

# A user's racy strategy, built out of tree against the installed TSan build.
cmake --install "$build" --prefix "$out/prefix" >"$out/install.log" || fail "install of the TSan build"
cmake -S "$src/tests/planted" -B "$out/planted" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_PREFIX_PATH="$out/prefix" \
  -DPLANTED_WITH_TORCH=OFF -DPLANTED_SANITIZER=thread >"$out/planted-configure.log" 2>&1 &&
  cmake --build "$out/planted" --target planted-bench >"$out/planted-build.log" 2>&1 ||
  { tail -30 "$out/planted-build.log"; fail "the planted project did not build against the TSan install"; }
bin=$out/planted/planted-bench
line=$(grep -n 'planted: the racing line' "$src/tests/planted/data_race.cc" | cut -d: -f1)
run race 1 --scenario data-race/plain --steps 1000
expect race "checks['sanitizer']['verdict'] == 'fail' and 'data race' in checks['sanitizer']['message'] and 'data_race.cc:$line' in checks['sanitizer']['message']" \
  "the sanitizer check does not name data_race.cc:$line"
run norace 0 --scenario data-race/atomic --steps 1000
expect norace 'checks["sanitizer"]["verdict"] == "pass"' "the twin's sanitizer check did not pass"
exit $status
