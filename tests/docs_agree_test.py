#!/usr/bin/env python3
"""The README, docs/ and --help agree with the code: every scenario, variant and known bug that
`sharebench list --format json` lists is in the README's scenario table and in docs/scenarios.md
(known bugs in docs/known-bugs.md too); every check the code can emit is in the check catalogue
of docs/results-schema.md, once; every option of `run --help` and `exec --help` is in the README's
command synopsis; every command's --help states the exit codes, and the README the same ones.
Fails naming each disagreement.

    python3 tests/docs_agree_test.py SHAREBENCH SOURCE_DIR
"""
import json
import os
import re
import subprocess
import sys

binary, src = sys.argv[1], sys.argv[2]
problems = []


def read(path):
    return open(os.path.join(src, path), encoding="utf-8").read()


def section(text, heading):
    start = text.index(heading)
    rest = text[start + len(heading):]
    end = re.search(r"^## ", rest, re.M)
    return rest[:end.start()] if end else rest


readme = read("README.md")
scenarios_md = read("docs/scenarios.md")
known_bugs_md = read("docs/known-bugs.md")
schema_md = read("docs/results-schema.md")

# --- scenarios, variants, known bugs --------------------------------------------------------------
listed = json.loads(subprocess.check_output([binary, "list", "--format", "json"]))
table = section(readme, "## Scenarios")
rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| `([a-z0-9-]+)` \|.*$", table, re.M)}
for sc in listed:
    name = sc["name"]
    if name == "exec":
        continue  # a user's program: `sharebench exec`, its own section
    row = rows.get(name)
    if row is None:
        problems.append(f"README: the scenario table has no row for `{name}`")
        continue
    for v in sc["variants"]:
        if f"`{v['name']}`" not in row:
            problems.append(f"README: the `{name}` row does not name its variant `{v['name']}`")
        if v["known_bug"] and f"`{name}/{v['name']}`" not in known_bugs_md:
            problems.append(f"docs/known-bugs.md: no `{name}/{v['name']}`")
    if not re.search(rf"^## `?{re.escape(name)}`?\b", scenarios_md, re.M):
        problems.append(f"docs/scenarios.md: no section for `{name}`")
for name in rows:
    if name not in {sc["name"] for sc in listed}:
        problems.append(f"README: the scenario table names `{name}`, which `list` does not know")

# The default matrix's size, as the README's Quick start states it: every correct variant of every
# scenario (a user's program aside) x fork, spawn, forkserver x 1 and 2 processes, where it can run.
cells = sum(1 for sc in listed if sc["name"] != "exec" for v in sc["variants"] if not v["known_bug"]
            for start in ("fork", "spawn", "forkserver") if start in sc["starts"]
            for procs in (1, 2) if procs >= sc.get("min_procs", 1))
stated = re.search(r"(\d+) cells\b", section(readme, "## Quick start"))
if not stated or int(stated.group(1)) != cells:
    problems.append(f"README: the Quick start says {stated.group(1) if stated else 'no'} cells; the default matrix has {cells}")

# --- checks -----------------------------------------------------------------------------------------
emitted = set()
for folder in ("harness", "scenarios", "wings"):
    for root, _, files in os.walk(os.path.join(src, folder)):
        for f in files:
            if not f.endswith((".cc", ".h")):
                continue
            text = open(os.path.join(root, f), encoding="utf-8").read()
            emitted |= set(re.findall(r'(?:\.check\(|\bCheck\{)\s*"([a-z][a-z0-9-]+)"', text))
# Every check id the project declares (harness/results/check_ids.h and each wing's *_check_ids.h:
# the code spells no other).
id_files = ["harness/results/check_ids.h"] + sorted(
    os.path.relpath(os.path.join(root, f), src) for root, _, files in os.walk(os.path.join(src, "wings"))
    for f in files if f.endswith("check_ids.h"))
id_files += sorted(os.path.join("harness/detectors", f) for f in os.listdir(os.path.join(src, "harness/detectors"))
                   if f.endswith(".cc"))  # a detector may declare its own check's id
for ids_path in id_files:
    emitted |= set(re.findall(r'inline constexpr CheckId k\w+\{"([a-z0-9-]+)"\}', read(ids_path)))
for sc in listed:
    for v in sc["variants"]:
        emitted |= set(v["must_fail"]) | set(v["may_fail"])
catalogue_names = set()
for line in re.findall(r"^\| (`[^|]+)\|", schema_md, re.M):
    catalogue_names |= set(re.findall(r"`([a-z][a-z0-9-]+)`", line.split("(")[0]))
for name in sorted(emitted - catalogue_names):
    problems.append(f"docs/results-schema.md: the check `{name}` is not in the catalogue")
firsts = [re.match(r"^\| `([a-z][a-z0-9-]+)`", l).group(1) for l in schema_md.splitlines() if re.match(r"^\| `[a-z][a-z0-9-]+`", l)]
for name in sorted({n for n in firsts if firsts.count(n) > 1}):
    problems.append(f"docs/results-schema.md: the check `{name}` has more than one row")

# --- options and exit codes ---------------------------------------------------------------------------
synopsis = section(readme, "## Commands")
for command in ("run", "exec", "soak", "report", "compare", "merge", "repro", "list"):
    help_text = subprocess.run([binary, command, "--help"], capture_output=True, text=True).stdout
    if "Exit codes:" not in help_text:
        problems.append(f"`{command} --help` does not state the exit codes")
    if command in ("run", "exec"):
        for flag in sorted(set(re.findall(r"^\s+(--[a-z][a-z-]+)", help_text, re.M)) - {"--help"}):
            if flag not in synopsis:
                problems.append(f"README: `{command} {flag}` is not in the command synopsis")
# A number the synopsis shows for an option is its default, as --help says.
for command in ("run", "exec", "soak"):
    help_text = subprocess.run([binary, command, "--help"], capture_output=True, text=True).stdout
    defaults = dict(re.findall(r"^\s+(--[a-z][a-z-]+) \S+=([^\s\]]+)", help_text, re.M))
    line = "\n".join(l for l in synopsis.split("build/sharebench ")[1:] if l.startswith(command + " "))
    for flag, value in re.findall(r"\[(--[a-z][a-z-]+) ([0-9][0-9.]*)\]", line):
        if flag in defaults and defaults[flag] != value:
            problems.append(f"README: `{command} {flag} {value}` in the synopsis, but its default is {defaults[flag]}")
for code in ("`0`", "`1`", "`2`", "`3`", "`128 + n`"):
    if code not in readme:
        problems.append(f"README: the exit code {code} is not stated")

for p in problems:
    print("FAIL:", p)
print(f"docs agree with the code: {len(problems)} disagreement(s)")
sys.exit(1 if problems else 0)
