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
#include <string_view>

namespace sharebench {

struct BarrierAborted : std::runtime_error {
  BarrierAborted() : std::runtime_error("barrier aborted: another worker failed or the cell was torn down") {}
};

class ProcessBarrier {
 public:
  // `name` appears in a hang's wait-for report; constructed during setup() the barrier registers
  // with the cell's LockRegistry, as ProcessMutex does.
  explicit ProcessBarrier(std::uint32_t parties, std::string_view name = {});
  ProcessBarrier(const ProcessBarrier&) = delete;
  ProcessBarrier& operator=(const ProcessBarrier&) = delete;

  // Blocks until `parties` calls have arrived in this round. Throws BarrierAborted.
  bool wait();
  void abort();
  bool aborted() const { return aborted_.load(std::memory_order_acquire) != 0; }
  std::uint32_t parties() const { return parties_; }
  std::uint32_t generation() const { return generation_.load(std::memory_order_acquire); }
  std::uint32_t arrived() const { return arrived_.load(std::memory_order_acquire); }
  int id() const { return id_; }  // in the cell's LockRegistry; -1 when not registered

 private:
  std::uint32_t parties_;
  std::atomic<std::uint32_t> arrived_{0};
  std::atomic<std::uint32_t> generation_{0};
  std::atomic<std::uint32_t> aborted_{0};
  int id_ = -1;
};

// Every ProcessBarrier the calling thread waits at from now on is named in *waiting (which only
// this thread writes) while it waits: the worker's slot, for the wait-for report. nullptr stops it.
void report_barrier_waits_in(std::atomic<std::int32_t>* waiting);

}  // namespace sharebench
