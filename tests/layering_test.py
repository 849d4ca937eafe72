#!/usr/bin/env python3
"""The code keeps the layers docs/architecture.md declares, and the core stays in small pieces.

Reads the "## Layers" table of docs/architecture.md (one row per layer, lowest first, each naming
its folders) and every `#include "..."` of the project's own sources: a file may include a file of
its own folder or of a folder in a lower layer, never one in the same layer's other folders or
above. Then the feature wings (the table's wings/ folders: exec, soak, peers): each is one folder
that only the app above it includes, no source file named for it lives outside it, and the core
(harness/) names none of them in its code. Then, for the core: no file over 350 lines and no
function over 80 (a function is measured from the line of its opening brace to its closing one, by
brace matching with strings and comments stripped). And no check name is spelled as a string
literal outside its one declaration: harness/results/check_ids.h for the core's, a wing's
*_check_ids.h for the wing's. Fails naming each break.

    python3 tests/layering_test.py SOURCE_DIR
"""
import os
import re
import sys

src = sys.argv[1]
problems = []

MAX_FILE_LINES = 350
MAX_FUNCTION_LINES = 80
SOURCE_DIRS = ["harness", "torch_support", "workload", "scenarios", "reports", "cli", "wings", "app", "bench"]


def read(path):
    return open(os.path.join(src, path), encoding="utf-8").read()


# --- the declared layers ---------------------------------------------------------------------------
arch = read("docs/architecture.md")
start = arch.index("## Layers")
block = re.search(r"```text\n(.*?)```", arch[start:], re.S)
if not block:
    sys.exit("docs/architecture.md: no ```text block under ## Layers")
layer_of = {}
for line in block.group(1).splitlines():
    m = re.match(r"\s*(\d+)\s+(.*?)\s*(?:#.*)?$", line)
    if not m:
        continue
    for folder in re.split(r"[,\s]+", m.group(2)):
        if folder:
            layer_of[folder.rstrip("/")] = int(m.group(1))
if len(layer_of) < 10:
    sys.exit(f"docs/architecture.md: the ## Layers table names only {len(layer_of)} folders")


def folder_of(path):
    """The most specific declared folder that holds `path` (harness/sync/x.h -> harness/sync)."""
    parts = path.split("/")
    for n in range(len(parts) - 1, 0, -1):
        candidate = "/".join(parts[:n])
        if candidate in layer_of:
            return candidate
    return None


sources = []
for top in SOURCE_DIRS:
    for root, _, files in os.walk(os.path.join(src, top)):
        for name in files:
            if name.endswith((".cc", ".h")):
                sources.append(os.path.relpath(os.path.join(root, name), src))
sources.sort()

for path in sources:
    own = folder_of(path)
    if own is None:
        problems.append(f"{path}: its folder is in no layer of docs/architecture.md's ## Layers")
        continue
    for lineno, line in enumerate(read(path).splitlines(), 1):
        m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
        if not m or not os.path.exists(os.path.join(src, m.group(1))):
            continue  # generated or system headers
        target = folder_of(m.group(1))
        if target is None or target == own:
            continue
        if layer_of[target] >= layer_of[own]:
            problems.append(f"{path}:{lineno}: includes {m.group(1)}: {target}/ (layer {layer_of[target]}) "
                            f"is not below {own}/ (layer {layer_of[own]})")


# --- sizes in the core ------------------------------------------------------------------------------
def strip_code(text):
    """Strings, characters and comments replaced by spaces; newlines kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():
                out.append(c)  # a digit separator: 1'000
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (j + 1 - i))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def long_functions(text):
    """(first line, lines, head) of each function body longer than MAX_FUNCTION_LINES."""
    code = strip_code(text)
    found = []
    stack = []  # per open brace: (is_function, line, head)
    head_start = 0
    for i, c in enumerate(code):
        if c in ";}":
            if c == "}" and stack:
                is_fn, line, head = stack.pop()
                if is_fn:
                    lines = code.count("\n", 0, i) + 1 - line + 1
                    if lines > MAX_FUNCTION_LINES:
                        found.append((line, lines, head))
            head_start = i + 1
        elif c == "{":
            head = " ".join(code[head_start:i].split())
            inside_function = any(s[0] for s in stack)
            transparent = re.match(r"(namespace|extern\b|(template\s*<.*>\s*)?(class|struct|union|enum)\b)", head)
            is_fn = not inside_function and not transparent and head.endswith(")") or \
                (not inside_function and re.search(r"\)\s*(const|override|noexcept|final|\s)*$", head) and not transparent)
            stack.append((bool(is_fn), code.count("\n", 0, i) + 1, head[-70:]))
            head_start = i + 1
    return found


for path in sources:
    if not path.startswith("harness/"):
        continue
    text = read(path)
    lines = text.count("\n")
    if lines > MAX_FILE_LINES:
        problems.append(f"{path}: {lines} lines, over the core's {MAX_FILE_LINES}")
    for line, length, head in long_functions(text):
        problems.append(f"{path}:{line}: a function of {length} lines, over {MAX_FUNCTION_LINES}: {head}")

# --- the feature wings ------------------------------------------------------------------------------
wings = sorted(f for f in layer_of if f.startswith("wings/"))
if len(wings) < 3:
    problems.append(f"docs/architecture.md: the ## Layers table names {len(wings)} wings (want exec, soak, peers)")
# What the core may not spell, per wing: an identifier with the wing's name as one of its words
# (exec_only, SoakShare; CLOEXEC and execv are words of their own), or a name the wing's headers
# declare (ProgramSupervisor, PeerRatios, kModelLearned).
WING_WORDS = {"wings/exec": {"exec"}, "wings/soak": {"soak"}, "wings/peers": {"torch_mp"}}


def words_of(identifier):
    """exec_only -> exec, only; kWorkerExitExecvFailed -> k, worker, exit, exec, failed."""
    out = []
    for part in identifier.split("_"):
        out += [w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+", part)]
    return out


def declared_names(wing):
    names = set()
    for path in sources:
        if path.startswith(wing + "/") and path.endswith(".h"):
            code = strip_code(read(path))
            names |= set(re.findall(r"\b(?:class|struct|enum class|enum)\s+(\w+)", code))
            names |= set(re.findall(r"\bconstexpr\s+[\w:<>]+\s+(k\w+)", code))
            names |= set(re.findall(r"^(?=\w)[\w:<>,*& ]+?[\s*&](\w+)\(", code, re.M))
    return {n for n in names if len(n) >= 6}


for wing in wings:
    if not os.path.isdir(os.path.join(src, wing)):
        problems.append(f"{wing}: named in docs/architecture.md's ## Layers but not there")
        continue
    stem = wing.split("/")[1].rstrip("s")  # exec, soak, peer
    for path in sources:
        inside = path.startswith(wing + "/")
        if not inside and os.path.basename(path).startswith(stem):
            problems.append(f"{path}: named for the {wing} wing but outside it (a wing is one folder)")
        if inside or path.startswith("app/"):
            continue
        for lineno, line in enumerate(read(path).splitlines(), 1):
            m = re.match(r'\s*#\s*include\s+"(wings/[^/]+)/', line)
            if m and m.group(1) == wing:
                problems.append(f"{path}:{lineno}: includes the {wing} wing: only app/ may")
    words = WING_WORDS.get(wing)
    if words is None:
        problems.append(f"{wing}: tests/layering_test.py has no words to keep it out of the core")
        continue
    names_of_wing = declared_names(wing)
    for path in sources:
        if not path.startswith("harness/"):
            continue
        code = strip_code(read(path))
        for m in re.finditer(r"\b[A-Za-z_]\w*", code):
            token = m.group(0)
            if token in names_of_wing or words & set(words_of(token)) or any(w in token for w in words if "_" in w):
                lineno = code.count("\n", 0, m.start()) + 1
                problems.append(f"{path}:{lineno}: the core names the {wing} wing ({token}): the wing holds it")

# --- check names, declared once ---------------------------------------------------------------------
# A detector may declare its own check's id in its own file (nothing else names a new one).
id_files = ["harness/results/check_ids.h"] + [p for p in sources if p.startswith("wings/") and p.endswith("check_ids.h")]
id_files += [p for p in sources if p.startswith("harness/detectors/") and "inline constexpr CheckId" in read(p)]
declared = {}
for ids_path in id_files:
    found = dict(re.findall(r'inline constexpr CheckId (k\w+)\{"([a-z0-9-]+)"\}', read(ids_path)))
    if not found:
        problems.append(f"{ids_path}: no check ids found")
    declared.update(found)
if len(declared) < 20:
    problems.append(f"{id_files}: only {len(declared)} check ids found")
names = set(declared.values())
for path in sources:
    if path in id_files:
        continue
    for lineno, line in enumerate(read(path).splitlines(), 1):
        if "NOLINT(check-id)" in line:
            continue  # the same word, meaning something else (a chart's kind), said so on the line
        code = line.split("//")[0]
        for literal in re.findall(r'"([a-z0-9-]+)"', code):
            if literal in names:
                problems.append(f'{path}:{lineno}: the check name "{literal}" as a literal: use its '
                                f"CheckId from {' or '.join(id_files)}")

for p in problems:
    print(p)
print(f"layering: {len(sources)} files, {len(layer_of)} folders in {len(set(layer_of.values()))} layers, "
      f"wings {', '.join(w.split('/')[1] for w in wings)}, {len(names)} check ids; {len(problems)} problem(s)")
sys.exit(1 if problems else 0)
