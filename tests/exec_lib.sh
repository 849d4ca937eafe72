# exec_lib.sh: the helpers of the exec test scripts (exec_test.sh, exec_sharing_test.sh), sourced
# after test_lib.sh. Each runs `sharebench exec` into $out/NAME and judges its results.json.
# expect NAME WANT_EXIT ARGS...: runs `exec` into $out/NAME and checks its exit code.
expect() {
  local name=$1 want=$2
  shift 2
  "$bin" exec --format none --out "$out/$name" "$@" >"$out/$name.log" 2>&1
  local code=$?
  [ "$code" -eq "$want" ] || { fail "$name: exec exited $code, want $want"; tail -30 "$out/$name.log"; }
}
# judge NAME PYTHON-ASSERTIONS: runs the assertions with `run` (its results.json) and `cells` bound.
judge() {
  "$py" - "$out/$1/results.json" "$1" "$2" <<'PY' || fail "$2"
import json, os, sys
run = json.load(open(sys.argv[1])); cells = run["cells"]
reps = range(int(os.environ.get("SB_REPS", "1")))  # the repetitions asked for (SB_REPS)
def check(cell, name, rep=0):
    return next(c for c in cell["repetitions"][rep]["checks"] if c["name"] == name)
def verdict(cell, name, rep=0):
    return check(cell, name, rep)["verdict"]
ok = eval(sys.argv[3])
if not ok:
    print(f"{sys.argv[2]}: not true: {sys.argv[3]}")
    for c in cells:
        for r in c["repetitions"]:
            print(" ", c["id"], r["status"], [(k["name"], k["verdict"], k["message"][:200]) for k in r["checks"]])
sys.exit(0 if ok else 1)
PY
}


# exec_planted_pairs REPETITIONS: what the planted-pair scripts (exec_oracles_test.sh,
# exec_races_test.sh) share, after test_lib.sh and with $src set: $py (Debian's, with torch), $progs,
# $all (every start method, REPETITIONS each; SB_REPS for judge), a working directory in $out, and
# the assertions they judge with:
#   caught CHECK TEXT PROGRAM  the check failed in every cell and repetition, saying TEXT and the program's line
#   $clean                     every cell ok, every check passing or not exercised, each with its exposure
#   exercised CHECK...         each passed with a non-zero exposure everywhere
exec_planted_pairs() {
  export SB_REPS=$1
  py=/usr/bin/python3
  "$py" -c "import torch" 2>/dev/null || { echo "FAIL: $py cannot import torch (apt-get install python3-torch; ci/setup does)"; exit 1; }
  progs="$src/tests/exec_programs"
  cd "$out" || exit 1
  all="--mp-start fork,spawn,forkserver --repetitions $SB_REPS"
  every='all(PRED for c in cells for r in reps)'
  clean='all(c["outcome"]["kind"] == "ok" and all(k["verdict"] in ("pass", "not-exercised") and "exposure" in k for k in c["repetitions"][r]["checks"]) for c in cells for r in reps)'
}
caught() {
  local pred="verdict(c, \"$1\", r) == \"fail\" and \"$2\" in check(c, \"$1\", r)[\"message\"] and \"$3:\" in check(c, \"$1\", r)[\"message\"]"
  echo "${every/PRED/$pred}"
}
exercised() {
  local names=$(printf '"%s",' "$@")
  echo "all(verdict(c, n, r) == \"pass\" and check(c, n, r)[\"exposure\"][\"count\"] > 0 for c in cells for r in reps for n in ($names))"
}
