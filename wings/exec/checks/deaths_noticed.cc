// deaths-noticed in a user's program: no child died of an uncaught exception or of a signal the
// program did not send while the program neither read its exit code nor failed itself. Reads the
// "end", "reaped", "observed" and "terminated" events, and the process table.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "wings/exec/checks/event_fields.h"
#include "wings/exec/checks/exec_checks.h"
#include "wings/exec/exec_check_ids.h"

namespace sharebench::exec_checks {

using nlohmann::json;

namespace {

// A child that died (an uncaught exception: its traceback; or a signal) counts as noticed when the
// program read its exit code (Process.exitcode: its own code, mp.spawn's join), ended it itself
// (terminate, kill: Pool, DataLoader, multiprocessing's exit function), or its parent failed in turn:
// raised an exception that names it (a DataLoader's "worker (pid 24529) is killed by signal", read
// by torch's SIGCHLD handler, not through exitcode) or ended in failure itself (a DataLoader's
// "worker (pid(s) 667) exited unexpectedly" names the one it looked at first; at the top, the
// program's own failure is exit-status's). Otherwise the program went on without a worker and the
// run says nothing: that is the finding; the parent that failed is judged in turn by its own parent.

}  // namespace

void judge_deaths_noticed(const ExecCheckInput& in, SharingFindings& f) {
  const std::vector<json>& events = in.events;
  const std::vector<ProcessRecord>& processes = in.processes;
  const SharingContext& m = in.machine;
  std::set<int> observed, ended_by_program;
  for (const json* e : events_of(events, "observed")) observed.insert(int_of(*e, "child"));
  for (const json* e : events_of(events, "terminated")) ended_by_program.insert(int_of(*e, "child"));
  std::map<int, const ProcessRecord*> by_pid;
  for (const ProcessRecord& p : processes) by_pid[p.pid] = &p;
  const auto failed = [](const ProcessRecord& p) {
    return p.end.rfind("exited 0", 0) != 0 && p.end.rfind("ended", 0) != 0;
  };
  // Who started each child: the process that called start() (its handoff), which under forkserver
  // is not its parent in the process table (the forkserver forked it).
  std::map<int, int> starter;
  for (const json* e : events_of(events, "handoff")) starter[int_of(*e, "child")] = int_of(*e, "pid");
  // Its parent (the one that started it) failed: ended in failure, or its own uncaught exception
  // names the child's pid as a word of its own.
  const auto parent_failed = [&](const ProcessRecord& child) {
    const auto started_by = starter.find(child.pid);
    const auto parent = by_pid.find(started_by != starter.end() ? started_by->second : child.ppid);
    if (parent == by_pid.end()) return false;
    if (parent->second->role == "child" && failed(*parent->second)) return true;
    if (parent->second->error.empty()) return false;
    const std::string& text = parent->second->error;
    const std::string pid = std::to_string(child.pid);
    for (std::size_t at = text.find(pid); at != std::string::npos; at = text.find(pid, at + 1)) {
      const bool starts = at == 0 || !std::isdigit(static_cast<unsigned char>(text[at - 1]));
      const bool ends = at + pid.size() == text.size() || !std::isdigit(static_cast<unsigned char>(text[at + pid.size()]));
      if (starts && ends) return true;
    }
    return false;
  };
  bool program_failed = false;
  for (const ProcessRecord& p : processes) {
    if (p.role == "program") program_failed = failed(p);
  }
  int ended = 0;
  std::vector<std::string> unnoticed;
  for (const ProcessRecord& p : processes) {
    if (p.role != "child") continue;
    const bool by_signal = p.end.rfind("killed by SIG", 0) == 0;
    const bool by_exit = p.end.rfind("exited ", 0) == 0;
    if (!by_signal && !by_exit) continue;
    ++ended;
    const bool died = by_signal || (p.end != "exited 0" && !p.error.empty());
    if (!died || observed.count(p.pid) || ended_by_program.count(p.pid) || parent_failed(p)) continue;
    unnoticed.push_back(fmt::format("pid {} (started at {}) {}{}", p.pid, child_started_at(events, p.pid), p.end,
                                    p.error.empty() ? "" : fmt::format(": {}", last_line(p.error))));
  }
  f.to_raise[std::string(checks::kDeathsNoticed)] = "a program whose children end while it runs";
  const Exposure seen{static_cast<double>(ended), "child processes seen to end"};
  if (unnoticed.empty() || program_failed || m.harness_ended_it) {
    f.checks.push_back(Check{checks::kDeathsNoticed, Verdict::kPass, 0.0,
                             unnoticed.empty() ? fmt::format("{} child process(es) ended; none died unnoticed", ended)
                                               : fmt::format("{} child(ren) died, and {}", unnoticed.size(),
                                                             program_failed ? "the program failed too (exit-status)"
                                                                            : "the harness had ended the run"),
                             seen});
    return;
  }
  f.checks.push_back(Check{checks::kDeathsNoticed, Verdict::kFail, static_cast<double>(unnoticed.size()),
                           fmt::format("{} child process(es) died and the program went on as if they had not (it never "
                                       "read their exit codes and exited 0): {}. Check each worker's exitcode after "
                                       "join() and fail when one is not 0, or use torch.multiprocessing.spawn, which "
                                       "re-raises a rank's exception",
                                       unnoticed.size(), fmt::join(unnoticed, "; ")),
                           seen});
}

}  // namespace sharebench::exec_checks
