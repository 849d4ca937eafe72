#!/usr/bin/env bash
# Google Benchmark JSON read by the real compare.py of Debian's libbenchmark-tools: two runs with
# repetitions must compare cell by cell, with its U test.
# usage: report_gbench_test.sh SHAREBENCH OUTDIR
set -euo pipefail
bin=$1
out=$2
rm -rf "$out" && mkdir -p "$out"
for side in a b; do
  "$bin" run --scenario hogwild --start fork --procs 1,2 --steps 200 --repetitions 3 --out "$out/$side" \
    --format gbench,none 2>/dev/null
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
exit $status
