#!/usr/bin/env bash
# The installed package works from another repository: install this build into a fresh prefix,
# build examples/counter against it with find_package(sharebench), and run its scenario through
# every start method with the default detectors and reports.
# usage: install_test.sh BUILD_DIR SOURCE_DIR OUTDIR
set -euo pipefail
build=$1
src=$2
out=$3
rm -rf "$out" && mkdir -p "$out"
cmake --install "$build" --prefix "$out/prefix" >"$out/install.log"
test -x "$out/prefix/bin/sharebench"
# The public entry point is installed, and the out-of-tree code built here includes nothing else of
# ours: an internal header that moves cannot break a user's strategy.
test -f "$out/prefix/include/sharebench/sharebench.h" || { echo "FAIL: <sharebench/sharebench.h> not installed"; exit 1; }
test -f "$out/prefix/include/sharebench/torch.h" || { echo "FAIL: <sharebench/torch.h> not installed"; exit 1; }
if grep -nE '#include "(harness|cli|torch_support|workload|reports|scenarios)/' "$src"/examples/counter/*.cc "$src"/tests/planted/*.cc; then
  echo "FAIL: out-of-tree code includes an internal header instead of <sharebench/sharebench.h>"; exit 1
fi
test -f "$out/prefix/lib/cmake/sharebench/sharebenchConfig.cmake"
cmake -S "$src/examples/counter" -B "$out/build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_PREFIX_PATH="$out/prefix" >"$out/configure.log"
cmake --build "$out/build" >"$out/build.log"
"$out/build/counter-bench" list | grep -q 'counter/locked'
"$out/build/counter-bench" run --scenario counter --start fork,spawn,forkserver,thread --procs 1,2 \
  --steps 20000 --out "$out/run" --format console,md
grep -q 'counter/locked@forkserver:2' "$out/run/report.md"
grep -q '"name": "count"' "$out/run/results.json"
# An option the out-of-tree scenario declares is a flag, in `list`, in the results and in repro lines.
"$out/build/counter-bench" list | grep -q -- '--increments-per-step (int, default 1)' ||
  { echo "FAIL: list does not show the out-of-tree scenario's option"; exit 1; }
"$out/build/counter-bench" run --scenario counter --start fork --procs 2 --steps 1000 --increments-per-step 3 \
  --out "$out/option" --format none
grep -q '"increments-per-step": "3"' "$out/option/results.json" ||
  { echo "FAIL: the option is not in the cell's config.options"; exit 1; }
grep -q 'counter 6000 after 6000 increments' "$out/option/results.json" ||
  { echo "FAIL: the scenario did not read its option"; exit 1; }
grep -q -- '--increments-per-step 3' "$out/option/results.json" ||
  { echo "FAIL: the reproduce line does not carry the option"; exit 1; }
# The harness's own detectors reach the out-of-tree scenario with no wiring in it: its named lock
# is in the lock-order check of every cell, the leak check ran, and each cell has its one outcome.
python3 - "$out/run/results.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
assert run["cells"], "no cells"
for c in run["cells"]:
    assert c["outcome"]["kind"] == "ok", (c["id"], c["outcome"])
    checks = {k["name"]: k for r in c["repetitions"] for k in r["checks"]}
    assert checks["lock-order"]["verdict"] == "pass" and "1 lock" in checks["lock-order"]["message"], (c["id"], checks.get("lock-order"))
    assert checks["no-leaks"]["verdict"] == "pass", (c["id"], checks["no-leaks"])
print(f"out of tree: {len(run['cells'])} cells, each with lock-order, no-leaks and its outcome")
PY
# The installed package carries `exec` into a binary built on it, and installs the progress channel.
test -f "$out/prefix/include/sharebench/progress.h" || { echo "FAIL: <sharebench/progress.h> not installed"; exit 1; }
test -f "$out/prefix/share/sharebench/python/sharebench_progress.py" || { echo "FAIL: sharebench_progress.py not installed"; exit 1; }
"$out/build/counter-bench" exec --format none --out "$out/exec" --hang-timeout 5 -- \
  sh -c 'for i in 1 2 3; do echo "$$ $i" >> "$SHAREBENCH_PROGRESS"; done' ||
  { echo "FAIL: exec in the out-of-tree binary"; exit 1; }
grep -q '"steps_total": 3' "$out/exec/results.json" || { echo "FAIL: exec's progress beats in the out-of-tree binary"; exit 1; }
# The installed command is two binaries (docs/architecture.md, "Two binaries"): the front loads no
# LibTorch, answers `list` from the catalog its LibTorch binary wrote, and hands `run` (spawn's
# workers included) to that binary in libexec/sharebench/.
test -x "$out/prefix/libexec/sharebench/sharebench-torch" || { echo "FAIL: libexec/sharebench/sharebench-torch not installed"; exit 1; }
test -f "$out/prefix/libexec/sharebench/sharebench-scenarios.json" || { echo "FAIL: the scenario catalog is not installed"; exit 1; }
for front in "$out/prefix/bin/sharebench" "$build/sharebench"; do
  if ldd "$front" | grep -E 'libtorch|libc10' >/dev/null; then echo "FAIL: $front links LibTorch"; exit 1; fi
done
"$out/prefix/bin/sharebench" list >"$out/front-list.txt"
"$out/prefix/libexec/sharebench/sharebench-torch" list | cmp - "$out/front-list.txt" ||
  { echo "FAIL: the front's list differs from the LibTorch binary's"; exit 1; }
grep -q '^locked/whole-step\|  locked/whole-step' "$out/front-list.txt" || { echo "FAIL: the front's list lacks the built-in scenarios"; exit 1; }
"$out/prefix/bin/sharebench" run --scenario locked/whole-step --start spawn,fork --procs 2 --steps 50 --format none \
  --out "$out/front-run" || { echo "FAIL: run through the installed front"; exit 1; }
grep -q '"libtorch": "' "$out/front-run/results.json" || { echo "FAIL: the run's results name no LibTorch"; exit 1; }
echo "installed package: built and ran the out-of-tree scenario, and exec; the front ran list and run"

