// ProcessBarrier: a reusable barrier in shared memory for a fixed number of parties, across
// processes or threads. Built on a futex generation counter rather than pthread_barrier_t so that
// it can be aborted: when a party dies, the watchdog calls abort() and every waiter throws
// BarrierAborted instead of waiting forever.
// Contract: construct in place in an arena before workers start. wait() returns true in exactly
// one party per round (the last to arrive). After abort() every present and future wait throws.
#pragma once

#include <atomic>
#include <cstdint>
#include <stdexcept>

namespace sharebench {

struct BarrierAborted : std::runtime_error {
  BarrierAborted() : std::runtime_error("barrier aborted: another worker failed or the cell was torn down") {}
};

class ProcessBarrier {
 public:
  explicit ProcessBarrier(std::uint32_t parties);
  ProcessBarrier(const ProcessBarrier&) = delete;
  ProcessBarrier& operator=(const ProcessBarrier&) = delete;

  // Blocks until `parties` calls have arrived in this round. Throws BarrierAborted.
  bool wait();
  void abort();
  bool aborted() const { return aborted_.load(std::memory_order_acquire) != 0; }
  std::uint32_t parties() const { return parties_; }
  std::uint32_t generation() const { return generation_.load(std::memory_order_acquire); }

 private:
  std::uint32_t parties_;
  std::atomic<std::uint32_t> arrived_{0};
  std::atomic<std::uint32_t> generation_{0};
  std::atomic<std::uint32_t> aborted_{0};
};

}  // namespace sharebench
