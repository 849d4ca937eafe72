#!/usr/bin/env bash
# Hostile and careless input to `exec`, `run`, `report` and `repro`, third round: each case below
# lost a run, left something behind, broke a report or was accepted before, and must now hold.
#   program output: bytes that are not UTF-8, terminal escapes, code fences, raw HTML, megabytes,
#     through every report format; a crafted name in results.json against the HTML charts
#   nothing left: exec's private directory after a run; a SIGKILLed runner's program children,
#     swept by the next run
#   signals: every correct ipc variant under --chaos (an interrupted poll is not a timeout)
#   bad input: --workdir a file or '', --model files that are not TorchScript, a program that
#     removes its own working directory under a relative --out, crafted results files (procs 1e20,
#     stacks and mp_start values run refuses), an exec cell's id for `sh -c`, repro of another
#     user's exec cell
# usage: hardening_test.sh SHAREBENCH OUTDIR
source "$(dirname "$0")/test_lib.sh" "$@"
py=/usr/bin/python3
cd "$out"

# --- 1. A byte that is not UTF-8 in a program's output: the run is kept. ------------------------------
exit_is 1 "exec of a program printing \\xff then failing" "$bin" exec --format none --out "$out/utf8" -- bash -c 'printf "\xff\xfe ok\n"; exit 3'
"$py" - "$out/utf8/results.json" <<'PY' || fail "the run with \\xff in its output was not kept"
import json, sys
run = json.load(open(sys.argv[1]))
assert run["status"] == "complete" and len(run["cells"]) == 1, run["status"]
PY

# --- 2. Program output fuzz through every report format. ----------------------------------------------
cat >"$out/noisy.py" <<'PY'
import os, random, sys
random.seed(7)
out = sys.stdout.buffer
out.write(b"\x1b[2J\x1b[H\x1b]0;owned\x07\x1b[31mred\x9b31m\xc2\x9b\n")
out.write(b"```\n<script>alert(1)</script>\n````\n<img src=x onerror=alert(2)>\n| a | b |\n")
out.write(bytes(random.randrange(256) for _ in range(4096)) + b"\n")
out.write((b"x" * 1023 + b"\n") * 2048)  # 2 MiB
out.flush()
sys.exit(1)
PY
exit_is 1 "exec of the noisy program" "$bin" exec --format none --out "$out/noisy" -- "$py" "$out/noisy.py"
for format in console md html csv junit gbench json; do
  exit_is 0 "report --format $format of the noisy run" "$bin" report "$out/noisy/results.json" --format "$format" --out "$out/noisy-$format" --color never
done
"$bin" report "$out/noisy/results.json" --format console --color never >"$out/noisy.console" 2>&1
if LC_ALL=C grep -q $'\x1b' "$out/noisy.console"; then fail "an escape sequence from the program reached the console report"; fi
"$bin" report "$out/noisy/results.json" --format md --out "$out/noisy-md" >/dev/null 2>&1
md=$(ls "$out"/noisy-md/*.md | head -1)
"$py" - "$md" <<'PY' || fail "the program's output broke out of the Markdown report's code blocks"
import re, sys
fence = None
for n, line in enumerate(open(sys.argv[1], encoding="utf-8", errors="replace"), 1):
    m = re.match(r"^(`{3,})", line)
    if fence is None and m:
        fence = m.group(1)
    elif fence is not None and line.rstrip("\n") == fence:
        fence = None
    elif fence is None and ("<script" in line or "<img" in line):
        print(f"line {n}: live HTML outside a code block: {line.strip()[:120]}")
        sys.exit(1)
PY

# A crafted name in results.json must not stop the HTML page's charts (nor inject markup).
"$py" - "$out/noisy/results.json" "$out/crafted.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
run["cells"][0]["config"]["variant"] = "x<!--<script>"
run["cells"][0]["config"]["command"] = ["python3", "<!--<script>.py"]
json.dump(run, open(sys.argv[2], "w"))
PY
exit_is 0 "report --format html of a crafted name" "$bin" report "$out/crafted.json" --format html --out "$out/crafted-html"
html=$(ls "$out"/crafted-html/*.html | head -1)
grep -q '<!--<script>' "$html" && fail "the crafted name reached the HTML page raw"

# A script named with a pipe and a backtick: its id is plain text in every table.
cp "$out/noisy.py" "$out/a|b\`c.py" && sed -i 's/sys.exit(1)/sys.exit(0)/' "$out/a|b\`c.py"
exit_is 0 "exec of a script named with | and \`" "$bin" exec --format none --out "$out/named" -- "$py" "$out/a|b\`c.py"
grep -q '"id": "exec/a_b_c.py@own:1"' "$out/named/results.json" || fail "the odd script name is not plain in its id"

# --- 3. Nothing left: exec's private directory, on success and failure. -------------------------------
mkdir -p "$out/tmp"
TMPDIR="$out/tmp" "$bin" exec --format none --out "$out/tidy" -- true >/dev/null 2>&1
TMPDIR="$out/tmp" "$bin" exec --format none --out "$out/tidy2" -- false >/dev/null 2>&1
[ -z "$(ls -A "$out/tmp")" ] || fail "exec left behind: $(ls -A "$out/tmp")"

# --- 4. A SIGKILLed runner: its program's children die with it (the supervisor's guard kills the
# program's group), and the next run sweeps what is left. ------------------------------------------------
marker="sbhardening-$$-orphan"
cat >"$out/orphans.py" <<PY
import multiprocessing as mp, time
def sleeper():
    time.sleep(120)  # $marker
if __name__ == "__main__":
    ps = [mp.Process(target=sleeper) for _ in range(2)]
    for p in ps: p.start()
    for p in ps: p.join()
PY
TMPDIR="$out/tmp" "$bin" exec --mp-start fork --format none --out "$out/killed" -- "$py" "$out/orphans.py" >/dev/null 2>&1 &
runner=$!
pattern="^$py $out/orphans.py"  # the program and its children, not the runner (whose command line names it too)
started=0
for _ in $(seq 150); do
  [ "$(pgrep -f "$pattern" | wc -l)" -ge 3 ] && { started=1; break; }
  sleep 0.1
done
[ "$started" -eq 1 ] || fail "the program and its 2 children never ran: the test proves nothing"
kill -9 "$runner"
wait "$runner" 2>/dev/null
for _ in $(seq 50); do
  [ "$(pgrep -f "$pattern" | wc -l)" -eq 0 ] && break
  sleep 0.1
done
left=$(pgrep -f "$pattern" | wc -l)
echo "after SIGKILL of the runner: $left process(es) of the program alive"
[ "$left" -eq 0 ] || fail "$left process(es) of the program outlived its SIGKILLed runner by 5 s (the guard did not kill its group)"
TMPDIR="$out/tmp" "$bin" exec --format none --out "$out/sweeper" -- true >"$out/sweeper.log" 2>&1
sleep 0.5
now=$(pgrep -f "$pattern" | wc -l)
[ "$now" -eq 0 ] || { fail "$now process(es) of a SIGKILLed runner's program still alive after the next run"; pkill -9 -f "$pattern"; }
[ "$left" -eq 0 ] || grep -q "killed $left process(es)" "$out/sweeper.log" || fail "the sweep did not say what it killed: $(cat "$out/sweeper.log")"
[ -z "$(ls -A "$out/tmp")" ] || fail "the dead run's private directory is still there: $(ls -A "$out/tmp")"

# --- 5. Every correct ipc variant under --chaos: signals interrupt polls, never time them out. ---------
exit_is 0 "ipc under --chaos 3" "$bin" run --chaos 3 --scenario ipc,model-ipc --start fork --procs 2 --steps 1500 --format none --out "$out/chaos-ipc"

# --- 6. Bad input: one line, exit 2. -----------------------------------------------------------------
exit_is 2 "--workdir a file" "$bin" exec --workdir /etc/passwd -- true
exit_is 2 "--workdir ''" "$bin" exec --workdir '' -- true
mkdir -p "$out/models/adir"
: >"$out/models/empty.pt"
head -c 4096 /dev/urandom >"$out/models/random.pt"
"$py" - "$out/models" <<'PY'
import sys, zipfile, torch
d = sys.argv[1]
with zipfile.ZipFile(d + "/notscript.pt", "w") as z: z.writestr("hello.txt", "hi")
torch.save({"w": torch.zeros(3)}, d + "/state_dict.pt")
torch.save(torch.nn.Linear(2, 2), d + "/module.pt")
PY
for m in adir empty.pt random.pt notscript.pt state_dict.pt module.pt; do
  exit_is 2 "--model $m" "$bin" run --scenario inference --start fork --procs 1 --model "$out/models/$m" --input-shape 4 --format none --out "$out/m"
done
# A program that removes its working directory, with --out relative to it: the results are kept.
mkdir -p "$out/doomed"
(cd "$out/doomed" && exit_is 1 "a program removing its working directory" "$bin" exec --format none --out rel -- sh -c 'rm -rf "$PWD"; exit 1')
[ -f "$out/doomed/rel/results.json" ] || fail "the results of a program that removed its working directory were lost"
# Crafted results files.
"$py" - "$out/utf8/results.json" "$out" <<'PY'
import json, sys
src, out = sys.argv[1], sys.argv[2]
# mpstart: a file of the older form, whose exec cell kept its start method in mp_start.
for name, field, value in (("procs", "procs", 1e20), ("stacks", "stacks", "evil"), ("mpstart", "mp_start", "thread"),
                           ("variant", "variant", "thread")):
    run = json.load(open(src))
    run["cells"][0]["config"][field] = value
    if name == "mpstart":
        run["cells"][0]["config"]["variant"] = "default"
    json.dump(run, open(f"{out}/crafted-{name}.json", "w"))
PY
for name in procs stacks mpstart; do
  exit_is 2 "report of a results file with a crafted $name" "$bin" report "$out/crafted-$name.json" --format console
  grep -q "crafted-$name.json" "$out/last.err" || fail "the error for a crafted $name does not name the file: $(cat "$out/last.err")"
done
# An exec cell whose variant (the start method it forces) is no start method: repro refuses it
# (after the line saying what it would have run).
crafted_id=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["cells"][0]["id"].replace("@own:", "@thread:"))' \
  "$out/crafted-variant.json")
rc=0; "$bin" repro --yes "$out/crafted-variant.json" "$crafted_id" >/dev/null 2>"$out/last.err" || rc=$?
[ "$rc" = 2 ] || fail "repro of an exec cell with a crafted variant: exit $rc, want 2"
grep -q "thread" "$out/last.err" || fail "the error for a crafted variant does not name it: $(cat "$out/last.err")"
# `sh -c` is named for its shell.
exit_is 0 "exec -- sh -c" "$bin" exec --format none --out "$out/shc" -- /bin/sh -c 'exit 0'
grep -q '"id": "exec/sh-c@own:1"' "$out/shc/results.json" || fail "exec -- /bin/sh -c is not named exec/sh-c"
# repro of an exec cell from a results file another user owns: says what it would run, runs nothing.
if [ "$(id -u)" = 0 ]; then
  cp "$out/shc/results.json" "$out/theirs.json" && chown nobody "$out/theirs.json"
  exit_is 2 "repro of another user's exec cell" "$bin" repro "$out/theirs.json" exec/sh-c@own:1
  grep -q "would run" "$out/last.err" || fail "repro did not say what it would run: $(cat "$out/last.err")"
fi
exit $status
