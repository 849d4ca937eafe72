#!/usr/bin/env python3
"""The README's console samples cannot go stale: every fenced block whose first line is
`$ build/sharebench ...` is run with this build, and each line it shows must appear in what the
binary prints now, compared with the figures masked (every number becomes #, a `~` before one is
dropped, runs of spaces become one) since rates, pids and times differ from run to run. A line
`...` in a sample stands for lines left out; a line ending in ` …` for a printed line that begins
so (what follows varies: the A/A control adds "(a false difference ...)" when its interval parts). A changed word, column, check name or verdict fails,
naming the sample and the line.

    python3 tests/readme_samples_test.py SHAREBENCH SOURCE_DIR OUTDIR
"""
import os
import re
import shlex
import shutil
import subprocess
import sys

binary, src, out = sys.argv[1], sys.argv[2], sys.argv[3]
ELLIPSIS = " …"  # a shown line that ends so stands for any printed line it begins
shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)


def masked(line):
    line = re.sub(r"~?[-+]?\d[\d.,]*", "#", line)
    return re.sub(r"\s+", " ", line).strip()


def samples(text):
    """(command words, shown lines) of each fenced block that opens with `$ build/sharebench`."""
    for block in re.findall(r"^```[a-z]*\n(.*?)^```", text, re.M | re.S):
        lines = block.rstrip("\n").split("\n")
        if lines and lines[0].startswith("$ build/sharebench "):
            yield shlex.split(lines[0][2:]), [l for l in lines[1:] if l.strip() and l.strip() != "..."]


problems = []
count = 0
for n, (words, shown) in enumerate(samples(open(os.path.join(src, "README.md"), encoding="utf-8").read())):
    count += 1
    # Written under OUTDIR, not runs/ in the checkout: --out goes right after the subcommand (before
    # exec's `--`); --color never, as a sample shows no colour.
    words = [binary, words[1], "--out", os.path.join(out, f"sample{n}"), "--color", "never"] + words[2:]
    env = dict(os.environ, PATH="/usr/bin:" + os.environ.get("PATH", ""))  # python3: Debian's, with torch
    p = subprocess.run(words, cwd=src, env=env, capture_output=True, text=True, timeout=600)
    printed = {masked(l) for l in (p.stdout + p.stderr).split("\n")}

    def shown_in_print(line):
        if line.endswith(ELLIPSIS):
            head = masked(line[:-len(ELLIPSIS)])
            return any(l.startswith(head) for l in printed)
        return masked(line) in printed

    missing = [l for l in shown if not shown_in_print(l)]
    name = " ".join(shlex.quote(w) for w in words[:2] + words[6:])
    for l in missing:
        problems.append(f"sample {n} ({name}): this line is not printed any more:\n    {l}")
    if missing:
        problems.append(f"sample {n}: what it prints now:\n" + "\n".join("    " + l for l in p.stdout.split("\n")[:40]))
    print(f"sample {n}: {len(shown) - len(missing)} of {len(shown)} lines as shown (exit {p.returncode})")

if count == 0:
    problems.append("no `$ build/sharebench` sample found in README.md: the test checks nothing")
for p in problems:
    print("FAIL:", p)
sys.exit(1 if problems else 0)
