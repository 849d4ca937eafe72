#!/usr/bin/env bash
# --chaos on the luck-dependent planted bugs (tests/planted/luck.cc), built out of tree against the
# installed package as a user's project is, under fork, spawn, forkserver and thread:
#   - every bug is caught in every repetition: luck-counter/unlocked by lost-updates and
#     luck-seqlock/no-recheck by consistent-snapshots (may-fail without chaos, must-fail with it:
#     the preempter pauses a worker inside its read-modify-write or its copy), luck-ring/ring by
#     lock-order, luck-reinit/reinit by lock-init; luck-tally/unlocked (a plain `+= 1`) by
#     lost-updates and luck-pair/unlocked-read by consistent-snapshots, one-instruction windows
#     that chaos's overlap bursts must not serialise away; luck-publish/flag-first (a flag raised
#     before the message is written) by consistent-snapshots;
#   - every clean twin stays clean in every repetition under the same chaos;
#   - every repetition records what the chaos did (points, sleeps, preemptions, overlap bursts) and
#     each worker's last perturbations; the HTML report shows them beside the caught bug's evidence;
#   - the cell's reproduce command carries --chaos SEED, so `repro` replays the same plan;
#   - a run without --chaos records no chaos at all.
#
# The one-instruction windows (luck-tally, luck-pair) are caught only while both workers run at the
# same moment, which a shared machine does not promise: a neighbour filling the cores, or a VM whose
# two vCPUs are not co-scheduled, leaves them uncaught now and then (CI, 27 Nov: luck-tally missed in
# 3 of 3 repetitions under fork and thread on an idle 2-vCPU VM). MODE `measure` (the default
# suite) reports their catch rate and asserts everything else about them (chaos recorded, the check
# declared must-fail and exercised, no other check failing); `assert` (the slow suite, docs/chaos.md's
# figure, meant for dedicated cores) requires the catch in every repetition.
# usage: chaos_test.sh BUILD_DIR SOURCE_DIR OUTDIR [REPETITIONS] [assert|measure]
set -uo pipefail
build=$1
src=$2
out=$3
reps=${4:-10}
mode=${5:-assert}
case "$mode" in assert|measure) ;; *) echo "chaos_test.sh: MODE is assert or measure, not '$mode'" >&2; exit 2 ;; esac
rm -rf "$out" && mkdir -p "$out"
status=0
fail() { echo "FAIL: $*"; status=1; }

source "$src/tests/lib/planted_out_of_tree.sh"
build_planted_out_of_tree "$build" "$src" "$out" -DPLANTED_WITH_TORCH=OFF -- --target planted-bench
bench=$out/build/planted-bench

# The counter at 1000 steps: at 200, a repetition under spawn on an idle machine once ended with no
# update lost (1 of 80; docs/chaos.md), its three workers' few milliseconds of work barely overlapping.
"$bench" run --known-bugs --scenario luck-ring,luck-reinit,luck-seqlock --start fork,spawn,forkserver,thread \
  --procs 3 --steps 200 --repetitions "$reps" --hang-timeout 3 --stacks proc --chaos 11 --out "$out/chaos" --format none \
  >"$out/chaos.log" 2>&1
code=$?
[ $code -eq 0 ] || { tail -40 "$out/chaos.log"; fail "run --chaos 11 exited $code, want 0"; }
"$bench" run --known-bugs --scenario luck-counter --start fork,spawn,forkserver,thread \
  --procs 3 --steps 1000 --repetitions "$reps" --hang-timeout 3 --stacks proc --chaos 11 --out "$out/chaos-counter" \
  --format none >"$out/chaos-counter.log" 2>&1
code=$?
[ $code -eq 0 ] || { tail -40 "$out/chaos-counter.log"; fail "run --chaos 11 of luck-counter exited $code, want 0"; }
# The one-instruction windows: a plain `+= 1` and an unlocked copy of an eight-number record, at two
# processes, caught only while both workers run at once (the overlap bursts' job). Both at 200 000
# steps, a few hundred milliseconds a repetition: at 20 000 a pair's repetition lasts about 30 ms, and
# a spell in which the workers did not run at once covered the whole of one (CI, 26 Nov: 41
# rendezvous where the others had 500 to 800, no torn read). docs/chaos.md's table keeps 20 000.
"$bench" run --known-bugs --scenario luck-tally --start fork,spawn,forkserver,thread \
  --procs 2 --steps 200000 --repetitions "$reps" --hang-timeout 5 --chaos 11 --out "$out/chaos-tally" \
  --format none >"$out/chaos-tally.log" 2>&1
code=$?
[ $code -eq 0 ] || { tail -40 "$out/chaos-tally.log"; fail "run --chaos 11 of luck-tally exited $code, want 0"; }
"$bench" run --known-bugs --scenario luck-pair --start fork,spawn,forkserver,thread \
  --procs 2 --steps 200000 --repetitions "$reps" --hang-timeout 5 --chaos 11 --out "$out/chaos-pair" \
  --format none >"$out/chaos-pair.log" 2>&1
code=$?
[ $code -eq 0 ] || { tail -40 "$out/chaos-pair.log"; fail "run --chaos 11 of luck-pair exited $code, want 0"; }
# A message announced before it is written: torn only when the reader copies while the writer writes.
"$bench" run --known-bugs --scenario luck-publish --start fork,spawn,forkserver,thread \
  --procs 2 --steps 2000 --repetitions "$reps" --hang-timeout 5 --chaos 11 --out "$out/chaos-publish" \
  --format none >"$out/chaos-publish.log" 2>&1
code=$?
[ $code -eq 0 ] || { tail -40 "$out/chaos-publish.log"; fail "run --chaos 11 of luck-publish exited $code, want 0"; }
"$bench" report "$out/chaos/results.json" --format html --out "$out/chaos" >/dev/null 2>&1 || fail "report --format html failed"
grep -q "the perturbations before it" "$out/chaos/report.html" 2>/dev/null ||
  fail "the HTML report does not show the perturbations before a caught bug"
"$bench" run --scenario luck-counter/locked --start fork --procs 2 --steps 50 --out "$out/calm" --format none \
  >"$out/calm.log" 2>&1 || fail "a run without --chaos failed"

python3 - "$reps" "$mode" "$out/chaos/results.json" "$out/calm/results.json" "$out/chaos-counter/results.json" \
  "$out/chaos-tally/results.json" "$out/chaos-pair/results.json" "$out/chaos-publish/results.json" <<'PY' || status=1
import json, sys
reps, mode = int(sys.argv[1]), sys.argv[2]
chaos = json.load(open(sys.argv[3]))
calm = json.load(open(sys.argv[4]))
for extra in sys.argv[5:]:
    chaos["cells"] += json.load(open(extra))["cells"]
problems = []
must = {"luck-ring/ring": "lock-order", "luck-counter/unlocked": "lost-updates",
        "luck-reinit/reinit": "lock-init", "luck-seqlock/no-recheck": "consistent-snapshots",
        "luck-tally/unlocked": "lost-updates", "luck-pair/unlocked-read": "consistent-snapshots",
        "luck-publish/flag-first": "consistent-snapshots"}
# Caught only while both workers run at once: a rate under `measure`, every repetition under `assert`.
co_scheduled = {"luck-tally/unlocked", "luck-pair/unlocked-read"} if mode == "measure" else set()
rates = {}  # name -> [caught, repetitions]
seen = set()
for cell in chaos["cells"]:
    c = cell["config"]
    name = f'{c["scenario"]}/{c["variant"]}'
    if c.get("chaos_seed") != 11: problems.append(f"{cell['id']}: chaos_seed {c.get('chaos_seed')} stored, want 11")
    if "--chaos 11" not in cell["repro"]: problems.append(f"{cell['id']}: reproduce command lacks --chaos 11: {cell['repro']}")
    if len(cell["repetitions"]) != reps: problems.append(f"{cell['id']}: {len(cell['repetitions'])} repetitions")
    if name in must and must[name] not in cell["expected"]["must_fail"]:
        problems.append(f"{cell['id']}: {must[name]} is not a must-fail check under chaos: {cell['expected']}")
    for r in cell["repetitions"]:
        m = r["metrics"]
        if not m.get("chaos_points", 0) > 0 or "chaos_sleeps" not in m or "chaos_preemptions" not in m:
            problems.append(f"{cell['id']} repetition {r['index']}: no chaos recorded ({sorted(k for k in m if k.startswith('chaos'))})")
        # A repetition over within the first overlap burst (a ring that closed at once) was not
        # perturbed; every other one was, and keeps each worker's last perturbations.
        if not any(w.get("chaos_recent") for w in r["workers"]) and not m.get("chaos_points_in_bursts", 0) > 0:
            problems.append(f"{cell['id']} repetition {r['index']}: neither perturbed nor in a burst")
        checks = {x["name"]: x for x in r["checks"]}
        if name in must:
            seen.add((name, c["start"]))
            k = checks.get(must[name])
            if name in co_scheduled:
                rate = rates.setdefault(name, [0, 0])
                rate[0] += bool(k and k["verdict"] == "fail")
                rate[1] += 1
                if not k or k["verdict"] not in ("fail", "pass"):
                    problems.append(f"{cell['id']} repetition {r['index']}: {must[name]} not judged: {k}")
                elif not k.get("exposure", {}).get("count", 0) > 0:
                    problems.append(f"{cell['id']} repetition {r['index']}: {must[name]} not exercised: {k}")
                others = [x["name"] for x in r["checks"] if x["verdict"] == "fail" and x["name"] != must[name]]
                if others: problems.append(f"{cell['id']} repetition {r['index']}: other checks failed: {others}")
            elif not k or k["verdict"] != "fail": problems.append(f"{cell['id']} repetition {r['index']}: {must[name]} did not fail")
    want = "bug-caught" if name in must else "ok"
    if name in co_scheduled:
        pass  # a repetition that missed makes the cell's outcome say so; the rate below is the figure
    elif cell["outcome"]["kind"] != want: problems.append(f"{cell['id']}: {cell['outcome']['summary']}, want {want}")
for name in must:
    for start in ("fork", "spawn", "forkserver", "thread"):
        if (name, start) not in seen: problems.append(f"{name} never ran under {start}")
pre = sum(r["metrics"].get("chaos_preemptions", 0) for cell in chaos["cells"] for r in cell["repetitions"])
if pre == 0: problems.append("no worker was ever preempted")
met = sum(r["metrics"].get("chaos_rendezvous", 0) for cell in chaos["cells"] for r in cell["repetitions"])
if met == 0: problems.append("no overlap burst ever released the workers together")
for cell in calm["cells"]:
    if any(k.startswith("chaos") for r in cell["repetitions"] for k in r["metrics"]):
        problems.append(f"{cell['id']}: chaos recorded without --chaos")
    if any(w.get("chaos_recent") for r in cell["repetitions"] for w in r["workers"]):
        problems.append(f"{cell['id']}: perturbations recorded without --chaos")
for name, (caught, total) in sorted(rates.items()):
    print(f"measured: {name} caught by {must[name]} in {caught} of {total} repetitions (needs two cores at once)")
for p in problems: print("FAIL:", p)
print(f"chaos: {len(seen) - sum(1 for n, _ in seen if n in co_scheduled)} luck-dependent bug cells caught in all {reps} repetitions, {pre:.0f} preemptions, "
      f"{len(problems)} problem(s)")
sys.exit(1 if problems else 0)
PY
exit $status
