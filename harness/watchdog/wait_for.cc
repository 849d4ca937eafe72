// wait_for: holders, waiters and the cycle among them.
#include "harness/watchdog/wait_for.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace sharebench {

WaitForReport describe_wait_for(const HarnessBlock& block) {
  const LockRegistry& reg = block.locks;
  std::map<int, std::vector<std::string>> holds;          // rank → names of mutexes it holds
  std::map<int, std::pair<std::string, int>> waits;      // rank → (mutex, owner rank)
  std::map<int, std::string> at_barrier;                 // rank → "barrier B (arrived k of n)"
  for (int id = 0; id < reg.count(); ++id) {
    if (reg.entry(id).kind != LockRegistry::Kind::kMutex) continue;
    const auto* m = static_cast<const ProcessMutex*>(reg.object(id));
    const int owner = m->owner_rank();
    if (owner != ProcessMutex::kNoOwner) holds[owner].push_back(reg.name(id));
    const std::uint64_t waiting = m->waiting_ranks();
    for (int r = 0; r < block.procs; ++r) {
      if ((waiting >> r) & 1) waits[r] = {reg.name(id), owner};
    }
  }
  for (int r = 0; r < block.procs; ++r) {
    const int b = block.slots[r].waiting_barrier.load(std::memory_order_acquire);
    if (b < 0 || b >= reg.count() || reg.entry(b).kind != LockRegistry::Kind::kBarrier) continue;
    const auto* barrier = static_cast<const ProcessBarrier*>(reg.object(b));
    at_barrier[r] = fmt::format("waits at barrier {} (arrived {} of {})", reg.name(b), barrier->arrived(),
                                barrier->parties());
  }
  WaitForReport report;
  report.any_wait = !waits.empty() || !at_barrier.empty();
  if (!report.any_wait) {
    report.text = "no worker was waiting for a registered lock or at a registered barrier";
    return report;
  }
  auto step = [&](int r) { return block.slots[r].steps.load(std::memory_order_relaxed); };
  auto describe = [&](int r) {
    std::string s = fmt::format("rank {} (step {})", r, step(r));
    if (auto h = holds.find(r); h != holds.end()) s += fmt::format(" holds {} and", fmt::join(h->second, ", "));
    if (auto w = waits.find(r); w != waits.end()) {
      const auto& [lock, owner] = w->second;
      s += fmt::format(" waits for {}", lock);
      s += owner == ProcessMutex::kNoOwner ? " (free: a lost wake-up?)"
                                           : fmt::format(" (held by rank {}, step {})", owner, step(owner));
    } else if (auto b = at_barrier.find(r); b != at_barrier.end()) {
      s += " " + b->second;
    }
    return s;
  };
  // Follow rank → owner edges from each waiter looking for a cycle.
  for (const auto& [start, unused] : waits) {
    std::vector<int> path;
    std::set<int> seen;
    int r = start;
    while (waits.count(r) && !seen.count(r)) {
      seen.insert(r);
      path.push_back(r);
      r = waits.at(r).second;
    }
    if (seen.count(r)) {
      auto from = std::find(path.begin(), path.end(), r);
      std::vector<std::string> parts;
      for (auto it = from; it != path.end(); ++it) parts.push_back(describe(*it));
      report.cycle = true;
      report.text = fmt::format("wait-for cycle: {}", fmt::join(parts, "; "));
      return report;
    }
  }
  std::set<int> stuck;
  for (const auto& [r, unused] : waits) stuck.insert(r);
  for (const auto& [r, unused] : at_barrier) stuck.insert(r);
  std::vector<std::string> parts;
  for (int r : stuck) parts.push_back(describe(r));
  report.text = fmt::format("stuck waits, no cycle: {}", fmt::join(parts, "; "));
  return report;
}

}  // namespace sharebench
