# exec_lib.sh: the helpers of the exec test scripts (exec_test.sh, exec_sharing_test.sh, exec_oracles_test.sh,
# exec_races_test.sh), sourced after test_lib.sh. Each runs `sharebench exec` into $out/NAME and judges its results.json.
# expect NAME WANT_EXIT ARGS...: runs `exec` into $out/NAME and checks its exit code.
# With SB_START_METHODS=in-turn (the default suite's planted pairs), a run asked for under
# `--mp-start fork,spawn,forkserver` runs under one of them, the next in turn: each start method is
# still met by a third of the programs, and the slow suite's repetitions run each under all three.
start_turn=0
expect() {
  local name=$1 want=$2 args=("${@:3}") i
  if [ "${SB_START_METHODS:-every}" = in-turn ]; then
    for ((i = 0; i + 1 < ${#args[@]}; i++)); do
      [ "${args[i]}" = -- ] && break
      if [ "${args[i]}" = --mp-start ] && [ "${args[i + 1]}" = fork,spawn,forkserver ]; then
        local methods=(fork spawn forkserver)
        args[i + 1]=${methods[start_turn % 3]}
        start_turn=$((start_turn + 1))
        break
      fi
    done
  fi
  "$bin" exec --format none --out "$out/$name" "${args[@]}" >"$out/$name.log" 2>&1
  local code=$?
  [ "$code" -eq "$want" ] || { fail "$name: exec exited $code, want $want (${args[*]})"; tail -30 "$out/$name.log"; }
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


# exec_planted_pairs REPETITIONS [START_METHODS]: what the planted-pair scripts (exec_oracles_test.sh,
# exec_races_test.sh) share, after test_lib.sh and with $src set: $py (Debian's, with torch), $progs,
# $all (every start method, REPETITIONS each; SB_REPS for judge;
# START_METHODS in-turn runs each under one of them, as expect says), a working directory in $out, and
# the assertions they judge with:
#   caught CHECK TEXT PROGRAM  the check failed in every cell and repetition, saying TEXT and the program's line
#   $clean                     every cell ok, every check passing or not exercised, each with its exposure
#   exercised CHECK...         each passed with a non-zero exposure everywhere
exec_planted_pairs() {
  export SB_REPS=$1 SB_START_METHODS=${2:-every}
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
