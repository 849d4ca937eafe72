// LockRegistry: registration, edges, cycles.
#include "harness/sync/lock_registry.h"

#include "harness/sync/process_barrier.h"
#include "harness/sync/process_mutex.h"

#include <cstring>
#include <functional>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace sharebench {

namespace {
// The open registration scope of this process (the runner, during setup()).
LockRegistry* g_registry = nullptr;
const char* g_base = nullptr;
std::size_t g_bytes = 0;
}  // namespace

LockRegistry::RegistrationScope::RegistrationScope(LockRegistry& registry, const void* base, std::size_t bytes) {
  g_registry = &registry;
  g_base = static_cast<const char*>(base);
  g_bytes = bytes;
}

LockRegistry::RegistrationScope::~RegistrationScope() {
  g_registry = nullptr;
  g_base = nullptr;
  g_bytes = 0;
}

int LockRegistry::register_object(const void* object, std::string_view name, Kind kind, LockRegistry** out) {
  *out = nullptr;
  const char* p = static_cast<const char*>(object);
  if (!g_registry || p < g_base || p >= g_base + g_bytes) return -1;
  LockRegistry& r = *g_registry;
  const int id = r.count_.load(std::memory_order_relaxed);
  if (id >= kMaxLocks) {
    r.untracked_.fetch_add(1, std::memory_order_relaxed);
    return -1;
  }
  Entry& e = r.entries_[id];
  e.offset = p - reinterpret_cast<const char*>(&r);
  e.kind = kind;
  const std::string fallback = fmt::format("{}#{}", kind == Kind::kMutex ? "mutex" : "barrier", id);
  const std::string_view text = name.empty() ? std::string_view(fallback) : name;
  const std::size_t n = std::min(text.size(), static_cast<std::size_t>(kMaxName - 1));
  std::memcpy(e.name, text.data(), n);
  e.name[n] = '\0';
  r.count_.store(id + 1, std::memory_order_release);
  *out = &r;
  return id;
}

void LockRegistry::record_attempt(std::uint64_t held, int acquired, int rank) {
  const std::uint64_t rank_bit = rank >= 0 && rank < kMaxRanks ? std::uint64_t{1} << rank : 0;
  for (std::uint64_t rest = held; rest != 0; rest &= rest - 1) {
    const int h = __builtin_ctzll(rest);
    if (h == acquired) continue;
    edges_[h].fetch_or(std::uint64_t{1} << acquired, std::memory_order_relaxed);
    edge_ranks_[h][acquired].fetch_or(rank_bit, std::memory_order_relaxed);
  }
}

int LockRegistry::nested_pairs() const {
  int pairs = 0;
  for (int from = 0; from < count(); ++from) pairs += __builtin_popcountll(edges_[from].load(std::memory_order_relaxed));
  return pairs;
}

std::string LockRegistry::name(int id) const {
  return id >= 0 && id < count() ? std::string(entries_[id].name) : fmt::format("lock#{}", id);
}

std::vector<int> LockRegistry::reconstructed() const {
  std::vector<int> out;
  for (int id = 0; id < count(); ++id) {
    const int now = entry(id).kind == Kind::kMutex ? static_cast<const ProcessMutex*>(object(id))->id()
                                                   : static_cast<const ProcessBarrier*>(object(id))->id();
    if (now != id) out.push_back(id);
  }
  return out;
}

bool LockRegistry::any_nesting() const {
  for (int h = 0; h < count(); ++h) {
    if (edges_[h].load(std::memory_order_relaxed) != 0) return true;
  }
  return false;
}

std::vector<int> LockRegistry::find_cycle() const {
  const int n = count();
  std::vector<int> colour(static_cast<std::size_t>(n), 0), parent(static_cast<std::size_t>(n), -1);
  std::vector<int> cycle;
  std::function<bool(int)> dfs = [&](int u) {
    colour[u] = 1;
    for (int v = 0; v < n; ++v) {
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
  for (int u = 0; u < n; ++u) {
    if (colour[u] == 0 && dfs(u)) break;
  }
  return cycle;
}

std::string LockRegistry::describe_cycle(const std::vector<int>& cycle) const {
  if (cycle.empty()) return "";
  std::vector<std::string> path, orders;
  for (std::size_t i = 0; i < cycle.size(); ++i) {
    const int from = cycle[i], to = cycle[(i + 1) % cycle.size()];
    path.push_back(name(from));
    std::vector<int> ranks;
    const std::uint64_t bits = edge_ranks_[from][to].load(std::memory_order_relaxed);
    for (int r = 0; r < kMaxRanks; ++r) {
      if ((bits >> r) & 1) ranks.push_back(r);
    }
    orders.push_back(fmt::format("{} then {} by rank{} {}", name(from), name(to), ranks.size() == 1 ? "" : "s",
                                 fmt::join(ranks, ", ")));
  }
  path.push_back(name(cycle.front()));
  return fmt::format("{} ({})", fmt::join(path, " → "), fmt::join(orders, "; "));
}

}  // namespace sharebench
