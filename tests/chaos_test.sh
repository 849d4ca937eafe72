#!/usr/bin/env bash
# --chaos on the luck-dependent planted bugs (tests/planted/luck.cc), built out of tree against the
# installed package as a user's project is:
#   - luck-counter/locked (a read-modify-write under a lock) stays clean in every repetition under
#     chaos; its buggy twin, luck-counter/unlocked, is a may-fail whose rate this test prints (chaos
#     does not yet preempt from outside, so on a loaded machine the workers may never overlap);
#   - luck-ring/ring is caught by lock-order in every repetition (with or without chaos: the graph
#     does not depend on luck) and its twin luck-ring/ordered stays clean;
#   - every repetition records what the chaos did (chaos_points, chaos_sleeps, ...) and the cell's
#     reproduce command carries --chaos SEED, so `repro` replays the same plan;
#   - a run without --chaos records no chaos at all.
# usage: chaos_test.sh BUILD_DIR SOURCE_DIR OUTDIR [REPETITIONS]
set -uo pipefail
build=$1
src=$2
out=$3
reps=${4:-10}
rm -rf "$out" && mkdir -p "$out"
status=0
fail() { echo "FAIL: $*"; status=1; }

cmake --install "$build" --prefix "$out/prefix" >"$out/install.log" || { echo "FAIL: install"; exit 1; }
cmake -S "$src/tests/planted" -B "$out/build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DPLANTED_WITH_TORCH=OFF \
  -DCMAKE_PREFIX_PATH="$out/prefix" >"$out/configure.log" 2>&1 || { cat "$out/configure.log"; echo "FAIL: configure"; exit 1; }
cmake --build "$out/build" --target planted-bench >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; echo "FAIL: build"; exit 1; }
bench=$out/build/planted-bench

"$bench" run --known-bugs --scenario luck-counter,luck-ring --start fork,spawn,forkserver --procs 3 --steps 200 \
  --repetitions "$reps" --hang-timeout 3 --stacks proc --chaos 11 --out "$out/chaos" --format none >"$out/chaos.log" 2>&1
code=$?
[ $code -eq 0 ] || { tail -40 "$out/chaos.log"; fail "run --chaos 11 exited $code, want 0"; }
"$bench" run --scenario luck-counter/locked --start fork --procs 2 --steps 50 --out "$out/calm" --format none \
  >"$out/calm.log" 2>&1 || fail "a run without --chaos failed"

python3 - "$reps" "$out/chaos/results.json" "$out/calm/results.json" <<'PY' || status=1
import json, sys
reps = int(sys.argv[1])
chaos = json.load(open(sys.argv[2]))
calm = json.load(open(sys.argv[3]))
problems = []
must = {"luck-ring/ring": "lock-order"}
seen = set()
for cell in chaos["cells"]:
    c = cell["config"]
    name = f'{c["scenario"]}/{c["variant"]}'
    if c.get("chaos_seed") != 11: problems.append(f"{cell['id']}: chaos_seed {c.get('chaos_seed')} stored, want 11")
    if "--chaos 11" not in cell["repro"]: problems.append(f"{cell['id']}: reproduce command lacks --chaos 11: {cell['repro']}")
    if len(cell["repetitions"]) != reps: problems.append(f"{cell['id']}: {len(cell['repetitions'])} repetitions")
    for r in cell["repetitions"]:
        m = r["metrics"]
        if not m.get("chaos_points", 0) > 0 or "chaos_sleeps" not in m:
            problems.append(f"{cell['id']} repetition {r['index']}: no chaos recorded ({sorted(k for k in m if k.startswith('chaos'))})")
        checks = {x["name"]: x for x in r["checks"]}
        if name in must:
            seen.add((name, c["start"]))
            k = checks.get(must[name])
            if not k or k["verdict"] != "fail": problems.append(f"{cell['id']} repetition {r['index']}: {must[name]} did not fail")
    if name == "luck-counter/unlocked":
        caught = sum(1 for r in cell["repetitions"] if any(x["name"] == "lost-updates" and x["verdict"] == "fail" for x in r["checks"]))
        print(f"{cell['id']}: lost updates in {caught} of {len(cell['repetitions'])} repetitions (a figure, may fail)")
        continue
    want = "bug-caught" if name in must else "ok"
    if cell["outcome"]["kind"] != want: problems.append(f"{cell['id']}: {cell['outcome']['summary']}, want {want}")
for name in must:
    for start in ("fork", "spawn", "forkserver"):
        if (name, start) not in seen: problems.append(f"{name} never ran under {start}")
for cell in calm["cells"]:
    if any(k.startswith("chaos") for r in cell["repetitions"] for k in r["metrics"]):
        problems.append(f"{cell['id']}: chaos recorded without --chaos")
for p in problems: print("FAIL:", p)
print(f"chaos: {len(seen)} luck-dependent bug cells caught in all {reps} repetitions, {len(problems)} problem(s)")
sys.exit(1 if problems else 0)
PY
exit $status
