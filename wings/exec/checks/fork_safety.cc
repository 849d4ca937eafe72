// fork-safety in a user's program: no Python process forked while OpenMP's pool ran with more than
// one intra-op thread, unless the child dropped to one (DataLoader workers do): a forked child that
// then runs an intra-op parallel op waits forever for threads that were never copied. Python threads
// and CUDA alive at a fork are said as notes. Reads the "start" events of forked processes (what the
// forking process had alive, computed just before the fork).
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

void judge_fork_safety(const ExecCheckInput& in, SharingFindings& f) {
  const std::vector<json>& events = in.events;
  int forks = 0;
  std::map<std::string, std::vector<std::string>> hazards, threads_alive, cuda;
  for (const json* e : events_of(events, "start")) {
    if (!e->value("forked", false) || !e->contains("fork") || !(*e)["fork"].is_object()) continue;
    const json& fork = (*e)["fork"];
    if (!fork.value("torch", false)) continue;
    ++forks;
    const int child = int_of(*e, "pid");
    const std::string where = text_of(fork, "where", "?");
    const int pool = int_of(fork, "pool_threads");
    const int intra = int_of(fork, "intra_op", 1);
    if (pool > 0 && intra > 1) {
      // A child that dropped to one intra-op thread before its own parallel work (DataLoader's
      // workers do, first thing) never waits for the pool: only a child still at more than one is
      // at risk, or one that never said (it hung or was killed).
      const json* end = last_event_of(events, "end", child);
      const bool dropped = end && has_number(*end, "intra_op") && int_of(*end, "intra_op") <= 1;
      if (!dropped) {
        hazards[where].push_back(fmt::format("pid {} (parent {}: {} pool thread(s), {} intra-op threads{})", child,
                                             int_of(*e, "ppid"), pool, intra,
                                             end ? fmt::format("; the child ran with {}", int_of(*end, "intra_op", intra))
                                                 : "; the child never ended by itself"));
      }
    }
    if (fork.value("cuda", false)) cuda[where].push_back(fmt::format("pid {}", child));
    if (!array_of(fork, "python_threads").empty()) {
      threads_alive[where].push_back(fmt::format("{}", fmt::join(array_of(fork, "python_threads"), ", ")));
    }
  }
  const Exposure seen{static_cast<double>(forks), "forks of Python processes with torch loaded"};
  f.to_raise[std::string(checks::kForkSafety)] = "a program that forks after importing torch";
  if (forks == 0) {
    f.checks.push_back(Check{checks::kForkSafety, Verdict::kPass, 0.0, "no Python process forked with torch loaded", seen});
    return;
  }
  for (const auto& [where, who] : cuda) {
    f.notes.push_back(fmt::format("CUDA was initialised in the process that forked at {} ({}): a forked child cannot use "
                                  "CUDA (use spawn or forkserver)",
                                  where, fmt::join(who, ", ")));
  }
  for (const auto& [where, names] : threads_alive) {
    std::set<std::string> distinct(names.begin(), names.end());
    f.notes.push_back(fmt::format("{} fork(s) at {} with Python threads alive ({}): a lock one of them held stays held "
                                  "in the child",
                                  names.size(), where, fmt::join(distinct, "; ")));
  }
  if (hazards.empty()) {
    f.checks.push_back(Check{checks::kForkSafety, Verdict::kPass, 0.0,
                             fmt::format("{} fork(s) of Python processes with torch loaded, none while OpenMP's pool ran "
                                         "with more than one intra-op thread",
                                         forks),
                             seen});
    return;
  }
  std::vector<std::string> parts;
  std::size_t count = 0;
  for (const auto& [where, who] : hazards) {
    count += who.size();
    parts.push_back(fmt::format("forked at {} while native threads started after torch's import (OpenMP's intra-op pool) "
                                "were alive: {}",
                                where, fmt::join(who, ", ")));
  }
  f.checks.push_back(Check{checks::kForkSafety, Verdict::kFail, static_cast<double>(count),
                           fmt::format("{}; a forked child's first parallel op can wait forever for threads it does not "
                                       "have (libgomp). Call torch.set_num_threads(1) before forking, or use spawn or "
                                       "forkserver",
                                       fmt::join(parts, "; ")),
                           seen});
}

}  // namespace sharebench::exec_checks
