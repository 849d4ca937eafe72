#!/usr/bin/env bash
# `--model`: every strategy (inference, locked, Hogwild, parameter and gradient averaging over
# every transport, the model's parameters handed over by IPC) on a built-in transformer and on a TorchScript file (made by
# make_torchscript_model with LibTorch's scripting API, as torch.jit.save would), under fork,
# spawn and forkserver (2 processes; the TorchScript file at 1 too): every check passes, and the results carry the model.
# Bad model options are refused with exit 2 and one line, before a run directory is made.
# With `quick` (the default suite), each model runs under one start method, the start methods
# shared out among the models so that all three are still crossed with every strategy; without it
# (the `slow` suite), every model under every start method.
# usage: model_test.sh SHAREBENCH OUTDIR MAKE_TORCHSCRIPT_MODEL [quick]
source "$(dirname "$0")/test_lib.sh" "$@"
make_model=$3
quick=${4:-}
# starts FULL QUICK: the start methods of one sweep, by mode.
starts() { if [ "$quick" = quick ]; then echo "$2"; else echo "$1"; fi; }
"$make_model" "$out/tiny.pt" || { echo "FAIL: could not write the TorchScript file"; exit 1; }

# run_ok NAME ARGS...: exit 0, and every cell ok.
run_ok() {
  local name=$1
  shift
  "$bin" run --blocks 0 --scenario inference,hogwild,locked/whole-step,averaging,model-ipc --steps 60 --out "$out/$name" --format none "$@" \
    >"$out/$name.log" 2>&1
  local code=$?
  [ $code -eq 0 ] || { tail -20 "$out/$name.log"; fail "$name: exit $code, want 0"; }
  python3 - "$out/$name/results.json" "$name" <<'PY' || status=1
import json, sys
run = json.load(open(sys.argv[1]))
cells = run["cells"]
bad = [c["id"] for c in cells if c["outcome"]["kind"] != "ok"]
model = cells[0]["config"]["workload"]["model"]
params = cells[0]["repetitions"][0]["metrics"].get("model_parameters")
if bad: print(f"FAIL: {sys.argv[2]}: cells not ok: {bad}"); sys.exit(1)
ipc = [c for c in cells if c["config"]["scenario"] == "model-ipc"]
if any(c["config"]["procs"] >= 2 for c in cells) and not ipc:
    print(f"FAIL: {sys.argv[2]}: no model-ipc cell"); sys.exit(1)
for c in ipc:
    checks = {k["name"]: k["verdict"] for k in c["repetitions"][0]["checks"]}
    for need in ("probe-identical", "versions-delivered", "model-shared"):
        if checks.get(need) != "pass": print(f"FAIL: {c['id']}: {need} is {checks.get(need)}"); sys.exit(1)
if not params: print(f"FAIL: {sys.argv[2]}: no model_parameters metric"); sys.exit(1)
print(f"{sys.argv[2]}: {len(cells)} cells ok, model {model}, {int(params)} parameters")
PY
}
run_ok transformer --model transformer-s --procs 2 --start "$(starts fork,spawn,forkserver forkserver)"
run_ok torchscript --model "$out/tiny.pt" --input-shape 2,4 --procs 1,2 --start fork
run_ok torchscript-spawn --model "$out/tiny.pt" --input-shape 2,4 --procs 2 --start "$(starts spawn,forkserver spawn)"
run_ok convnet --model convnet-s --procs 2 --start fork

# A consumer that copies the received transformer into its own memory: caught by model-shared
# under every start method, every output still right.
"$bin" run --scenario model-ipc/copy-on-receive --model transformer-s --steps 30 --procs 2 \
  --start "$(starts fork,spawn,forkserver spawn)" \
  --out "$out/copy" --format none >"$out/copy.log" 2>&1 || { tail -20 "$out/copy.log"; fail "copy-on-receive: exit $?"; }
python3 - "$out/copy/results.json" <<'PY' || status=1
import json, sys
cells = json.load(open(sys.argv[1]))["cells"]
for c in cells:
    checks = {k["name"]: k["verdict"] for k in c["repetitions"][0]["checks"]}
    if c["outcome"]["kind"] != "bug-caught" or checks.get("model-shared") != "fail" or checks.get("probe-identical") != "pass":
        print(f"FAIL: {c['id']}: {c['outcome']['kind']}, model-shared {checks.get('model-shared')}, "
              f"probe-identical {checks.get('probe-identical')}"); sys.exit(1)
print(f"copy-on-receive: caught in {len(cells)} cells")
PY

# refused NAME WORD ARGS...: exit 2, one line naming WORD, no run directory.
refused() {
  local name=$1 word=$2
  shift 2
  "$bin" run --blocks 0 --scenario hogwild --steps 10 --out "$out/$name" --format none "$@" >"$out/$name.out" 2>"$out/$name.err"
  local code=$?
  [ $code -eq 2 ] || fail "$name: exit $code, want 2"
  [ "$(wc -l <"$out/$name.err")" -eq 1 ] || fail "$name: want one line, got: $(cat "$out/$name.err")"
  grep -q -- "$word" "$out/$name.err" || fail "$name: the message does not name $word: $(cat "$out/$name.err")"
  [ -e "$out/$name" ] && fail "$name: a run directory was made"
}
refused unknown-model --model --model resnet-9000
refused no-shape --input-shape --model "$out/tiny.pt"
refused zero-shape --input-shape --model "$out/tiny.pt" --input-shape 2,0
refused bad-dtype --input-dtype --model "$out/tiny.pt" --input-shape 8 --input-dtype float16
refused builtin-shape --input-shape --model convnet-s --input-shape 3,32,32
# A file that is readable but not TorchScript is refused before anything runs, saying what it is
# (tests/hardening_test.sh holds the other kinds: a directory, a state dict, a pickled module, ...).
echo "not a model" >"$out/junk.pt"
refused junk-file "not a TorchScript file" --model "$out/junk.pt" --input-shape 8
exit $status
