#!/usr/bin/env bash
# Hostile and unlucky conditions, fourth round: each case below broke before and must now hold.
#   1. a results file with a 100 000-level array inside a cell's config: report, compare, merge
#      and repro crashed by stack overflow (SIGSEGV); now each refuses it with one line, exit 2
#   3. two runs into one --out overwrote each other silently; now the second is refused, naming
#      the run that holds the folder, and the first's results are whole
#   5. Ctrl-C in the first cell's setup was lost while the runner ran `sh -c "command -v gdb"`
#      (SIGINT ignored by std::system): the run went on and exited 0. Now no delay gives exit 0
#   4. another user's symlink given as --out was followed into a root-only folder; a runs/ folder
#      another user owns took root's run. Now both are refused with one line, exit 2
#   5. INT or TERM sent to one fork worker was absorbed (the runner's flag-setting handler,
#      inherited): the cell passed. Now the worker dies of it and the cell says so, as under spawn
#   5. SIGKILL to a run's whole process group left /tmp/sharebench-forkserver-XXXX/socket, a name
#      without the runner's pid, which no later run's sweep removed. Now the next run removes it
#   5. TERM while the reports were written was swallowed: exit 0. Now it stops the writing: 143
#   4. a program's printed secrets (API_TOKEN=...) were readable by every user in results.json and
#      the reports. Now an exec run's folder is 0700 and its files 0600 (0755/0644 when asked, with
#      exec --readable-results); a run's stay 0755/0644
#   5. INT, TERM or HUP sent to exec's supervisor: recorded as its death by that signal, the
#      program gone with it
#   7. report.md and report.html carried a program's raw terminal escapes (ESC]0;...BEL, ESC[2J)
#   2. a disk that filled mid-run left results.json saying "running" and exited 3 ("internal
#      error"); a full disk at start and a results.json that is a directory exited 3 too. Now:
#      exit 2 with one line naming the path, and the results file says the run stopped and why
# (A throwing detector, case 8, is Detectors.AThrowingDetectorIsItsOwnChecksUnknownAndTheRestStillRun.)
# usage: hardening_fourth_test.sh SHAREBENCH OUTDIR
source "$(dirname "$0")/test_lib.sh" "$@"
py=/usr/bin/python3
cd "$out"

# --- 1. nesting deep inside a results file -------------------------------------------------------
"$bin" run --scenario locked/whole-step --start fork --procs 1 --steps 50 --out "$out/base" --format none \
  >/dev/null 2>&1 || fail "the base run failed"
"$py" - "$out/base/results.json" "$out/deep.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
text = json.dumps(run)
marker = '"options": {}'
assert marker in text, "no empty options object to nest into"
open(sys.argv[2], "w").write(text.replace(marker, '"options": {"x": ' + "[" * 100000 + "]" * 100000 + "}", 1))
PY
cell=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["cells"][0]["id"])' "$out/base/results.json")
exit_is 2 "report of a deeply nested results file" "$bin" report "$out/deep.json"
exit_is 2 "compare against a deeply nested results file" "$bin" compare "$out/deep.json" "$out/base/results.json"
exit_is 2 "merge of a deeply nested results file" "$bin" merge "$out/deep.json" "$out/base/results.json" --out "$out/merged"
exit_is 2 "repro from a deeply nested results file" "$bin" repro "$out/deep.json" "$cell"
grep -q "nested more than" "$out/last.err" || fail "the refusal does not say why: $(cat "$out/last.err")"

# --- 3. one run per output folder ----------------------------------------------------------------
"$bin" run --scenario locked/whole-step --start fork --procs 2 --steps 20000 --out "$out/shared" --format none \
  >"$out/first.log" 2>&1 &
first=$!
for _ in $(seq 100); do [ -f "$out/shared/results.json" ] && break; sleep 0.1; done
exit_is 2 "a second run into a folder a run is writing" \
  "$bin" run --scenario hogwild/lock-free --start fork --procs 1 --steps 50 --out "$out/shared" --format none
grep -q "in use by another run (pid $first)" "$out/last.err" || fail "the refusal does not name the run: $(cat "$out/last.err")"
wait $first || fail "the first run failed: $(tail -3 "$out/first.log")"
"$py" - "$out/shared/results.json" <<'PY' || fail "the first run's results are not whole"
import json, sys
run = json.load(open(sys.argv[1]))
ids = [c["id"] for c in run["cells"]]
assert run["status"] == "complete" and ids == ["locked/whole-step@fork:2"], (run["status"], ids)
PY
exit_is 0 "a run into the folder once the first has ended" \
  "$bin" run --scenario hogwild/lock-free --start fork --procs 1 --steps 50 --out "$out/shared" --format none

# --- 5. Ctrl-C at every moment of the start ------------------------------------------------------
# From Python: a background job of this shell would start with SIGINT ignored.
"$py" - "$bin" "$out/sigint" <<'PY' || fail "a SIGINT early in a run was lost"
import shutil, signal, subprocess, sys, time
binary, where = sys.argv[1], sys.argv[2]
lost = []
for delay in (0.01, 0.03, 0.06, 0.1, 0.15, 0.2, 0.3, 0.4, 0.6, 0.9):
    shutil.rmtree(where, ignore_errors=True)
    p = subprocess.Popen([binary, "run", "--scenario", "locked/whole-step,hogwild/lock-free", "--start", "fork,spawn",
                          "--procs", "2", "--steps", "3000", "--out", where, "--format", "none"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(delay)
    p.send_signal(signal.SIGINT)
    code = p.wait(timeout=60)
    # 130: the handler ran and kept what was done; -2: SIGINT killed it before the handler was in
    # place (nothing was begun). 0 or anything else: the interrupt was lost.
    if code not in (130, -signal.SIGINT):
        lost.append((delay, code))
print("SIGINT at 10 delays from 10 ms to 0.9 s:", "lost at " + str(lost) if lost else "every one honoured")
sys.exit(1 if lost else 0)
PY

# --- 4. paths another user controls -------------------------------------------------------------
if [ "$(id -u)" -eq 0 ]; then
  second_user sbneighbour
  mkdir -p "$out/root-only" && chmod 700 "$out/root-only"
  ln -s "$out/root-only" "$out/their-link" && chown -h sbneighbour "$out/their-link"
  exit_is 2 "--out a symlink another user planted" \
    "$bin" run --scenario locked/whole-step --start fork --procs 1 --steps 50 --out "$out/their-link" --format none
  grep -q "symbolic link owned by another user" "$out/last.err" || fail "the refusal does not say why: $(cat "$out/last.err")"
  [ -z "$(ls -A "$out/root-only")" ] || fail "the run wrote through the other user's symlink"
  mkdir -p "$out/shared-cwd/runs" && chown sbneighbour "$out/shared-cwd/runs"
  cd "$out/shared-cwd"  # not a subshell: fail() must reach this script's status
  exit_is 2 "a runs/ folder another user owns" \
    "$bin" run --scenario locked/whole-step --start fork --procs 1 --steps 50 --format none
  cd "$out"
  [ -z "$(ls -A "$out/shared-cwd/runs")" ] || fail "the run wrote into the other user's runs/"
  mkdir -p "$out/my-cwd" && cd "$out/my-cwd"
  exit_is 0 "a runs/ folder of one's own" "$bin" run --scenario locked/whole-step --start fork --procs 1 --steps 50 \
    --format none
  cd "$out"
else
  fail "not root: cannot make the second user these cases need"
fi

# --- 5. a signal to one fork worker -------------------------------------------------------------
for sig in TERM INT; do
  "$bin" run --scenario locked/whole-step --start fork --procs 2 --steps 30000 --out "$out/sig-$sig" \
    --format none >/dev/null 2>&1 &
  run=$!
  worker=""
  for _ in $(seq 100); do worker=$(pgrep -x -P $run sharebench-r1 | head -1); [ -n "$worker" ] && break; sleep 0.05; done
  sleep 0.5
  [ -n "$worker" ] && kill -s $sig "$worker"
  wait $run
  code=$?
  [ -n "$worker" ] || fail "SIG$sig to a fork worker: no worker found to signal"
  [ $code -eq 1 ] || fail "SIG$sig to a fork worker: the run exited $code, want 1 (an unexpected cell)"
  "$py" - "$out/sig-$sig/results.json" "$sig" <<'PY' || fail "SIG$sig to a fork worker was not recorded"
import json, signal, sys
run = json.load(open(sys.argv[1]))
rep = run["cells"][0]["repetitions"][0]
number = int(getattr(signal, "SIG" + sys.argv[2]))
assert rep["status"] == "worker-failed" and f"rank 1: signal {number}" in rep["status_message"], rep["status_message"]
print(f"ok: SIG{sys.argv[2]} to a fork worker: {rep['status_message'][:80]}")
PY
done

# ... and to exec's supervisor (its one worker): recorded as its death by that signal, the cell
# unexpected, and the program it supervised gone with it (the guard).
for sig in TERM INT HUP; do
  marker="sharebench-supervised-$sig-$$"
  "$bin" exec --out "$out/sup-$sig" --format none -- "$py" -c "import time; time.sleep(60)" "$marker" >/dev/null 2>&1 &
  run=$!
  supervisor=""
  for _ in $(seq 100); do supervisor=$(pgrep -x -P $run sharebench-r0 | head -1); [ -n "$supervisor" ] && pgrep -f "$marker" >/dev/null && break; sleep 0.05; done
  [ -n "$supervisor" ] && kill -s $sig "$supervisor"
  wait $run
  code=$?
  [ -n "$supervisor" ] || fail "SIG$sig to exec's supervisor: no supervisor found to signal"
  [ $code -eq 1 ] || fail "SIG$sig to exec's supervisor: the run exited $code, want 1 (an unexpected cell)"
  for _ in $(seq 50); do pgrep -f "$marker" >/dev/null || break; sleep 0.1; done
  pgrep -f "$marker" >/dev/null && { fail "SIG$sig to exec's supervisor: the program outlived it"; pkill -f "$marker"; }
  "$py" - "$out/sup-$sig/results.json" "$sig" <<'PY' || fail "SIG$sig to exec's supervisor was not recorded"
import json, signal, sys
rep = json.load(open(sys.argv[1]))["cells"][0]["repetitions"][0]
number = int(getattr(signal, "SIG" + sys.argv[2]))
assert rep["status"] == "worker-failed" and f"rank 0: signal {number}" in rep["status_message"], rep["status_message"]
print(f"ok: SIG{sys.argv[2]} to exec's supervisor: {rep['status_message'][:80]}")
PY
done

# ... while Ctrl-C at a terminal, which reaches the whole process group, still interrupts the cell
# (the workers die of it too now; the runner was interrupted, so that is no worker failure).
"$py" - "$bin" "$out/group-int" <<'PY' || fail "Ctrl-C to the whole process group"
import json, os, signal, subprocess, sys, time
binary, where = sys.argv[1], sys.argv[2]
p = subprocess.Popen([binary, "run", "--scenario", "locked/whole-step", "--start", "fork", "--procs", "2",
                      "--steps", "30000", "--out", where, "--format", "none"], start_new_session=True,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(1.5)
os.killpg(p.pid, signal.SIGINT)
code = p.wait(timeout=60)
run = json.load(open(where + "/results.json"))
kinds = [(c["outcome"]["kind"], c["repetitions"][0]["status"]) for c in run["cells"]]
assert code == 130 and run["status"] == "interrupted" and kinds == [("interrupted", "interrupted")], (code, run["status"], kinds)
print("ok: Ctrl-C to the process group: exit 130, the cell interrupted")
PY

# A run killed with its whole group: its forkserver's socket folder goes with the next run's sweep.
"$py" - "$bin" "$out/killed-group" "$out/after-kill" <<'PY' || fail "the forkserver's folder of a SIGKILLed run"
import glob, os, signal, subprocess, sys, time
binary, where, after = sys.argv[1], sys.argv[2], sys.argv[3]
p = subprocess.Popen([binary, "run", "--scenario", "locked/whole-step", "--start", "forkserver", "--procs", "2",
                      "--steps", "30000", "--out", where, "--format", "none"], start_new_session=True,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
pattern = f"/tmp/sharebench-{p.pid}-forkserver-*"
for _ in range(100):
    if glob.glob(pattern + "/socket"): break
    time.sleep(0.05)
os.killpg(p.pid, signal.SIGKILL)
p.wait()
left = glob.glob(pattern)
assert left, "no forkserver folder named with the runner's pid was made"
subprocess.run([binary, "run", "--scenario", "locked/whole-step", "--start", "fork", "--procs", "1", "--steps", "50",
                "--out", after, "--format", "none"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
assert not any(os.path.exists(d) for d in left), f"still there after the next run: {left}"
print(f"ok: a SIGKILLed run's forkserver folder ({os.path.basename(left[0])}) removed by the next run")
PY

# A signal while the reports are written: sent at the first "wrote" line, it is the exit code.
"$py" - "$bin" "$out/sig-reports" <<'PY' || fail "SIGTERM while the reports were written was swallowed"
import signal, subprocess, sys
binary, where = sys.argv[1], sys.argv[2]
p = subprocess.Popen([binary, "run", "--scenario", "locked/whole-step", "--start", "fork", "--procs", "1", "--steps",
                      "50", "--out", where, "--format", "md,html,csv,junit,gbench,tap,none"],
                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
for line in p.stderr:
    if line.startswith("wrote "):
        p.send_signal(signal.SIGTERM)
        break
p.stderr.read()
code = p.wait(timeout=60)
assert code == 128 + signal.SIGTERM, f"exit {code}, want {128 + signal.SIGTERM}"
print("ok: SIGTERM while the reports were written: exit 143")
PY
ls -A "$out/sig-reports" | grep -q '\.tmp-' && fail "a signal during the reports left a temporary file"

# --- 4. a program's output is its owner's ---------------------------------------------------------
"$bin" exec --out "$out/secret" --format md,html -- "$py" -c 'print("API_TOKEN=s3cr3t")' >/dev/null 2>&1
grep -q s3cr3t "$out/secret/results.json" || fail "the program's output is not in the results (nothing to test)"
[ "$(stat -c %a "$out/secret")" = 700 ] || fail "an exec run's folder is $(stat -c %a "$out/secret"), want 700"
for f in results.json report.md report.html; do
  [ "$(stat -c %a "$out/secret/$f")" = 600 ] || fail "an exec run's $f is $(stat -c %a "$out/secret/$f"), want 600"
done
[ "$(stat -c %a "$out/base/results.json")" = 644 ] || fail "a run's results.json is $(stat -c %a "$out/base/results.json"), want 644"
# ... unless the user asks otherwise, and then `report` later keeps the same modes.
"$bin" exec --readable-results --out "$out/shared-secret" --format md -- "$py" -c 'print("API_TOKEN=s3cr3t")' >/dev/null 2>&1
[ "$(stat -c %a "$out/shared-secret")" = 755 ] || fail "exec --readable-results: folder $(stat -c %a "$out/shared-secret"), want 755"
for f in results.json report.md; do
  [ "$(stat -c %a "$out/shared-secret/$f")" = 644 ] || fail "exec --readable-results: $f is $(stat -c %a "$out/shared-secret/$f"), want 644"
done
rm -f "$out/shared-secret/report.md"
"$bin" report "$out/shared-secret/results.json" --format md >/dev/null 2>&1 || fail "report of the readable exec run"
[ "$(stat -c %a "$out/shared-secret/report.md")" = 644 ] || fail "report of a readable exec run wrote report.md $(stat -c %a "$out/shared-secret/report.md")"
echo "ok: an exec run's folder 700 and files 600 (755 and 644 with --readable-results); a run's results 644"

# --- 7. no terminal escape in any report file ----------------------------------------------------
printf '%s\n' 'import sys' \
  'sys.stdout.write("title \x1b]0;pwned\x07 then \x1b[2J cleared\n")' 'raise SystemExit(3)' >"$out/escapes.py"
"$bin" exec --out "$out/esc" --format md,html,csv,junit,tap,gbench -- "$py" "$out/escapes.py" >/dev/null 2>&1
grep -q pwned "$out/esc/report.md" || fail "report.md does not hold the program's output (nothing to test)"
for f in report.md report.html results.csv junit.xml results.tap gbench.json results.json; do
  [ -f "$out/esc/$f" ] || { fail "$f was not written"; continue; }
  if grep -q $'\x1b' "$out/esc/$f"; then fail "$f holds a raw ESC byte"; else echo "ok: no escape in $f"; fi
done

# --- 2. a full disk ------------------------------------------------------------------------------
small=$out/small
mkdir -p "$small"
if mount -t tmpfs -o size=24m tmpfs "$small" 2>"$out/mount.err"; then
  "$bin" run --blocks 0 --scenario locked/whole-step,hogwild/lock-free,inference/read-only --start fork,spawn --procs 1,2 \
    --steps 200 --out "$small/run" --format none >"$out/full.out" 2>"$out/full.err" &
  run=$!
  for _ in $(seq 100); do [ -f "$small/run/results.json" ] && break; sleep 0.1; done
  dd if=/dev/zero of="$small/fill" bs=1M >/dev/null 2>&1  # until the disk is full
  wait $run
  code=$?
  [ $code -eq 2 ] || fail "a disk that filled mid-run: exit $code, want 2"
  [ "$(wc -l <"$out/full.err")" -eq 1 ] || fail "a full disk: not one line on stderr: $(cat "$out/full.err")"
  grep -q "No space left on device; the run stopped after" "$out/full.err" || fail "the line does not say what: $(cat "$out/full.err")"
  "$py" - "$small/run/results.json" <<'PY' || fail "the results of a run stopped by a full disk"
import json, sys
run = json.load(open(sys.argv[1]))
assert run["status"] == "error", run["status"]
assert "No space left on device" in run.get("stop_reason", ""), run.get("stop_reason")
assert 1 <= len(run["cells"]) < 12, len(run["cells"])
print(f"ok: a full disk mid-run: {len(run['cells'])} of 12 cells kept, status error, the reason saved")
PY
  ls -A "$small/run" | grep -E '^\.reserve$|\.tmp-' && fail "a full disk left a reserve or temporary file"
  dd if=/dev/zero of="$small/fill-again" bs=1M >/dev/null 2>&1  # the stopped run's reserve, freed
  exit_is 2 "a run into a full disk" "$bin" run --scenario locked/whole-step --start fork --procs 1 --steps 50 \
    --out "$small/run2" --format none
  umount "$small"
else
  fail "cannot mount a small tmpfs to fill (run as root): $(cat "$out/mount.err")"
fi
mkdir -p "$out/dir-results/results.json"
exit_is 2 "a run whose results.json is a directory" "$bin" run --scenario locked/whole-step --start fork --procs 1 \
  --steps 50 --out "$out/dir-results" --format none

exit $status
