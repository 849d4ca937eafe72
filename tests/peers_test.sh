#!/usr/bin/env bash
# `sharebench peers` for real, small: bad input refused with one sentence (a strategy without a peer,
# the thread start method, a Python without torch, a baseline of another kind); one round of
# read-only inference at 1 and 2 processes beside the real torch.multiprocessing program, with
# both figures, the ratio and the scaling in peers.json and on the console; then the gate's
# decision on that very run against two baselines made from it: one whose ratios are a hundredth
# passes, one whose ratios are a hundred times as high fails (exit 1, the rows named REGRESSED).
# usage: peers_test.sh SHAREBENCH OUTDIR
source "$(dirname "$0")/test_lib.sh" "$@"
py=/usr/bin/python3

refused() {  # refused WORDS ARGS...: `peers ARGS` exits 2 with WORDS on stderr
  local words=$1; shift
  "$bin" peers "$@" --out "$out/refused" 2>"$out/refused.err" >/dev/null
  local rc=$?
  [ "$rc" = 2 ] || fail "peers $* exited $rc, not 2"
  grep -q -- "$words" "$out/refused.err" || fail "peers $*: stderr lacks '$words': $(cat "$out/refused.err")"
  [ "$(wc -l <"$out/refused.err")" = 1 ] || fail "peers $*: more than one line on stderr"
}
refused "no peer program is written for it" --scenario ipc/fd-reuse
refused "no thread start method" --scenario hogwild/lock-free --start thread
refused "needs a Python with torch" --scenario hogwild/lock-free --python /bin/true
refused "not found or not executable" --scenario hogwild/lock-free --python /nonexistent/python3
echo '{"kind": "sharebench-results"}' >"$out/foreign.json"
refused "not a peers file" --scenario hogwild/lock-free --baseline "$out/foreign.json"

"$bin" peers --scenario inference/read-only --procs 1,2 --rounds 1 --steps 400 --python "$py" --out "$out/run" \
  >"$out/console.txt" 2>"$out/stderr.txt" || fail "peers exited $?: $(tail -3 "$out/stderr.txt")"
cat "$out/console.txt"
"$py" - "$out/run/peers.json" <<'EOF' || fail "peers.json is not what it should be"
import json, sys
run = json.load(open(sys.argv[1]))
assert run["kind"] == "sharebench-peers" and run["schema"] == 1, run.get("kind")
rows = run["rows"]
assert [(r["cell"], r["procs"]) for r in rows] == [("inference/read-only", 1), ("inference/read-only", 2)], rows
for r in rows:
    assert "error" not in r, r["error"]
    s = r["summary"]
    assert s["rounds"] == 1 and s["sharebench_steps_per_s"] > 0 and s["peer_steps_per_s"] > 0, s
    assert abs(s["ratio"] - s["sharebench_steps_per_s"] / s["peer_steps_per_s"]) < 1e-9, s
scaling = run["scaling_1_to_2"]
assert len(scaling) == 1 and scaling[0]["sharebench"] > 0 and scaling[0]["peer"] > 0, scaling
assert run["environment"]["peer_python"] == "/usr/bin/python3", run["environment"].get("peer_python")
assert run["overall_ratio"] > 0
EOF
grep -q "scaling from 1 process to 2" "$out/console.txt" || fail "the console has no scaling line"
grep -q "^inference/read-only" "$out/console.txt" || fail "the console has no row"
[ -s "$out/run/peers.md" ] || fail "no peers.md"

# Baselines made from the run itself, so the decision is certain whatever the machine does.
scaled_baseline() {  # scaled_baseline FACTOR FILE: every sharebench figure multiplied by FACTOR
  "$py" - "$out/run/peers.json" "$1" "$2" <<'EOF'
import json, sys
run = json.load(open(sys.argv[1]))
for r in run["rows"]:
    for round_ in r["rounds"]:
        round_["sharebench_steps_per_s"] *= float(sys.argv[2])
json.dump(run, open(sys.argv[3], "w"))
EOF
}
# The judged run is a fresh one, beside whatever else the machine runs (ctest -j2): one round of 400
# steps moved a ratio by 4x there. The baselines sit at a hundredth and a hundred times the first
# run's ratios, so the decision is the gate's wiring, not the machine's mood.
scaled_baseline 0.01 "$out/lower.json"
scaled_baseline 100 "$out/higher.json"
"$bin" peers --scenario inference/read-only --procs 1,2 --rounds 1 --steps 400 --python "$py" --out "$out/judged-low" \
  --baseline "$out/lower.json" >"$out/low.txt" 2>/dev/null
rc=$?
[ $rc = 0 ] || fail "against a baseline a hundredth as high, peers exited $rc, not 0: $(cat "$out/low.txt")"
grep -q "no ratio fell beyond its tolerance" "$out/low.txt" || fail "no passing verdict: $(cat "$out/low.txt")"
"$bin" peers --scenario inference/read-only --procs 1,2 --rounds 1 --steps 400 --python "$py" --out "$out/judged-high" \
  --baseline "$out/higher.json" >"$out/high.txt" 2>/dev/null
rc=$?
[ $rc = 1 ] || fail "against a baseline a hundred times as high, peers exited $rc, not 1: $(cat "$out/high.txt")"
[ "$(grep -c REGRESSED "$out/high.txt")" -ge 2 ] || fail "the regressed rows are not named: $(cat "$out/high.txt")"
exit $status
