#!/usr/bin/env bash
# `sharebench compare` on real runs, at the gate's repetition count and threshold (ci/gate,
# docs/reports.md):
#   a run against itself: no change (exit 0; inconclusive when the machine's noise is wider than
#   the threshold, never a regression);
#   against a copy slowed by about a quarter (--step-delay-us, runs interleaved with the base
#   so the VM's drift falls on both): regression, naming the cell (exit 1);
#   at 2 repetitions a side: inconclusive (exit 0; exit 4 with --strict), never a regression;
#   a candidate whose check fails: a correctness regression (exit 1);
#   foreign, malformed or unrelated files and a bad threshold: one line, exit 2.
# usage: compare_gate_test.sh SHAREBENCH OUTDIR
source "$(dirname "$0")/test_lib.sh" "$@"
reps=$(sed -n 's/^gate_repetitions=\([0-9]*\).*/\1/p' "$(dirname "$0")/../ci/gate")
threshold=$(sed -n 's/^gate_threshold=\([0-9.]*\).*/\1/p' "$(dirname "$0")/../ci/gate")
[ -n "$reps" ] && [ -n "$threshold" ] || { echo "FAIL: no gate_repetitions or gate_threshold in ci/gate"; exit 1; }
# Wide layers: a step of over a millisecond, so a sleep's own cost (~0.1 ms here) stays small beside it.
# One worker: on two cores it leaves one to the machine's own noise, which two workers would share.
cell=(--scenario hogwild/lock-free --start fork --procs 1 --steps 800 --hidden 512 --format none)
decision() {  # FILE METRIC: the decision of the first change of that metric in a JSON comparison
  python3 -c 'import json,sys; print(next(c["decision"] for c in json.load(open(sys.argv[1]))["changes"] if c["metric"]==sys.argv[2]))' "$1" "$2"
}

median_sps() { python3 -c 'import json,sys,statistics as s
print(s.median(x["metrics"]["steps_per_s"] for x in json.load(open(sys.argv[1]))["cells"][0]["repetitions"]))' "$1"; }
"$bin" run "${cell[@]}" --repetitions 3 --out "$out/probe" || fail "probe run"
step_us=$(python3 -c "print(int(1e6/$(median_sps "$out/probe/results.json")))")
# A copy about a quarter slower: a pause of a quarter of a step after each step (a sleep costs a
# little more than it asks for on a VM). Base and slowed repetitions alternate, one run each, so
# the VM's drift (its speed moved by a fifth between consecutive runs on a noisy day, which made
# a calibrated 20 % copy indistinguishable from its base) falls on both alike; each side's runs
# are then joined into one results file of $reps repetitions.
delay=$((step_us / 4))
echo "base: $reps repetitions, $step_us µs a step; slowed copy: --step-delay-us $delay (interleaved)"
for i in $(seq 1 "$reps"); do
  "$bin" run "${cell[@]}" --repetitions 1 --out "$out/base-$i" || fail "base run $i"
  "$bin" run "${cell[@]}" --repetitions 1 --step-delay-us "$delay" --out "$out/slow-$i" || fail "slow run $i"
done
join_runs() {  # NAME: $out/NAME-1..reps joined into $out/NAME/results.json (the first run's, every repetition)
  mkdir -p "$out/$1"
  python3 - "$out" "$1" "$reps" <<'PY'
import json, sys
out, name, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
runs = [json.load(open(f"{out}/{name}-{i}/results.json")) for i in range(1, reps + 1)]
joined = runs[0]
for r in runs[1:]:
    joined["cells"][0]["repetitions"] += r["cells"][0]["repetitions"]
json.dump(joined, open(f"{out}/{name}/results.json", "w"))
PY
}
join_runs base
join_runs slow
"$bin" run "${cell[@]}" --repetitions 2 --out "$out/base2" || fail "base run, 2 repetitions"
"$bin" run "${cell[@]}" --repetitions 2 --step-delay-us "$delay" --out "$out/slow2" || fail "slow run, 2 repetitions"
"$bin" run "${cell[@]}" --repetitions 2 --lr 99 --out "$out/broken"; [ $? -eq 1 ] || fail "a diverging run must exit 1"

"$bin" compare "$out/base/results.json" "$out/base/results.json" --threshold "$threshold" --format json >"$out/self.json"
code=$?; [ $code -eq 0 ] || fail "against itself: exit $code, want 0"
# Identical samples: the interval is centred on 0, its width the base's own spread. On a quiet
# machine that is "no change"; when the VM's noise spread the 9 repetitions wider than the
# threshold it is "inconclusive" (the right answer: the gate cannot tell at that noise). Never a
# regression or an improvement.
self_decision=$(decision "$out/self.json" steps_per_s)
case "$self_decision" in
  "no change") ;;
  inconclusive) echo "note: against itself inconclusive: the base's repetitions spread wider than $threshold" ;;
  *) fail "against itself: $self_decision, want no change (or inconclusive on a noisy machine)" ;;
esac

"$bin" compare "$out/base/results.json" "$out/slow/results.json" --threshold "$threshold" >"$out/slow.md"
code=$?; cat "$out/slow.md"; [ $code -eq 1 ] || fail "slowed candidate: exit $code, want 1"
echo "measured slowdown: $(python3 -c "print(f'{1-$(median_sps "$out/slow/results.json")/$(median_sps "$out/base/results.json"):.0%}')")"
grep -q '| `hogwild/lock-free@fork:1` |.*❌ regression' "$out/slow.md" || fail "the slowed cell is not named a regression"
grep -q "workload.step_delay_us: 0 → $delay (1 cell)" "$out/slow.md" || fail "the option difference is not summarised"

"$bin" compare "$out/base2/results.json" "$out/slow2/results.json" --format json >"$out/two.json"
code=$?; [ $code -eq 0 ] || fail "2 repetitions: exit $code, want 0 (inconclusive does not fail)"
[ "$(decision "$out/two.json" steps_per_s)" = "inconclusive" ] || fail "2 repetitions: $(decision "$out/two.json" steps_per_s), want inconclusive"
"$bin" compare "$out/base2/results.json" "$out/slow2/results.json" --strict >/dev/null
code=$?; [ $code -eq 4 ] || fail "2 repetitions with --strict: exit $code, want 4"

"$bin" compare "$out/base2/results.json" "$out/broken/results.json" --format json >"$out/broken.json"
code=$?; [ $code -eq 1 ] || fail "failing check: exit $code, want 1"
grep -q '"cell": "hogwild/lock-free@fork:1"' "$out/broken.json" || fail "the broken cell is not named"

echo '{"benchmarks": []}' >"$out/foreign.json"
echo '{"format": "sharebench-results", "schema_ver' >"$out/malformed.json"
for f in foreign malformed; do
  "$bin" compare "$out/$f.json" "$out/base/results.json" >/dev/null 2>"$out/$f.err"
  code=$?
  [ $code -eq 2 ] || fail "$f file: exit $code, want 2"
  [ "$(wc -l <"$out/$f.err")" -eq 1 ] || fail "$f file: want one line on stderr, got: $(cat "$out/$f.err")"
  "$bin" report "$out/$f.json" --format md >/dev/null 2>&1
  [ $? -eq 2 ] || fail "report of $f file must exit 2"
done
"$bin" run --scenario deadlock/same-order --start fork --procs 1 --steps 20 --format none --out "$out/other" >/dev/null
"$bin" compare "$out/base/results.json" "$out/other/results.json" >/dev/null 2>"$out/unrelated.err"
code=$?; [ $code -eq 2 ] || fail "files that share no cell: exit $code, want 2"
for t in nan -1 abc; do
  "$bin" compare "$out/base/results.json" "$out/slow/results.json" --threshold "$t" >/dev/null 2>&1
  code=$?; [ $code -eq 2 ] || fail "--threshold $t: exit $code, want 2"
done
"$bin" report "$out" --format md >/dev/null 2>&1; [ $? -eq 2 ] || fail "report of a directory must exit 2"
cat "$out/foreign.err" "$out/malformed.err" "$out/unrelated.err"
exit $status
