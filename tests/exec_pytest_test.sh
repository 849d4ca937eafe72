#!/usr/bin/env bash
# exec findings per test: a test runner under exec (pytest, unittest) has its findings named with
# the test they happened in, as the runner names it, in the console, results.json and JUnit, and no
# other test is named. tests/exec_programs/pytest_suite holds ten tests, one of which (in the style
# of a user's Hogwild suite) forgets share_memory(); unittest_suite holds the same bug in a
# TestCase. Both suites' own assertions pass: exec alone tells.
# usage: exec_pytest_test.sh SHAREBENCH OUTDIR SOURCE_DIR
source "$(dirname "$0")/test_lib.sh" "$@"
src=$3
cd "$src" || exit 1

# judged RUNNER BAD OTHERS...: the run in $out/RUNNER names BAD in the console, in the failing
# check's tests in results.json and as a failing JUnit testcase, and names none of OTHERS anywhere.
judged() {
  local runner=$1 bad=$2
  shift 2
  local dir="$out/$runner"
  grep -qF "in test $bad: " "$dir/console.txt" || fail "$runner: the console does not name $bad: $(grep -F 'fail ' "$dir/console.txt" | head -3)"
  /usr/bin/python3 - "$dir/results.json" "$dir/junit.xml" "$bad" "$@" <<'PY' || status=1
import json, sys
import xml.etree.ElementTree as ET
results, junit, bad, others = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
run = json.load(open(results))
problems = []
reps = run["cells"][0]["repetitions"]
named = {t for r in reps for c in r["checks"] for t in c.get("tests", [])}
failing = {c["name"] for r in reps for c in r["checks"] if c["verdict"] == "fail" and bad in c.get("tests", [])}
if named != {bad}: problems.append(f"results.json's checks name the tests {sorted(named)}, not [{bad}] alone")
if "updates-shared" not in failing: problems.append(f"updates-shared does not name {bad}: {sorted(failing)}")
procs = {p.get("test", "") for r in reps for p in r["processes"]}
if bad not in procs: problems.append(f"no process of {bad} in the process table: {sorted(procs)}")
cases = [(tc.get("name"), tc.find("failure") is not None) for tc in ET.parse(junit).getroot().iter("testcase")]
if (bad, True) not in cases: problems.append(f"JUnit has no failing testcase named {bad}: {cases}")
# What the findings say (every check's message and tests, every JUnit testcase): the process table
# names each process's test, clean or not, as it should.
text = json.dumps([c for r in reps for c in r["checks"]]) + open(junit).read()
for other in others:
    if other in text: problems.append(f"{other}, a clean test, is named by a finding")
for p in problems: print("FAIL:", p)
sys.exit(1 if problems else 0)
PY
  for other in "$@"; do  # the console's findings (its process table shows commands, not tests)
    grep -qF "$other" "$dir/console.txt" && fail "$runner: the console names $other, a clean test"
  done
  [ "$status" = 0 ] && echo "ok: $runner names $bad alone"
}

suite=tests/exec_programs/pytest_suite
mkdir -p "$out/pytest"
"$bin" exec --out "$out/pytest" --color never --format console,junit -- /usr/bin/python3 -m pytest -q -p no:cacheprovider "$suite" \
  >"$out/pytest/console.txt" 2>"$out/pytest/stderr.txt"
code=$?
[ $code = 1 ] || fail "pytest under exec exited $code, not 1 (a check failed): $(tail -5 "$out/pytest/stderr.txt")"
grep -q "10 passed" "$out/pytest/console.txt" "$out/pytest/stderr.txt" "$out/pytest/results.json" ||
  fail "the suite's own ten tests did not all pass"
judged pytest "$suite/test_hogwild.py::test_workers_exit_cleanly" \
  "$suite/test_hogwild.py::test_workers_train_the_shared_model" "$suite/test_hogwild.py::test_model_shape" \
  "$suite/test_data.py::test_batch_is_float" "$suite/test_data.py::test_pool_maps" \
  "$suite/test_data.py::test_queue_hands_a_tensor_over" "$suite/test_data.py::test_sum" \
  "$suite/test_config.py::test_procs_are_positive"

suite=tests/exec_programs/unittest_suite
mkdir -p "$out/unittest"
"$bin" exec --out "$out/unittest" --color never --format console,junit -- /usr/bin/python3 -m unittest discover -s "$suite" \
  -t "$suite" >"$out/unittest/console.txt" 2>"$out/unittest/stderr.txt"
code=$?
[ $code = 1 ] || fail "unittest under exec exited $code, not 1: $(tail -5 "$out/unittest/stderr.txt")"
judged unittest "test_trainer.TrainerTest.test_private_model" "test_trainer.TrainerTest.test_shared_model" \
  "test_trainer.TrainerTest.test_arithmetic"

[ $status = 0 ] && echo "PASS: exec names the test of each finding"
exit $status
