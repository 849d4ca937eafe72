#!/usr/bin/env bash
# Google Benchmark JSON read by the real compare.py of Debian's libbenchmark-tools: two runs with
# repetitions must compare cell by cell, with its U test, though each holds skipped cells (the CUDA
# ones: refused under fork, and no GPU here) and a planted bug's cell. A skipped cell once made
# compare.py fail with KeyError: 'real_time' (its geometric mean reads every benchmark's time).
# usage: report_gbench_test.sh SHAREBENCH OUTDIR
set -euo pipefail
bin=$1
out=$2
rm -rf "$out" && mkdir -p "$out"
for side in a b; do
  "$bin" run --blocks 0 --scenario hogwild,locked/local-lock,ipc/cuda --start fork,spawn --procs 1,2 --steps 200 --repetitions 3 \
    --out "$out/$side" --format gbench,none 2>/dev/null || [ $? -eq 1 ]
done
compare=/usr/share/benchmark/compare.py
[ -f "$compare" ] || { echo "FAIL: $compare missing (ci/setup installs libbenchmark-tools)"; exit 1; }
/usr/bin/python3 "$compare" benchmarks "$out/a/gbench.json" "$out/b/gbench.json" >"$out/compare.txt" 2>&1 || {
  cat "$out/compare.txt"; echo "FAIL: compare.py exited non-zero"; exit 1; }
cat "$out/compare.txt"
status=0
for cell in 'hogwild/lock-free@fork:1' 'hogwild/lock-free@fork:2' 'hogwild/lock-free@fork:2_pvalue'; do
  grep -qF "$cell" "$out/compare.txt" || { echo "FAIL: compare.py output lacks $cell"; status=1; }
done
/usr/bin/python3 - "$out/a/gbench.json" <<'PY' || status=1
import json, sys
g = json.load(open(sys.argv[1]))
names = {b["name"] for b in g["benchmarks"]}
not_run = {c["name"] for c in g["context"].get("sharebench_not_run", [])}
if not any(n.startswith("ipc/cuda@") for n in not_run) and not any(n.startswith("ipc/cuda@") for n in names):
    print("FAIL: the skipped CUDA cells are in neither the benchmarks nor sharebench_not_run"); sys.exit(1)
if not not_run:
    print("FAIL: no skipped cell in the run: the case this test is for did not arise"); sys.exit(1)
if names & not_run:
    print("FAIL: a cell is both a benchmark and not run:", names & not_run); sys.exit(1)
print(f"ok: {len(not_run)} cells not run listed in the context, {len(names)} benchmarks")
PY
exit $status
