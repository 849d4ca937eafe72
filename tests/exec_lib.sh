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

