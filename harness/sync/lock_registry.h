// LockRegistry: every ProcessMutex and ProcessBarrier a cell's setup() lays out in the arena is
// registered here by its constructor, with its name, so the harness checks locks in any scenario
// without a line of wiring in it:
//   - the lock-order graph: each lock() call made while the thread already holds registered locks
//     adds the edges held → asked-for (and the ranks that made them); a cycle is a lock-order
//     inversion, a deadlock waiting to happen, even in a run that never hung;
//   - on a hang, the wait-for graph read while the workers are frozen: who holds which lock, who
//     waits for which lock or at which barrier (arrived k of n), at which step.
// It lives in the HarnessBlock. Registration happens in the runner, while a RegistrationScope is
// open around setup(); objects outside the arena (a test's local mutex) are not registered and
// cost nothing. At most kMaxLocks objects per cell are tracked; more are counted as untracked.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sharebench {

class LockRegistry {
 public:
  static constexpr int kMaxLocks = 64;
  static constexpr int kMaxName = 40;
  static constexpr int kMaxRanks = 64;
  enum class Kind : std::int32_t { kMutex = 0, kBarrier = 1 };

  struct Entry {
    std::int64_t offset;  // of the object from this registry, the same in every process's mapping
    Kind kind;
    char name[kMaxName];
  };

  // Opened by the runner around setup(): objects constructed inside [base, base + bytes) while it
  // is open register with `registry`. One at a time per process.
  class RegistrationScope {
   public:
    RegistrationScope(LockRegistry& registry, const void* base, std::size_t bytes);
    ~RegistrationScope();
    RegistrationScope(const RegistrationScope&) = delete;
    RegistrationScope& operator=(const RegistrationScope&) = delete;
  };

  // Called by the constructors: the id (0..kMaxLocks-1) and the registry, or -1 and nullptr when
  // no scope is open, the object is outside the arena, or the registry is full.
  static int register_object(const void* object, std::string_view name, Kind kind, LockRegistry** out);

  // lock(): `held` is the bitmask of registered locks the calling thread holds.
  void record_attempt(std::uint64_t held, int acquired, int rank);

  int count() const { return count_.load(std::memory_order_acquire); }
  int untracked() const { return untracked_.load(std::memory_order_relaxed); }
  const Entry& entry(int id) const { return entries_[id]; }
  const void* object(int id) const { return reinterpret_cast<const char*>(this) + entries_[id].offset; }
  std::string name(int id) const;
  bool any_nesting() const;
  // The distinct pairs (held → taken) recorded: how often the lock order was put to the test.
  int nested_pairs() const;

  // The registered objects that no longer carry their id: constructed again over the registered one
  // after setup() (a worker "initialising" the shared lock as it starts). Such a lock lost its
  // owner and waiters, so two workers may hold it at once, and the harness no longer tracks it.
  std::vector<int> reconstructed() const;

  // The first cycle of lock ids in the lock-order graph, or empty.
  std::vector<int> find_cycle() const;
  // "A → B → A, taken in those orders by ranks 0 (A then B) and 1 (B then A)", or "" without a cycle.
  std::string describe_cycle(const std::vector<int>& cycle) const;

 private:
  bool has_edge(int from, int to) const { return (edges_[from].load(std::memory_order_relaxed) >> to) & 1; }

  std::atomic<std::int32_t> count_{0};
  std::atomic<std::int32_t> untracked_{0};
  Entry entries_[kMaxLocks] = {};
  std::atomic<std::uint64_t> edges_[kMaxLocks] = {};               // edges_[h] bit l: l asked for holding h
  std::atomic<std::uint64_t> edge_ranks_[kMaxLocks][kMaxLocks] = {};  // the ranks that made each edge
};

}  // namespace sharebench
