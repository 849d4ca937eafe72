#!/usr/bin/env bash
# A hostile neighbour: another local user, while a run is live, tries every way in that a run
# offers (tests/security_neighbour.py): it connects to and floods every Unix socket and every
# loopback TCP listener it can see, binds the abstract names and plants the /tmp symlinks an older
# sharebench used, and tries to enter the run's private directories. Every cell must stay as
# expected (exit 0), no Unix socket of the run may accept it, and a file a planted symlink pointed
# at must be untouched. Gloo's pairs listen on loopback TCP, which c10d treats as trusted: the
# Gloo cells face every attack but that one (docs/security.md).
# Needs root to make the second user (useradd); without root it is skipped, saying so.
# usage: security_test.sh SHAREBENCH OUTDIR SOURCE_DIR
source "$(dirname "$0")/test_lib.sh" "$@"
src=$3
if [ "$(id -u)" != 0 ]; then
  echo "SKIP: making a second user needs root (useradd); run this test as root"
  exit 77
fi
neighbour=sbneighbour
second_user "$neighbour"
chmod 755 "$out"
cp "$src/tests/security_neighbour.py" "$out/neighbour.py" && chmod 644 "$out/neighbour.py"
second_user_reaches "$neighbour" "$out/neighbour.py"
victim=$out/victim  # what a planted symlink points at: it must stay empty
: >"$victim" && chmod 644 "$victim"

# run_with_neighbour NAME SCENARIOS [NEIGHBOUR OPTIONS]: the cells, with the neighbour at work
# meanwhile; several repetitions, so the neighbour has time to find every endpoint.
run_with_neighbour() {
  local name=$1 scenarios=$2
  shift 2
  "$bin" run --blocks 0 --scenario "$scenarios" --start fork,spawn,forkserver --procs 2 --repetitions 2 \
    --out "$out/$name" --format console >"$out/$name.log" 2>&1 &
  local runner=$!
  sleep 0.3
  runuser -u "$neighbour" -- python3 "$out/neighbour.py" "$runner" "$victim" "$@" >"$out/$name-neighbour.log" 2>&1 &
  local prober=$!
  wait $runner
  local code=$?
  kill $prober 2>/dev/null
  wait $prober 2>/dev/null
  local last
  last=$(grep "^attempts:" "$out/$name-neighbour.log" | tail -1)
  echo "$name: neighbour's $last"
  [ $code -eq 0 ] || { tail -30 "$out/$name.log"; fail "$name: the run exited $code with a neighbour at work, want 0"; }
  grep -q "^attempts: [1-9]" <<<"$last" || fail "$name: the neighbour made no attempt: the test proves nothing"
  grep -q "'unix-connected': 0," <<<"$last" || fail "$name: the neighbour connected to a Unix socket of the run"
  grep -q "'private-dir-entered': 0" <<<"$last" || fail "$name: the neighbour listed a private directory"
  python3 - "$out/$name/results.json" <<'PY' || status=1
import json, sys
run = json.load(open(sys.argv[1]))
bad = [c["id"] for c in run["cells"] if c["outcome"]["kind"] not in ("ok", "skipped")]
if bad: print("FAIL: disturbed cells:", bad); sys.exit(1)
print(f"  {len(run['cells'])} cells, none disturbed")
PY
}
# Unix-socket and shared-memory transports: every attack, TCP flooding included.
run_with_neighbour sockets ipc/fd-reuse,ipc/named-fresh,averaging/params-pipe
# Gloo: the rendezvous (a FileStore in the private directory) against squatting, symlinks and
# connections; its pairs' loopback TCP ports are c10d's trusted network and are left alone.
run_with_neighbour gloo averaging/params-gloo,averaging/grads-gloo --no-tcp
[ -s "$victim" ] && fail "a planted symlink's target was written to"

# Squatting: the neighbour makes, first, every /dev/shm name a run would make if names followed from
# the runner's pid alone ("sharebench-<pid>-ipc-<cell>-<size>-<slot>"); O_EXCL would then fail the
# cell ("File exists"). Names carry a random part drawn per run, so the cells run as usual.
"$bin" run --blocks 0 --scenario ipc/named-fresh,model-ipc/named --start fork,spawn --procs 2 --repetitions 2 \
  --out "$out/squat" --format console >"$out/squat.log" 2>&1 &
runner=$!
runuser -u "$neighbour" -- python3 - "$runner" >"$out/squat-neighbour.log" 2>&1 <<'PY' &
import os, sys
pid = sys.argv[1]
made = 0
for cell in range(8):
    for size in range(6):
        for slot in range(10):
            for name in ("sharebench-%s-ipc-%d-%d-%d" % (pid, cell, size, slot),
                         "sharebench-%s-model-ipc-%d-%d" % (pid, cell, slot)):
                try:
                    os.close(os.open("/dev/shm/" + name, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
                    made += 1
                except OSError:
                    pass
print("squatted", made)
PY
squatter=$!
wait $runner
code=$?
wait $squatter
grep -q "squatted [1-9]" "$out/squat-neighbour.log" || fail "the squatter made no name: the test proves nothing ($(cat "$out/squat-neighbour.log"))"
[ $code -eq 0 ] || { tail -20 "$out/squat.log"; fail "squat: the run exited $code with its pid-derived names taken, want 0"; }
find /dev/shm -maxdepth 1 -user "$neighbour" -name "sharebench-$runner-*" -delete
exit $status
