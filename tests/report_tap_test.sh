#!/usr/bin/env bash
# The TAP report read by a real TAP consumer, perl's `prove`: a run whose cells are all as expected
# (a clean cell, a planted bug caught, a skipped CUDA cell) must pass under prove; a run with a
# missed planted bug must fail under it, naming the cell and the check.
# usage: report_tap_test.sh SHAREBENCH OUTDIR
set -euo pipefail
bin=$1
out=$2
rm -rf "$out" && mkdir -p "$out"
command -v prove >/dev/null || { echo "FAIL: prove missing (Debian's perl)"; exit 1; }
status=0
fail() { echo "FAIL: $*"; status=1; }

"$bin" run --blocks 0 --scenario locked/whole-step,locked/local-lock,ipc/cuda --start fork --procs 2 --steps 200 \
  --format tap,none --out "$out/good" 2>/dev/null || fail "the expected run exited $?"
cat "$out/good/results.tap"
prove --exec cat "$out/good/results.tap" >"$out/good.prove" 2>&1 || { cat "$out/good.prove"; fail "prove failed a run whose cells were all as expected"; }
grep -q '^ok [0-9]* - locked/local-lock@fork:2$' "$out/good/results.tap" || fail "the caught planted bug is not an ok test point"
grep -q '  outcome: bug-caught' "$out/good/results.tap" || fail "the caught planted bug has no evidence block"
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi >/dev/null 2>&1; then
  grep -q '^ok [0-9]* - ipc/cuda@fork:2 # SKIP' "$out/good/results.tap" || fail "the CUDA cell without a GPU is not a SKIP"
fi

# The planted bug's detectors switched off: missed, so not ok.
if "$bin" run --scenario locked/local-lock --start fork --procs 2 --steps 200 \
     --disable-check mutual-exclusion,lost-updates --format tap,none --out "$out/bad" 2>/dev/null; then
  fail "a missed planted bug exited 0"
fi
cat "$out/bad/results.tap"
if prove --exec cat "$out/bad/results.tap" >"$out/bad.prove" 2>&1; then fail "prove passed a run with a missed planted bug"; fi
grep -q '^not ok 1 - locked/local-lock@fork:2$' "$out/bad/results.tap" || fail "the missed planted bug is not a 'not ok' test point"
grep -q 'verdict: "missed"' "$out/bad/results.tap" || fail "the missed check is not named in the YAML block"
exit $status
