#!/usr/bin/env python3
"""The typed protocol between exec's two sides (wings/exec/python/events_schema.json), checked
against both, so a field renamed on one side fails here rather than making a check silently vanish:

  the Python side   real programs (tests/exec_programs/, under fork and spawn) run with the hooks;
                    every event they write has the common fields, its kind's required ones, and no
                    field the schema does not declare, nested objects included;
  the C++ side      every key sharing_findings.cc and wings/exec/checks/*.cc read (text_of, number_of, int_of, has_number,
                    array_of, value, contains, find, events_of, last_event_of) is declared;
  the version       the schema's, sharebench_watch.py's PROTOCOL and kExecEventsProtocol agree.

usage: exec_protocol_test.py SOURCE_DIR OUTDIR
"""
import json
import os
import re
import subprocess
import sys

src, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
hooks = os.path.join(src, "wings", "exec", "python")
schema = json.load(open(os.path.join(hooks, "events_schema.json")))
problems = []

# --- the version, on all three --------------------------------------------------------------------------
watch = open(os.path.join(hooks, "sharebench_watch.py")).read()
header = open(os.path.join(src, "wings", "exec", "sharing_findings.h")).read()
py_version = int(re.search(r"^PROTOCOL = (\d+)", watch, re.M).group(1))
cc_version = int(re.search(r"kExecEventsProtocol = (\d+);", header).group(1))
if not schema["version"] == py_version == cc_version:
    problems.append("versions differ: schema %s, sharebench_watch.py %s, sharing_findings.h %s"
                    % (schema["version"], py_version, cc_version))

declared_fields = set(schema["common"])
for spec in list(schema["events"].values()) + list(schema["objects"].values()):
    declared_fields.update(spec["required"] + spec["optional"])
declared_fields.update(schema["objects"])


def check_object(where, obj, spec):
    for key in spec["required"]:
        if key not in obj:
            problems.append("%s: required field %r missing (has %s)" % (where, key, sorted(obj)))
    allowed = set(spec["required"]) | set(spec["optional"])
    for key, value in obj.items():
        if key not in allowed:
            problems.append("%s: field %r is not in events_schema.json" % (where, key))
        nested = schema["objects"].get(key)
        if nested is None or value is None:
            continue
        for i, item in enumerate(value if isinstance(value, list) else [value]):
            if isinstance(item, dict):
                check_object("%s.%s[%d]" % (where, key, i), item, nested)


# --- the Python side: what real programs write --------------------------------------------------------------
programs = [("a3c_group_step.py", ["--num-steps", "20"]), ("a3c_lazy_state.py", ["--updates", "20"]),
            ("workers_die_unnoticed.py", []), ("pool_map.py", []), ("spawn_rank_raises.py", []),
            ("hogwild_no_zero_grad.py", ["--fixed"]), ("dataset_python_lists.py", ["--samples", "20000"]),
            ("hogwild_converted_after_share.py", []),
            # the race hooks (sharebench_shared_state.py, sharebench_sends.py): shared-state reports
            ("a3c_counter_unlocked.py", ["--num-steps", "200"]), ("send_then_refill.py", ["--batches", "20"]),
            ("array_printed_while_negated.py", ["--seconds", "0.3"]),
            ("hot_reload_server.py", ["--requests", "300"])]
seen_kinds = set()
for start in ("fork", "spawn"):
    for name, args in programs:
        events = os.path.join(out, "%s-%s.jsonl" % (name, start))
        open(events, "w").close()
        env = dict(os.environ, SHAREBENCH_EVENTS=events, SHAREBENCH_MP_START=start,
                   PYTHONPATH=hooks + (":" + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else ""))
        subprocess.run(["/usr/bin/python3", os.path.join(src, "tests", "exec_programs", name)] + args, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
        lines = open(events).read().splitlines()
        if not lines:
            problems.append("%s under %s: no events at all" % (name, start))
        for n, line in enumerate(lines):
            event = json.loads(line)
            kind = event.get("event")
            seen_kinds.add(kind)
            spec = schema["events"].get(kind)
            where = "%s under %s, line %d (%s)" % (name, start, n + 1, kind)
            if spec is None:
                problems.append("%s: event kind %r is not in events_schema.json" % (where, kind))
                continue
            check_object(where, event, {"required": schema["common"] + spec["required"],
                                        "optional": spec["optional"]})
for kind in ("start", "torch", "handoff", "received", "end", "observed", "terminated", "reaped", "shared-state"):
    if kind not in seen_kinds:
        problems.append("no program wrote a %r event: the test does not exercise it" % kind)

# --- the C++ side: every key it reads is declared -------------------------------------------------------------
# The rules: sharing_findings.cc and the one-file checks of wings/exec/checks/.
checks_dir = os.path.join(src, "wings", "exec", "checks")
cc = "\n".join(open(path).read() for path in [os.path.join(src, "wings", "exec", "sharing_findings.cc")] +
               sorted(os.path.join(checks_dir, f) for f in os.listdir(checks_dir) if f.endswith(".cc")))
readers = r"(?:text_of|number_of|int_of|has_number|array_of)\([^,()]+(?:\([^()]*\))?, \"([a-z_-]+)\"" \
          r"|\b(?:value|contains|find)\(\"([a-z_-]+)\"|(?<!metrics)\[\"([a-z_-]+)\"\]"
read_keys = {next(g for g in m.groups() if g) for m in re.finditer(readers, cc)}
kinds_read = set(re.findall(r"(?:events_of|last_event_of)\(events, \"([a-z-]+)\"", cc))
kinds_read |= set(re.findall(r"text_of\([^,]+, \"event\"\) == \"([a-z-]+)\"", cc))
kinds_read |= set(re.findall(r"kind == \"([a-z-]+)\"", cc))
if len(read_keys) < 20 or len(kinds_read) < 6:
    problems.append("the C++ scan found only %d keys and %d kinds: its patterns no longer match the code"
                    % (len(read_keys), len(kinds_read)))
for key in sorted(read_keys - declared_fields - set(schema["events"])):
    problems.append("the rules (sharing_findings.cc, checks/) read %r, which events_schema.json does not declare" % key)
for kind in sorted(kinds_read - set(schema["events"])):
    problems.append("sharing_findings.cc reads events of kind %r, which events_schema.json does not declare" % kind)

for p in problems:
    print("FAIL:", p)
print("protocol %d: %d programs under fork and spawn, %d event kinds seen; C++ reads %d keys of %d kinds; %d problem(s)"
      % (schema["version"], len(programs), len(seen_kinds), len(read_keys), len(kinds_read), len(problems)))
sys.exit(1 if problems else 0)
