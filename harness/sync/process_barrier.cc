// ProcessBarrier: futex generation barrier with abort.
#include "harness/chaos/chaos_schedule.h"
#include "harness/sync/process_barrier.h"

#include "harness/sync/futex.h"
#include "harness/sync/lock_registry.h"

namespace sharebench {

namespace {
// Waiters re-check the abort flag this often even if nobody wakes them.
constexpr std::int64_t kAbortPollNs = 50'000'000;

thread_local std::atomic<std::int32_t>* t_waiting = nullptr;

// Names the barrier in the worker's slot while it waits, whichever way the wait ends.
struct WaitingAt {
  explicit WaitingAt(int id) {
    if (t_waiting && id >= 0) t_waiting->store(id, std::memory_order_release);
  }
  ~WaitingAt() {
    if (t_waiting) t_waiting->store(-1, std::memory_order_release);
  }
};
}  // namespace

void report_barrier_waits_in(std::atomic<std::int32_t>* waiting) { t_waiting = waiting; }

ProcessBarrier::ProcessBarrier(std::uint32_t parties, std::string_view name) : parties_(parties == 0 ? 1 : parties) {
  LockRegistry* registry = nullptr;
  id_ = LockRegistry::register_object(this, name, LockRegistry::Kind::kBarrier, &registry);
}

bool ProcessBarrier::wait() {
  if (aborted()) throw BarrierAborted();
  chaos_point(ChaosSite::kBeforeBarrier);
  const bool last = [this] {
    const WaitingAt waiting(id_);
    const std::uint32_t gen = generation_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == parties_) {
      arrived_.store(0, std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_acq_rel);
      futex::wake(&generation_, INT32_MAX);
      return true;
    }
    while (generation_.load(std::memory_order_acquire) == gen) {
      if (aborted()) throw BarrierAborted();
      futex::wait(&generation_, gen, kAbortPollNs);
    }
    return false;  // the round completed: an abort that came after it does not undo it
  }();
  chaos_point(ChaosSite::kAfterBarrier);  // --chaos: who leaves the barrier first is shaken
  return last;
}

void ProcessBarrier::abort() {
  aborted_.store(1, std::memory_order_release);
  // Wake the sleepers without completing the round; one that sleeps just after this wake
  // still sees the flag within kAbortPollNs.
  futex::wake(&generation_, INT32_MAX);
}

}  // namespace sharebench
