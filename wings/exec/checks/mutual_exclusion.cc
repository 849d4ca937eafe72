// mutual-exclusion in a user's program: a lock held around writes to shared memory (optimizer.step()
// on shared parameters, a Value's or an Array's set, a shared tensor's `+=`) in two or more processes
// alive at the same time, that is not one lock they share. A threading.Lock or RLock is never shared
// between processes: fork copies it, spawn makes a new one when the child imports the module (seed
// 000's Example 2); a multiprocessing lock made at module level is made again in each spawned child.
// Judged on the structure: the lock's identity (its semaphore's page, or the process's own) differs
// between processes that hold it around the same shared memory, whether or not their holds overlapped
// this run.
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "wings/exec/checks/exec_checks.h"

namespace sharebench::exec_checks {

using nlohmann::json;

void judge_mutual_exclusion(const ExecCheckInput& in, SharingFindings& f) {
  struct Use {
    const ProcessSharedState* process;
    const json* hold;
  };
  std::map<std::pair<std::string, std::string>, std::vector<Use>> by_site_and_place;  // (lock site, place)
  double holds = 0;
  for (const ProcessSharedState& p : in.shared_state.processes) {
    for (const json& h : *p.holds) {
      if (!h.contains("site") || !h["site"].is_string() || !h.contains("place") || !h["place"].is_string()) continue;
      by_site_and_place[{h["site"].get<std::string>(), h["place"].get<std::string>()}].push_back(Use{&p, &h});
    }
  }
  f.to_raise[std::string(checks::kMutualExclusion)] =
      "a program whose processes hold a lock around writes to shared memory";
  std::vector<std::string> findings;
  std::set<std::string> said;  // one finding per lock site
  for (const auto& [site_place, uses] : by_site_and_place) {
    const std::string& site = site_place.first;
    std::set<int> pids;
    std::set<std::string> keys;
    bool any_private = false;
    for (const Use& u : uses) {
      pids.insert(u.process->pid);
      keys.insert(u.hold->value("lock", ""));
      any_private = any_private || !u.hold->value("shared", false);
    }
    if (pids.size() < 2) continue;  // held in one process only: nothing to exclude
    for (const Use& u : uses) holds += u.hold->contains("count") && (*u.hold)["count"].is_number() ? (*u.hold)["count"].get<double>() : 0;
    if (keys.size() < 2 || said.count(site)) continue;
    bool together = false;
    for (std::size_t i = 0; i < uses.size() && !together; ++i) {
      for (std::size_t j = i + 1; j < uses.size() && !together; ++j) {
        together = uses[i].process->pid != uses[j].process->pid &&
                   in.shared_state.alive_together(*uses[i].process, *uses[j].process);
      }
    }
    if (!together) continue;
    said.insert(site);
    const std::string kind = uses[0].hold->value("kind", "lock");
    std::set<std::string> whats;
    for (const Use& u : uses) whats.insert(u.hold->value("what", "a write"));
    std::vector<std::string> parts;
    std::set<int> listed;
    for (const Use& u : uses) {
      if (!listed.insert(u.process->pid).second) continue;
      parts.push_back(fmt::format("pid {} at {}", u.process->pid, u.hold->value("where", "?")));
      if (parts.size() == 6) break;
    }
    findings.push_back(fmt::format(
        "the {} made at {} was held around {} on the same shared memory in {} processes ({}), but {}: it keeps out "
        "only threads of one process, and the processes write that memory at once. Fix: make one "
        "multiprocessing.Lock (mp.Lock()) in the parent before starting the processes and pass it to each of them",
        kind, site, fmt::join(whats, " and "), pids.size(), fmt::join(parts, "; "),
        any_private ? "each process holds a copy of its own (a threading lock is never shared between processes)"
                    : "each process made its own (a lock made at module level is made again in every spawned child)"));
  }
  const Exposure seen{holds, "holds of a lock around writes to memory that two or more processes write seen"};
  add_verdict(f, checks::kMutualExclusion, findings,
              "every lock held around shared writes in several processes is one lock they share", seen);
}

}  // namespace sharebench::exec_checks
