#!/usr/bin/env bash
# Measurement conditions are recorded with every run and a busy neighbour is named: a process
# spinning on a core while a run measures must appear in results.json (busy_processes,
# conditions_warning) and as a warning in the reports, with the load before and after.
# usage: conditions_test.sh SHAREBENCH OUTDIR
set -euo pipefail
bin=$1
out=$2
rm -rf "$out" && mkdir -p "$out"
py=/usr/bin/python3
status=0
fail() { echo "FAIL: $*"; status=1; }

# A neighbour with a name of its own (a process's name is its executable's), spinning on one core.
cp /bin/sh "$out/busyneighbour"
"$out/busyneighbour" -c 'while :; do :; done' &
neighbour=$!
trap 'kill $neighbour 2>/dev/null || true' EXIT
sleep 0.5
"$bin" run --blocks 0 --scenario hogwild --start fork --procs 1 --steps 4000 --format md,none --out "$out/busy" 2>/dev/null ||
  fail "the run beside a busy neighbour exited $?"
kill $neighbour
"$bin" report "$out/busy/results.json" --format console --color never >"$out/busy.txt"

"$py" - "$out/busy/results.json" <<'PY' || status=1
import json, sys
env = json.load(open(sys.argv[1]))["environment"]
problems = []
for key in ("load_before", "load_after", "usable_cores", "cpu_governor", "cpu_boost", "other_cpu_cores",
            "steal_cpu_cores", "busy_processes", "conditions_warning"):
    if key not in env:
        problems.append(f"environment lacks {key}")
if "busyneighbour" not in env.get("busy_processes", ""):
    problems.append(f"the busy neighbour is not among busy_processes: {env.get('busy_processes')!r}")
if "busyneighbour" not in env.get("conditions_warning", ""):
    problems.append(f"the warning does not name the neighbour: {env.get('conditions_warning')!r}")
if float(env.get("other_cpu_cores", "0")) < 0.5:
    problems.append(f"a neighbour spinning on a core counted as {env.get('other_cpu_cores')} cores")
for p in problems:
    print("FAIL:", p)
sys.exit(1 if problems else 0)
PY
grep -q "Warning: other processes used" "$out/busy/report.md" || fail "report.md does not warn of the busy neighbour"
grep -q "^Measured under: load " "$out/busy/report.md" || fail "report.md does not give the measurement conditions"
grep -q "^warning: other processes used" "$out/busy.txt" || fail "the console report does not warn of the busy neighbour"
grep -q "^Measured under: load .* -> .* on [0-9]* cores" "$out/busy.txt" || fail "the console report does not give the conditions"
exit $status
