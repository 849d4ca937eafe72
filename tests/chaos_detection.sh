#!/usr/bin/env bash
# The detection table of docs/chaos.md: each luck-dependent planted bug of tests/planted/luck.cc
# (built out of tree against the installed package, as a user's project is) run with and without
# --chaos in one run, under fork, spawn and forkserver, the two columns of each row one after the
# other (their order alternating from row to row, so a slow minute of the machine falls on both).
# Each run holds the bug and its clean twin. Prints the Markdown table and writes detection.json.
#
# usage: chaos_detection.sh BENCH OUTDIR [REPETITIONS] [SEED] [--assert]
#   --assert: exit 1 unless every row marked "held" below is caught in every repetition with
#   --chaos and never less often than without, and every twin stays clean. The row not held, a
#   plain `+= 1` at 2 000 steps, is luck with or without chaos on two vCPUs: its one-instruction
#   window meets the other worker's only while both run at once (docs/chaos.md has its rates).
set -uo pipefail
bench=$1
out=$2
reps=${3:-10}
seed=${4:-7}
assert=${5:-}
rm -rf "$out" && mkdir -p "$out"

# row|scenario|bug variant|twin|check|procs|steps|held (whether --assert holds it to every repetition)
rows=(
  "tally-few|luck-tally|unlocked|atomic|lost-updates|2|2000|no"
  "tally-many|luck-tally|unlocked|atomic|lost-updates|2|200000|yes"
  "pair|luck-pair|unlocked-read|locked-read|consistent-snapshots|2|200000|yes"
  "counter|luck-counter|unlocked|locked|lost-updates|3|1000|yes"
  "seqlock|luck-seqlock|no-recheck|recheck|consistent-snapshots|3|200|yes"
  "publish|luck-publish|flag-first|data-first|consistent-snapshots|2|2000|yes"
)
i=0
for start in fork spawn forkserver; do
  for row in "${rows[@]}"; do
    IFS='|' read -r name scenario bug twin check procs steps held <<<"$row"
    order=("off" "on")
    [ $((i % 2)) -eq 1 ] && order=("on" "off")
    i=$((i + 1))
    for chaos in "${order[@]}"; do
      flags=()
      [ "$chaos" = on ] && flags=(--chaos "$seed")
      dir=$out/$name-$start-$chaos
      echo "[$(date +%H:%M:%S)] $name $start chaos $chaos" >&2
      "$bench" run --known-bugs --scenario "$scenario" --start "$start" --procs "$procs" --steps "$steps" \
        --repetitions "$reps" --hang-timeout 5 "${flags[@]}" --out "$dir" --format none >"$dir.log" 2>&1
      code=$?
      # Exit 1 is an unexpected cell (a miss under chaos, where the bug is must-fail): the table
      # says how often; anything else is a broken run.
      if [ $code -gt 1 ]; then
        tail -20 "$dir.log" >&2
        echo "FAIL: $name under $start, chaos $chaos: exited $code" >&2
        exit 1
      fi
    done
  done
done

python3 - "$out" "$reps" "$seed" "$assert" "${rows[@]}" <<'PY'
import json, sys
out, reps, seed, assert_ = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] == "--assert"
rows = [r.split("|") for r in sys.argv[5:]]
starts = ["fork", "spawn", "forkserver"]
table, problems = [], []
for name, scenario, bug, twin, check, procs, steps, held in rows:
    entry = {"row": name, "bug": f"{scenario}/{bug}", "twin": f"{scenario}/{twin}", "check": check,
             "procs": int(procs), "steps": int(steps), "held": held == "yes", "caught": {}, "twin_clean": {}}
    for start in starts:
        for chaos in ("off", "on"):
            cells = json.load(open(f"{out}/{name}-{start}-{chaos}/results.json"))["cells"]
            caught = clean = 0
            for cell in cells:
                variant = cell["config"]["variant"]
                for r in cell["repetitions"]:
                    verdicts = {c["name"]: c["verdict"] for c in r["checks"]}
                    if variant == bug and verdicts.get(check) == "fail":
                        caught += 1
                    if variant == twin and r.get("status") == "completed" and \
                            not any(v in ("fail", "unknown") for v in verdicts.values()):
                        clean += 1
            entry["caught"][f"{start}/{chaos}"] = caught
            entry["twin_clean"][f"{start}/{chaos}"] = clean
            if clean != reps:
                problems.append(f"{entry['twin']} under {start}, chaos {chaos}: clean in {clean} of {reps}")
        without, with_ = entry["caught"][f"{start}/off"], entry["caught"][f"{start}/on"]
        if with_ < without and entry["held"]:
            problems.append(f"{entry['bug']} under {start}: caught {with_} with --chaos, {without} without")
        if entry["held"] and with_ != reps:
            problems.append(f"{entry['bug']} under {start}: caught {with_} of {reps} with --chaos")
    table.append(entry)
json.dump({"repetitions": reps, "chaos_seed": int(seed), "rows": table}, open(f"{out}/detection.json", "w"), indent=1)
print(f"| planted bug | check | procs × steps | " + " | ".join(f"{s}: without / with --chaos {seed}" for s in starts) + " | twin clean |")
print("|---|---|---|" + "---|" * len(starts) + "---|")
for e in table:
    cols = " | ".join(f"{e['caught'][s + '/off']} / {e['caught'][s + '/on']}" for s in starts)
    twin_total = sum(e["twin_clean"].values())
    print(f"| `{e['bug']}` | {e['check']} | {e['procs']} × {e['steps']} | {cols} | "
          f"{twin_total} of {reps * 2 * len(starts)} |")
print(f"\n(repetitions caught of {reps}; twin: repetitions clean with and without --chaos)")
for p in problems: print("PROBLEM:", p)
sys.exit(1 if assert_ and problems else 0)
PY
