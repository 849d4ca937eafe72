#!/usr/bin/env bash
# Resource limits too low for the planned matrix are refused before anything starts: exit 2, one
# line naming the limit, no run directory, never a hang (every run is under `timeout -s KILL`).
# A soft limit below the need but a hard limit above it is raised and the run passes; a limit
# that suffices is not refused. `exec` has the same preflight. RLIMIT_NPROC does not apply to root, so those cases run as a
# second user (made with useradd: needs root; skipped else, saying so).
# usage: resource_limits_test.sh SHAREBENCH OUTDIR
source "$(dirname "$0")/test_lib.sh" "$@"
if [ "$(id -u)" != 0 ]; then
  echo "SKIP: RLIMIT_NPROC needs a second user, and making one needs root (useradd)"
  exit 77
fi
user=sblimits
second_user "$user"
chmod 777 "$out"
second_user_reaches "$user" "$bin" "$out"
cell="run --scenario locked/whole-step --start fork --procs 1 --steps 100 --format none"

# run_limited NAME AS SECONDS SHELL-PREFIX ARGS: the run under the limit the prefix sets, as the
# second user (AS=user) or root, killed after SECONDS; its exit status, stdout and stderr in $out.
run_limited() {
  local name=$1 as=$2 seconds=$3 prefix=$4 args=$5
  local cmd="$prefix; exec $bin $args --out $out/$name"
  # exec's program comes after "--": the --out goes before it
  [[ $args == *" -- "* ]] && cmd="$prefix; exec $bin ${args%% -- *} --out $out/$name -- ${args#* -- }"
  if [ "$as" = user ]; then
    timeout -s KILL "$seconds" runuser -u "$user" -- bash -c "$cmd" >"$out/$name.out" 2>"$out/$name.err"
  else
    timeout -s KILL "$seconds" bash -c "$cmd" >"$out/$name.out" 2>"$out/$name.err"
  fi
}

# expect_refused NAME LIMIT-WORD AS SHELL-PREFIX ARGS: exit 2, one stderr line naming LIMIT-WORD.
expect_refused() {
  local name=$1 word=$2
  run_limited "$name" "$3" 60 "$4" "$5"
  local code=$?
  [ $code -eq 137 ] && fail "$name: still running after 60 s (killed): a hang"
  [ $code -eq 2 ] || fail "$name: exit $code, want 2"
  [ "$(wc -l <"$out/$name.err")" -eq 1 ] || fail "$name: want one line on stderr, got: $(cat "$out/$name.err")"
  grep -q "$word" "$out/$name.err" || fail "$name: the message does not name $word: $(cat "$out/$name.err")"
  [ -e "$out/$name" ] && fail "$name: a run directory was made for a refused run"
  echo "$name: $(cat "$out/$name.err")"
}
expect_passes() {
  local name=$1
  run_limited "$name" "$2" 120 "$3" "$4"
  local code=$?
  [ $code -eq 0 ] || fail "$name: exit $code, want 0: $(tail -5 "$out/$name.err")"
  echo "$name: exit $code"
}

expect_refused nproc-3 RLIMIT_NPROC user "ulimit -u 3" "$cell"
expect_refused nproc-6 RLIMIT_NPROC user "ulimit -u 6" "$cell"
expect_refused nproc-wide RLIMIT_NPROC user "ulimit -u 40" "run --scenario locked/whole-step --start spawn --procs 8 --steps 100 --format none"
expect_refused soak-nproc RLIMIT_NPROC user "ulimit -u 6" "soak --cells 2 --format none"
expect_refused nofile-6 RLIMIT_NOFILE root "ulimit -n 6" "$cell"
expect_refused nofile-threads RLIMIT_NOFILE root "ulimit -n 200" "run --scenario locked/whole-step --start thread --procs 64 --steps 10 --format none"
# Two more tasks of the user alive under `ulimit -u 3`: OpenBLAS's constructor (before main) could
# not start its pool, and even `list` died there. The binary now re-executes itself with one BLAS
# thread under a low limit: `list` works and `run` is refused by the preflight, one line.
hold="sleep 20 & sleep 20 & ulimit -u 3"
timeout -s KILL 60 runuser -u "$user" -- bash -c "$hold; exec $bin list" >"$out/nproc-3-busy-list.out" \
  2>"$out/nproc-3-busy-list.err"
code=$?
[ $code -eq 0 ] || fail "nproc-3-busy-list: exit $code, want 0: $(head -3 "$out/nproc-3-busy-list.err")"
grep -q "^a3c:" "$out/nproc-3-busy-list.out" || fail "nproc-3-busy-list: no scenario listed"
grep -q "pthread_create failed" "$out/nproc-3-busy-list.err" && fail "nproc-3-busy-list: OpenBLAS still failed to start its pool"
expect_refused nproc-3-busy RLIMIT_NPROC user "$hold" "$cell"
# exec has run's preflight: the limit is refused with one line, not blamed on the program ("fork failed").
expect_refused exec-nproc-3 RLIMIT_NPROC user "ulimit -u 3" "exec --format none -- /bin/true"
expect_refused exec-nofile-6 RLIMIT_NOFILE root "ulimit -n 6" "exec --format none -- /bin/true"
expect_passes nproc-enough user "ulimit -u 100" "$cell"
expect_passes nofile-soft-raised root "ulimit -Sn 20" "run --scenario locked/whole-step,averaging/params-gloo --start fork,thread --procs 4 --steps 100 --blocks 0 --format none"
exit $status
