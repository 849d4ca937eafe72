#!/usr/bin/env bash
# Every run flag that changes a cell survives the round trip: a run with the flag makes an
# unexpected cell; `repro --dry-run` of that cell prints a command; running the command stores
# exactly the same cell config and fails the same way. A flag `run --help` lists that this test
# has no sample value for fails the test: a new flag cannot skip the round trip.
# usage: repro_roundtrip_test.sh SHAREBENCH OUTDIR
source "$(dirname "$0")/test_lib.sh" "$@"

# Not cell options: the matrix axes (every reproduce line names them), how many repetitions, and
# run-level output flags.
not_cell=" --scenario --start --procs --known-bugs --repetitions --blocks --budget --interval --tie-margin --shard --out --format --color --help "
# --input-shape and --input-dtype only go with a TorchScript --model: model_test.sh runs them.
not_cell+=" --input-shape --input-dtype "
declare -A sample=(
  [--steps]=150 [--seed]=7 [--batch]=16 [--lr]=0.02 [--momentum]=0.5 [--hidden]=64 [--threads]=2
  [--average-every]=5 [--sync-every]=3 [--step-delay-us]=10 [--hang-timeout]=7.5 [--deadline]=90 [--fault]=kill:1@5
  [--arena-mb]=64 [--max-growth-mb]=48 [--model]=convnet-s [--chaos]=5 [--stacks]=proc [--disable-check]=mutual-exclusion,lost-updates
)
flags=$("$bin" run --help | grep -oE '^\s+--[a-z][a-z-]*' | tr -d ' ' | sort -u)
[ -n "$flags" ] || fail "run --help listed no flags"
for flag in $flags; do
  case "$not_cell" in *" $flag "*) continue ;; esac
  [ -n "${sample[$flag]:-}" ] || fail "run flag $flag has no round-trip sample in this test"
done

same_config() {  # A B: the first cell's stored config is identical in both results files
  python3 - "$1" "$2" <<'PY'
import json, sys
a, b = (json.load(open(p))["cells"][0]["config"] for p in sys.argv[1:3])
if a != b:
    print("  stored:   ", json.dumps(a, sort_keys=True)); print("  repro ran:", json.dumps(b, sort_keys=True))
    sys.exit(1)
PY
}

# An unexpected cell: the planted lock bug with the check that catches it switched off. Under a
# fault (clean variants only) the harness's liveness check is switched off instead.
bug=(--scenario locked/local-lock --start fork --procs 2 --steps 100 --disable-check mutual-exclusion --format none)
faulted=(--scenario locked/whole-step --start fork --procs 2 --steps 100 --disable-check liveness --format none)
"$bin" run "${bug[@]}" --out "$out/plain" >/dev/null 2>&1
for flag in "${!sample[@]}"; do
  value=${sample[$flag]}
  name=${flag#--}
  args=("${bug[@]}")
  [ "$flag" = --fault ] && args=("${faulted[@]}")
  [ "$flag" = --disable-check ] && args=("${bug[@]:0:8}" --format none)
  "$bin" run "${args[@]}" "$flag" "$value" --out "$out/$name" >"$out/$name.log" 2>&1
  code=$?
  [ $code -eq 1 ] || { fail "$flag $value: the run exited $code, want 1 (an unexpected cell)"; continue; }
  if [ "$flag" != --fault ] && [ "$flag" != --disable-check ] && same_config "$out/plain/results.json" "$out/$name/results.json" >/dev/null; then
    fail "$flag $value did not change the stored config"
  fi
  cell=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cells"][0]["id"])' "$out/$name/results.json")
  line=$("$bin" repro "$out/$name/results.json" "$cell" --dry-run)
  eval "$line --out '$out/$name-again' --format none" >"$out/$name-again.log" 2>&1
  again=$?
  [ $again -eq 1 ] || fail "$flag: the repro command exited $again, want 1: $line"
  if same_config "$out/$name/results.json" "$out/$name-again/results.json"; then
    echo "ok: $flag $value -> $line"
  else
    fail "$flag $value: repro re-created a different config"
  fi
done
exit $status
