// sharing_findings: what the Python hooks of `sharebench exec` (python/sharebench_watch.py) saw,
// turned into the exec cell's sharing checks, its notes, and what the process table learns from
// them. Pure functions over the events file's JSON lines, so each rule is tested on crafted events
// (tests/exec_unit_test.cc) as well as on real programs (tests/exec_test.sh).
//
// The checks are one file each in checks/ (fork-safety, updates-shared, model-learned,
// optimizer-state-shared, grads-delivered, copy-on-read, deaths-noticed, and the races on shared
// state: lost-updates, consistent-snapshots, mutual-exclusion, buffer-lifetime, random-streams),
// registered in one table (checks/exec_checks.cc). Each carries its exposure (how often its
// situation arose); one whose situation never arose is `not exercised`, never `pass`.
// Notes (never failures): lost increments of a shared step counter, Python threads or CUDA at a
// fork, private copies changed without an optimizer, /dev/shm and descriptor headroom, intra-op
// threads against cores, failures of the hooks themselves.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/results/results.h"

namespace sharebench {

// The version of the events' protocol this runner reads (python/events_schema.json's "version",
// sharebench_watch.py's PROTOCOL). Events of another are not judged: every sharing check is
// `unknown`, saying which versions met.
inline constexpr int kExecEventsProtocol = 1;

// The events file's lines, each a JSON object; a line that is not one (a process killed mid-write)
// is skipped.
std::vector<nlohmann::json> read_sharing_events(const std::string& path);

// What the rules need to know beside the events: the machine's headroom and the cell's options.
struct SharingContext {
  std::string forced_start;  // --mp-start ("" when the program chose)
  bool harness_ended_it = false;  // a hang, a deadline, --duration, an interrupt or a --fault: its kills are not deaths
  int cores = 1;
  double dev_shm_size_mb = 0, dev_shm_used_mb_before = 0, dev_shm_used_mb_peak = 0;
};

struct SharingFindings {
  std::vector<Check> checks;             // each with its exposure
  std::map<std::string, std::string> to_raise;  // per check: what would have put it to the test
  std::vector<std::string> notes;
  std::map<std::string, double> metrics;
};

// Adds what the events know to the process table: processes too short-lived for the scans (with
// their command, times and end), exit statuses, the last lines of a Python traceback. `t0_s` is the
// program's start on the events' clock (CLOCK_MONOTONIC, seconds).
void merge_events_into_processes(const std::vector<nlohmann::json>& events, double t0_s,
                                 std::vector<ProcessRecord>& processes);

// The sharing checks, notes and metrics of one repetition.
SharingFindings judge_sharing(const std::vector<nlohmann::json>& events, const std::vector<ProcessRecord>& processes,
                              const SharingContext& machine);

// One line saying why a program hung or failed: where the program waits (its Python stack) and
// which of its processes ended badly before, with their errors. "" when there is nothing to say.
std::string diagnose_program(const std::vector<ProcessRecord>& processes, bool hung);

}  // namespace sharebench
