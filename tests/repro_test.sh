#!/usr/bin/env bash
# A failing cell's reproduce command, copied from the Markdown report, reproduces the failure;
# and `sharebench repro RESULTS CELL` does the same from the results file.
# usage: repro_test.sh SHAREBENCH OUTDIR
source "$(dirname "$0")/test_lib.sh" "$@"

# A learning rate that diverges makes the convergence check fail.
"$bin" run --scenario locked/whole-step --start fork --procs 2 --steps 200 --lr 99 --format md,none --out "$out/first" 2>/dev/null
[ $? -eq 1 ] || fail "the failing run must exit 1"
cmd=$(awk '/^Reproduce:/{r=1} r && /^```sh/{getline; print; exit}' "$out/first/report.md")
echo "from the Markdown report: $cmd"
[ -n "$cmd" ] || fail "no reproduce command in report.md"
case "$cmd" in *"--lr 99"*) ;; *) fail "the command does not carry the cell's options: $cmd" ;; esac

failed_check() { grep -q '"name": "convergence"' "$1" && python3 - "$1" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
checks = run["cells"][0]["repetitions"][0]["checks"]
sys.exit(0 if any(c["name"] == "convergence" and c["verdict"] == "fail" for c in checks) else 1)
PY
}

$cmd --out "$out/again" --format none 2>/dev/null
[ $? -eq 1 ] || fail "the copied command must fail the same way (exit 1)"
failed_check "$out/again/results.json" || fail "the copied command did not reproduce the convergence failure"

cd "$out" && "$bin" repro "$out/first/results.json" 'locked/whole-step@fork:2' >/dev/null 2>&1
[ $? -eq 1 ] || fail "sharebench repro must fail the same way (exit 1)"
failed_check "$out/runs/latest/results.json" || fail "sharebench repro did not reproduce the convergence failure"

"$bin" repro "$out/first/results.json" 'locked/nosuch@fork:2' 2>/dev/null
[ $? -eq 2 ] || fail "an unknown cell must exit 2"
exit $status
