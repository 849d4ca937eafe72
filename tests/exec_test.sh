#!/usr/bin/env bash
# `sharebench exec` on real programs: examples/python (the patterns of PyTorch's multiprocessing notes and their broken twins,
# with Debian's python3-torch) and small shell commands. Every broken program must be caught by
# the check named for it, under every start method it is broken under, and every clean one pass.
# usage: exec_test.sh SHAREBENCH OUTDIR SOURCE_DIR
source "$(dirname "$0")/test_lib.sh" "$@"
src=$3
py=/usr/bin/python3  # Debian's, with python3-torch (ci/setup installs it); not a python3 earlier on PATH
"$py" -c "import torch" 2>/dev/null || { echo "FAIL: $py cannot import torch (apt-get install python3-torch; ci/setup does)"; exit 1; }
ex="$src/examples/python"
cd "$out"

source "$(dirname "$0")/exec_lib.sh"

# --- Hogwild under every start method: passes, with steps/s from the progress module, memory per
# process, no leaks. ---------------------------------------------------------------------------------
# 1 000 steps a worker, not the example's 300: a fork child of 300 steps lives about 0.4 s, and on
# a 2-core VM loaded by the suites beside this one the supervisor's 50 ms scans once saw neither
# child in that time (docs/exec.md: a process must be alive at a scan to be in the table). A Python
# child now wakes the supervisor as it starts (next case); a scan brought forward by a birth once
# waited out the settled pace's 100 ms poll, and both children went unseen again.
expect hogwild 0 --mp-start fork,spawn,forkserver -- "$py" "$ex/hogwild.py" --steps 1000
judge hogwild 'len(cells) == 3 and all(c["outcome"]["kind"] == "ok" for c in cells)'
judge hogwild 'all(c["repetitions"][0]["metrics"]["steps_total"] == 2000 and c["repetitions"][0]["metrics"]["steps_per_s"] > 0 for c in cells)'
judge hogwild 'all(verdict(c, n) == "pass" for c in cells for n in ("exit-status", "no-survivors", "shm-reclaimed", "no-leaks", "liveness"))'
judge hogwild 'all(sum(p["role"] == "child" and p["uss_mb_peak"] > 0 and p["steps"] == 1000 for p in c["repetitions"][0]["processes"]) == 2 for c in cells)'
judge hogwild '[sum(p["role"] == "helper" for p in c["repetitions"][0]["processes"]) for c in cells] == [0, 1, 2]'
"$bin" report "$out/hogwild/results.json" --format console >"$out/hogwild.console"
grep -q "Processes of exec/hogwild.py@spawn:1" "$out/hogwild.console" || fail "the console report has no process table"
# What exec checked, one line a check with what it saw, failures first.
grep -qE "^  pass +updates-shared +2 modules received by children that trained them" "$out/hogwild.console" ||
  fail "the console report has no line per check with its exposure"

# --- A Python process is in the table however short its life: it wakes the supervisor as it starts
# (a byte into the births FIFO beside its stacks file), even after a second of a still tree, when
# the supervisor scans /proc only every 250 ms. Three forked children of 30 ms each, with the
# checks off (their hooks would report them otherwise): each one a row with its memory read. ------
cat >"$out/short_children.py" <<'PY'
import os, time
time.sleep(1.0)  # the tree is still: the supervisor is at its slow pace
for k in range(3):
    pid = os.fork()
    if pid == 0:
        start = time.monotonic()
        while time.monotonic() - start < 0.03:
            pass
        os._exit(0)
    os.waitpid(pid, 0)
    time.sleep(0.6)
PY
expect short_children 0 --sharing-checks off -- "$py" "$out/short_children.py"
judge short_children 'sum(p["role"] == "child" and p["python"] and p["uss_mb_peak"] > 0 for p in cells[0]["repetitions"][0]["processes"]) == 3'

# --- The hooks load from the .pyc the build compiled (no interpreter compiles them again): it lies
# beside them in __pycache__ and holds their sources' hash, so Python takes it as it is. ------------
tag=$("$py" -c "import sys; print(sys.implementation.cache_tag)")
if [ -f "$(dirname "$bin")/generated/sharebench_watch.$tag.pyc" ]; then
  cat >"$out/hooks_cached.py" <<'PY'
import importlib.util, sys
import sharebench_watch
cached = importlib.util.cache_from_source(sharebench_watch.__file__)
with open(cached, "rb") as f, open(sharebench_watch.__file__, "rb") as source:
    pyc = f.read()
    valid = pyc[:4] == importlib.util.MAGIC_NUMBER and pyc[8:16] == importlib.util.source_hash(source.read())
with open(sys.argv[1], "w") as out:
    out.write("%s %s\n" % (cached, valid))
PY
  expect hooks_cached 0 -- "$py" "$out/hooks_cached.py" "$out/hooks_cached.txt"
  grep -q "/__pycache__/sharebench_watch.$tag.pyc True" "$out/hooks_cached.txt" ||
    fail "the hooks' compiled .pyc is not beside them, or not for their sources: $(cat "$out/hooks_cached.txt")"
else
  echo "note: the build compiled no hooks for $py ($tag): the .pyc check is left out"
fi

# --- Fork after OpenMP: a hang under fork, with Python and native stacks; clean under spawn and
# forkserver. ----------------------------------------------------------------------------------------
expect omp 1 --mp-start fork,spawn,forkserver --hang-timeout 5 -- "$py" "$ex/fork_after_openmp.py"
judge omp '[c["repetitions"][0]["status"] for c in cells] == ["hang", "completed", "completed"]'
judge omp '[c["outcome"]["kind"] for c in cells] == ["unexpected", "ok", "ok"]'
judge omp 'any("in work" in p["python_stack"] for p in cells[0]["repetitions"][0]["processes"] if p["role"] == "child")'
judge omp 'any("in join" in p["python_stack"] for p in cells[0]["repetitions"][0]["processes"] if p["role"] == "program")'
if command -v gdb >/dev/null; then
  judge omp 'any("libgomp" in p["native_stack"] for p in cells[0]["repetitions"][0]["processes"] if p["role"] == "child")'
fi
judge omp 'cells[0]["repetitions"][0]["wall_s"] < 60'

# --- A dead producer: the parent blocked in q.get() is a hang, its Python stack in the queue read;
# nothing is left. Its twin ends (exit 1, "the producer died") and passes. ----------------------------
expect dead 1 --fault kill:child@1 --hang-timeout 5 -- "$py" "$ex/dead_producer.py"
judge dead 'cells[0]["repetitions"][0]["status"] == "hang" and verdict(cells[0], "fault-injected") == "pass"'
judge dead 'any("queues.py" in p["python_stack"] and "in get" in p["python_stack"] for p in cells[0]["repetitions"][0]["processes"] if p["role"] == "program")'
judge dead 'verdict(cells[0], "no-leaks") == "pass" and verdict(cells[0], "shm-reclaimed") == "pass"'
pgrep -f "$ex/dead_producer.py" >/dev/null && fail "a process of dead_producer.py is still alive"
expect dead_handled 0 --fault kill:child@1 --hang-timeout 5 -- "$py" "$ex/dead_producer_handled.py"
judge dead_handled 'cells[0]["outcome"]["kind"] == "fault-handled" and "producer died" in check(cells[0], "exit-status")["message"]'

# --- A daemonised grandchild: reported, then killed. -------------------------------------------------
expect daemon 1 -- "$py" "$ex/daemon_grandchild.py"
judge daemon 'verdict(cells[0], "no-survivors") == "fail" and "outlived the program" in check(cells[0], "no-survivors")["message"]'
daemon_pid=$("$py" -c "import json,sys; print(next(p['pid'] for p in json.load(open(sys.argv[1]))['cells'][0]['repetitions'][0]['processes'] if 'outlived' in p['end']))" "$out/daemon/results.json")
if [ -z "$daemon_pid" ]; then
  fail "no process of daemon_grandchild.py is recorded as having outlived the program"
elif kill -0 "$daemon_pid" 2>/dev/null; then
  fail "the daemon (pid $daemon_pid) is still alive"
fi

# --- Lost updates: a threading.Lock across processes, caught by the program's own check in every
# repetition under every start method; its twin with multiprocessing.Lock exact. --------------------
expect thread_lock 1 --mp-start fork,spawn,forkserver --repetitions 2 -- "$py" "$ex/thread_lock_counter.py"
judge thread_lock 'all(verdict(c, "exit-status", r) == "fail" and "lost" in check(c, "exit-status", r)["message"] for c in cells for r in (0, 1))'
expect mp_lock 0 --mp-start fork,spawn,forkserver -- "$py" "$ex/locked_counter.py"

# --- Parameter averaging over Gloo (torch.distributed): the replicas agree, under every start method.
expect averaging 0 --mp-start fork,spawn,forkserver -- "$py" "$ex/param_averaging.py"
judge averaging 'all("replicas differ by at most 0 " in c["repetitions"][0]["workers"][0]["stderr_tail"] for c in cells)'

# --- A stall shorter than the hang timeout: injected, and the program ends as usual. ------------------
expect stall 0 --fault stall:child@0.5+1 --hang-timeout 5 -- "$py" "$ex/dead_producer_handled.py"
judge stall 'verdict(cells[0], "fault-injected") == "pass" and "SIGSTOP for 1 s" in check(cells[0], "fault-injected")["message"] and verdict(cells[0], "exit-status") == "pass"'

# --- A segment leaked by a killed producer: named with the process that used it, then removed. The
# twin, whose segment the resource tracker reclaims, leaves nothing. ---------------------------------
# Only segments these two runs leave count: one another run (or a test killed earlier) left is not theirs.
psm_before=$(ls /dev/shm | grep '^psm_' | sort || true)
expect shm_untracked 1 --mp-start fork,spawn,forkserver --fault kill:child@1 -- "$py" "$ex/shm_handoff_untracked.py"
judge shm_untracked 'all(verdict(c, "shm-reclaimed") == "fail" and "psm_" in check(c, "shm-reclaimed")["message"] and "used by pid" in check(c, "shm-reclaimed")["message"] for c in cells)'
expect shm_tracked 0 --mp-start fork,spawn,forkserver --fault kill:child@1 -- "$py" "$ex/shm_handoff.py"
left=$(comm -13 <(printf '%s\n' "$psm_before") <(ls /dev/shm | grep '^psm_' | sort || true) | grep . || true)
[ -z "$left" ] || fail "psm_ segments left in /dev/shm: $left"

# --- Without beats, CPU time is progress: a sleeper hangs, a busy loop does not. Beats from a shell. -
expect sleeper 1 --hang-timeout 1 -- sleep 30
judge sleeper 'cells[0]["repetitions"][0]["status"] == "hang" and "no CPU time" in cells[0]["repetitions"][0]["status_message"]'
expect busy 0 --hang-timeout 1 -- "$py" -c "import time; t = time.time()
while time.time() - t < 2.5: pass"
expect shell_beats 0 --hang-timeout 2 -- sh -c 'for i in 1 2 3 4 5; do echo "$$ $i" >> "$SHAREBENCH_PROGRESS"; sleep 0.2; done'
judge shell_beats 'cells[0]["repetitions"][0]["metrics"]["steps_total"] == 5'
# --- How the program is started (vfork, wings/exec/program_launch.h): in a process group of its own,
# stdin on /dev/null, no signal blocked or ignored that a program expects to have; and an execve
# that fails in the child (an interpreter that is not there) is said, not mistaken for the program.
# The masks are read by grep of its own, exec'd by the shell: a shell waiting for a child may block
# every signal for a moment (dash does), and reading its status then would see that.
expect started 0 -- sh -c 'set -- $(cat /proc/$$/stat); echo "pid=$1 pgrp=$5" > started.txt
echo "stdin=$(readlink /proc/$$/fd/0)" >> started.txt; exec grep -E "^Sig(Blk|Ign):" /proc/self/status >> started.txt'
grep -qE "^pid=([0-9]+) pgrp=\1$" started.txt || fail "the program is not its own process group's leader: $(cat started.txt)"
grep -q "^SigBlk:[[:space:]]*0*$" started.txt || fail "the program started with signals blocked: $(cat started.txt)"
ignored=$(sed -n 's/^SigIgn:[[:space:]]*//p' started.txt)
# SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGTERM, SIGCHLD: bits 0, 1, 2, 12, 14, 16 of the mask.
(( (16#${ignored:-0} & 0x15007) == 0 )) || fail "the program started with HUP/INT/QUIT/PIPE/TERM/CHLD ignored: $ignored"
grep -q "^stdin=/dev/null$" started.txt || fail "the program's stdin is not /dev/null: $(cat started.txt)"
printf '#!/nonexistent/interpreter\n' >"$out/no_interpreter.sh" && chmod +x "$out/no_interpreter.sh"
expect no_interpreter 1 -- "$out/no_interpreter.sh"
judge no_interpreter 'cells[0]["repetitions"][0]["status"] == "worker-failed" and "cannot run " in cells[0]["repetitions"][0]["status_message"] and "No such file or directory" in cells[0]["repetitions"][0]["status_message"]'
# The C header: the same channel.
cat >"$out/beat.c" <<'C'
#include <sharebench/progress.h>
#include <unistd.h>
int main(void) { for (long long i = 1; i <= 4; ++i) { sharebench_progress_beat(i); usleep(100000); } return 0; }
C
mkdir -p "$out/include/sharebench" && cp "$src/wings/exec/progress.h" "$out/include/sharebench/"
if cc -I"$out/include" -o "$out/beat" "$out/beat.c"; then
  expect c_beats 0 --hang-timeout 2 -- "$out/beat"
  judge c_beats 'cells[0]["repetitions"][0]["metrics"]["steps_total"] == 4'
else
  fail "the C progress header does not compile"
fi

# --- The reproduce line replays the cell; bad input is one line and exit 2. -------------------------
"$bin" repro "$out/omp/results.json" exec/fork_after_openmp.py@spawn:1 --dry-run >"$out/repro.txt" 2>&1
grep -q -- "exec --mp-start spawn --workdir $out --hang-timeout 5 -- $py $ex/fork_after_openmp.py" "$out/repro.txt" ||
  fail "repro line: $(cat "$out/repro.txt")"
bad() {
  local what=$1
  shift
  "$bin" "$@" >"$out/bad.out" 2>"$out/bad.err"
  local code=$?
  [ $code -eq 2 ] && [ "$(wc -l <"$out/bad.err")" -eq 1 ] || fail "$what: exit $code, stderr: $(cat "$out/bad.err")"
}
bad "a missing program" exec -- no-such-program-anywhere
bad "a rank fault under exec" exec --fault kill:1@20 -- true
bad "a tree fault under run" run --scenario locked --fault kill:child@1
bad "the exec scenario under run" run --scenario exec
bad "a thread start method" exec --mp-start thread -- true
bad "a bad workdir" exec --workdir /no/such/dir -- true
bad "no command" exec
exit $status
