#!/usr/bin/env python3
"""The console samples of the README and of docs/*.md cannot go stale: every fenced block whose
first line is `$ build/sharebench ...` is run with this build, and each line it shows must appear in what the
binary prints now, compared with the figures masked (every number becomes #, a `~` before one is
dropped, runs of spaces become one) since rates, pids and times differ from run to run. A line
`...` in a sample stands for lines left out; a line ending in ` …` for a printed line that begins
so (what follows varies: the A/A control adds "(a false difference ...)" when its interval parts). A changed word, column, check name or verdict fails,
naming the sample and the line.

A sample preceded by `<!-- replay: FILE -->` is a `run`'s (the default run's, the locked pair's), whose
answer differs from run to run (under load the locked pair came out tied after 20 blocks): it is printed again from the results file that run wrote (`report FILE --format console`,
the file's command must be the one shown), and its recommendation must fit one screen (at most 50
lines of at most 100 characters). With --live (the slow suite) those samples' commands run
themselves instead, held to the screen's size and the sample's first lines.

    python3 tests/readme_samples_test.py SHAREBENCH SOURCE_DIR OUTDIR [--live]
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

binary, src, out = sys.argv[1], sys.argv[2], sys.argv[3]
live = sys.argv[4:] == ["--live"]  # run the replayed samples' commands themselves (the slow suite), and only those
ELLIPSIS = " …"  # a shown line that ends so stands for any printed line it begins
shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)


def masked(line):
    line = re.sub(r"~?[-+]?\d[\d.,]*", "#", line)
    return re.sub(r"\s+", " ", line).strip()


def samples(text):
    """(command words, shown lines, replayed results file or None) of each fenced block that opens
    with `$ build/sharebench`."""
    for replay, block in re.findall(r"^(?:<!-- replay: (\S+) -->\n)?```[a-z]*\n(.*?)^```", text, re.M | re.S):
        lines = block.rstrip("\n").split("\n")
        if lines and (lines[0] + " ").startswith("$ build/sharebench "):
            yield shlex.split(lines[0][2:]), [l for l in lines[1:] if l.strip() and l.strip() != "..."], replay or None


def first_screen(printed):
    """The recommendation section: from its first line to the blank line that ends it."""
    lines = printed.split("\n")
    start = next((i for i, l in enumerate(lines) if l.startswith("Recommendation:")), None)
    if start is None:
        return []
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]


def first_screen_problems(name, printed):
    """The default run's answer fits one screen: at most 50 lines, each at most 100 characters."""
    screen = first_screen(printed)
    out = []
    if not screen:
        out.append(f"{name}: no recommendation printed")
    if len(screen) > 50:
        out.append(f"{name}: the recommendation is {len(screen)} lines, over 50")
    out += [f"{name}: a line of {len(l)} characters, over 100: {l}" for l in screen if len(l) > 100]
    return out


problems = []
count = 0
def every_sample():
    """The README's samples, then those of docs/*.md: every console sample a reader meets."""
    for page in ["README.md"] + sorted(os.path.join("docs", f) for f in os.listdir(os.path.join(src, "docs")) if f.endswith(".md")):
        for sample in samples(open(os.path.join(src, page), encoding="utf-8").read()):
            yield (page,) + sample


for n, (page, words, shown, replay) in enumerate(every_sample()):
    count += 1
    shown_words = words
    # Written under OUTDIR, not runs/ in the checkout: --out goes right after the subcommand (before
    # exec's `--`); --color never, as a sample shows no colour.
    words = [binary, words[1], "--out", os.path.join(out, f"sample{n}"), "--color", "never"] + words[2:]
    if replay and not live:
        # The default run's answer differs from run to run: its sample is printed again from the results
        # file that run wrote, which must be the run of the command shown.
        recorded = json.load(open(os.path.join(src, replay), encoding="utf-8"))["command"]
        kept = [w for i, w in enumerate(recorded[1:]) if w not in ("--out", "--color") and recorded[i] not in ("--out", "--color")]
        if kept != shown_words[1:]:
            problems.append(f"sample {n}: {replay} was written by `sharebench {' '.join(kept)}`, not the command shown")
        words = [binary, "report", os.path.join(src, replay), "--format", "console", "--out", os.path.join(out, f"sample{n}"),
                 "--color", "never"]
        os.makedirs(os.path.join(out, f"sample{n}"), exist_ok=True)
    env = dict(os.environ, PATH="/usr/bin:" + os.environ.get("PATH", ""))  # python3: Debian's, with torch
    p = subprocess.run(words, cwd=src, env=env, capture_output=True, text=True, timeout=900)
    printed = {masked(l) for l in (p.stdout + p.stderr).split("\n")}
    if replay:
        problems += first_screen_problems(f"sample {n}", p.stdout)
        if live:  # the run itself: its answer is its own; the layout's first lines are the sample's
            shown = [l for l in shown if l.startswith(("Recommendation:", "  ± "))]
    elif live:
        continue

    def shown_in_print(line):
        if line.endswith(ELLIPSIS):
            head = masked(line[:-len(ELLIPSIS)])
            return any(l.startswith(head) for l in printed)
        return masked(line) in printed

    missing = [l for l in shown if not shown_in_print(l)]
    name = " ".join(shlex.quote(w) for w in (words[:3] if replay and not live else words[:2] + words[6:]))
    for l in missing:
        problems.append(f"sample {n} of {page} ({name}): this line is not printed any more:\n    {l}")
    if missing:
        problems.append(f"sample {n}: what it prints now:\n" + "\n".join("    " + l for l in p.stdout.split("\n")[:40]))
    print(f"sample {n} of {page}: {len(shown) - len(missing)} of {len(shown)} lines as shown (exit {p.returncode})")

if count == 0:
    problems.append("no `$ build/sharebench` sample found in README.md or docs/: the test checks nothing")
for p in problems:
    print("FAIL:", p)
sys.exit(1 if problems else 0)
