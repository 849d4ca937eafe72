// lock_graph: lock-order edges and the wait-for graph.
#include "harness/sync/lock_graph.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>

namespace sharebench {

void LockOrderRecorder::record(std::uint64_t held_mask, int acquired) {
  for (int h = 0; h < kMaxLocks; ++h) {
    if (held_mask & (std::uint64_t{1} << h)) edges_[h].fetch_or(std::uint64_t{1} << acquired, std::memory_order_relaxed);
  }
}

bool LockOrderRecorder::has_edge(int from, int to) const {
  return (edges_[from].load(std::memory_order_relaxed) >> to) & 1;
}

std::vector<int> LockOrderRecorder::find_cycle() const {
  // Depth-first search with colours; returns the ids along the first back edge's cycle.
  std::vector<int> colour(kMaxLocks, 0), parent(kMaxLocks, -1);
  std::vector<int> cycle;
  std::function<bool(int)> dfs = [&](int u) {
    colour[u] = 1;
    for (int v = 0; v < kMaxLocks; ++v) {
      if (!has_edge(u, v)) continue;
      if (colour[v] == 1) {
        for (int w = u; w != v; w = parent[w]) cycle.insert(cycle.begin(), w);
        cycle.insert(cycle.begin(), v);
        return true;
      }
      if (colour[v] == 0) {
        parent[v] = u;
        if (dfs(v)) return true;
      }
    }
    colour[u] = 2;
    return false;
  };
  for (int u = 0; u < kMaxLocks; ++u) {
    if (colour[u] == 0 && dfs(u)) break;
  }
  return cycle;
}

WaitForReport describe_wait_for(const std::vector<NamedLock>& locks) {
  std::map<int, std::vector<std::string>> holds;  // rank → names of locks it holds
  std::map<int, std::pair<std::string, int>> waits;  // rank → (lock name, owner rank)
  for (const auto& l : locks) {
    const int owner = l.mutex->owner_rank();
    if (owner != ProcessMutex::kNoOwner) holds[owner].push_back(l.name);
    const std::uint64_t waiting = l.mutex->waiting_ranks();
    for (int r = 0; r < ProcessMutex::kMaxRanks; ++r) {
      if (waiting & (std::uint64_t{1} << r)) waits[r] = {l.name, owner};
    }
  }
  WaitForReport report;
  if (waits.empty()) {
    report.text = "no worker was waiting for a lock";
    return report;
  }
  auto describe = [&](int r) {
    std::string s = fmt::format("rank {}", r);
    if (auto h = holds.find(r); h != holds.end()) {
      s += " holds";
      for (std::size_t i = 0; i < h->second.size(); ++i) s += (i ? ", " : " ") + h->second[i];
      s += " and";
    }
    const auto& [lock, owner] = waits.at(r);
    s += fmt::format(" waits for {}", lock);
    s += owner == ProcessMutex::kNoOwner ? " (free: a lost wake-up?)" : fmt::format(" (held by rank {})", owner);
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
      std::string text = "wait-for cycle: ";
      for (auto it = from; it != path.end(); ++it) text += (it == from ? "" : "; ") + describe(*it);
      report.cycle = true;
      report.text = text;
      return report;
    }
  }
  std::string text = "stuck waits, no cycle: ";
  bool first = true;
  for (const auto& [r, unused] : waits) {
    text += (first ? "" : "; ") + describe(r);
    first = false;
  }
  report.text = text;
  return report;
}

}  // namespace sharebench
