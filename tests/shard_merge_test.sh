#!/usr/bin/env bash
# Sharding for CI farms: three shards of a matrix, merged, hold exactly the unsharded run's cells
# in the same order; `compare` and `report` accept the merge; shards that are not one matrix are
# refused; GTEST_SHARD_INDEX / GTEST_TOTAL_SHARDS pick the same cells as --shard.
# usage: shard_merge_test.sh SHAREBENCH OUTDIR
source "$(dirname "$0")/test_lib.sh" "$@"
matrix=(--scenario locked,deadlock/same-order,ipc/cuda --start fork,spawn --procs 1,2 --steps 50 --format none)

"$bin" run --blocks 0 "${matrix[@]}" --out "$out/whole" >/dev/null 2>&1 || fail "unsharded run"
for k in 1 2 3; do
  "$bin" run --blocks 0 "${matrix[@]}" --shard "$k/3" --out "$out/shard$k" >/dev/null 2>&1 || fail "shard $k/3"
done
GTEST_SHARD_INDEX=1 GTEST_TOTAL_SHARDS=3 "$bin" run --blocks 0 "${matrix[@]}" --out "$out/gtest2" >/dev/null 2>&1 || fail "GTEST shard"
"$bin" merge "$out/shard3/results.json" "$out/shard1/results.json" "$out/shard2/results.json" --out "$out/merged" \
  || fail "merge exited $?"

ids() { python3 -c 'import json,sys; print("\n".join(c["id"] for c in json.load(open(sys.argv[1]))["cells"]))' "$1"; }
[ "$(ids "$out/whole/results.json")" = "$(ids "$out/merged/results.json")" ] \
  || fail "merged cells differ from the unsharded run's: $(diff <(ids "$out/whole/results.json") <(ids "$out/merged/results.json"))"
[ "$(ids "$out/shard2/results.json")" = "$(ids "$out/gtest2/results.json")" ] || fail "GTEST_SHARD_INDEX=1 is not --shard 2/3"
n=$(ids "$out/whole/results.json" | wc -l)
s=$(for k in 1 2 3; do ids "$out/shard$k/results.json"; done | sort | uniq | wc -l)
[ "$n" -eq "$s" ] && [ "$n" -gt 3 ] || fail "shards hold $s distinct cells, the matrix $n"

"$bin" compare "$out/whole/results.json" "$out/merged/results.json" --threshold 0.5 >"$out/compare.md"
code=$?
[ $code -eq 0 ] || fail "compare of the unsharded run against the merge: exit $code"
grep -q "$n cells paired" "$out/compare.md" || fail "compare did not pair every cell: $(head -3 "$out/compare.md")"
"$bin" report "$out/merged/results.json" --format md,junit --out "$out/merged" >/dev/null || fail "report of the merge"
"$bin" report "$out/merged/results.json" --format json 2>/dev/null \
  | python3 -c 'import json,sys; j=json.load(sys.stdin); sys.exit(0 if j["format"]=="sharebench-results" and j["merged_from"] else 1)' \
  || fail "report --format json of the merge is not the merged results file"

"$bin" merge "$out/shard1/results.json" "$out/shard2/results.json" --out "$out/partial" 2>"$out/partial.err"
[ $? -eq 2 ] && grep -q "missing" "$out/partial.err" || fail "a missing shard must be refused (exit 2): $(cat "$out/partial.err")"
"$bin" merge "$out/shard1/results.json" "$out/shard1/results.json" "$out/shard3/results.json" --out "$out/twice" 2>/dev/null
[ $? -eq 2 ] || fail "a shard given twice must be refused"
"$bin" run "${matrix[@]}" --shard 4/3 --out "$out/bad" 2>/dev/null
[ $? -eq 2 ] || fail "--shard 4/3 must exit 2"
echo "shards: $n cells in 3 shards merged back in order"
exit $status
