// lock_graph: the two graphs that explain a deadlock, over up to 64 ProcessMutexes.
//   - LockOrderRecorder lives in the arena and records, for every acquisition, "lock H was held
//     while lock L was taken" (an edge H → L). A cycle in that graph is a lock-order inversion:
//     a deadlock waiting to happen even in a run that did not hang (what ThreadSanitizer's
//     deadlock detector reports, but across processes).
//   - wait_for_cycle() reads the owner and waiter records of the mutexes after a hang and
//     describes who holds what and who waits for what, cycle first.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "harness/sync/process_mutex.h"

namespace sharebench {

class LockOrderRecorder {
 public:
  static constexpr int kMaxLocks = 64;
  // Call after taking lock `acquired` while holding the locks in `held_mask` (bit i = lock id i).
  void record(std::uint64_t held_mask, int acquired);
  // The first cycle of lock ids found, or empty.
  std::vector<int> find_cycle() const;
  bool has_edge(int from, int to) const;

 private:
  std::atomic<std::uint64_t> edges_[kMaxLocks] = {};  // edges_[h] bit l: l was taken holding h
};

struct NamedLock {
  std::string name;
  const ProcessMutex* mutex;
};

struct WaitForReport {
  bool cycle = false;
  std::string text;  // "rank 0 holds A and waits for B; rank 1 holds B and waits for A" or the stuck waits
};

// Builds the wait-for graph rank → (lock it waits for) → owner rank, from the records.
WaitForReport describe_wait_for(const std::vector<NamedLock>& locks);

}  // namespace sharebench
