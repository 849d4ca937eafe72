// ProcessBarrier: futex generation barrier with abort.
#include "harness/sync/process_barrier.h"

#include "harness/sync/futex.h"

namespace sharebench {

namespace {
// Waiters re-check the abort flag this often even if nobody wakes them.
constexpr std::int64_t kAbortPollNs = 50'000'000;
}  // namespace

ProcessBarrier::ProcessBarrier(std::uint32_t parties) : parties_(parties == 0 ? 1 : parties) {}

bool ProcessBarrier::wait() {
  if (aborted()) throw BarrierAborted();
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
}

void ProcessBarrier::abort() {
  aborted_.store(1, std::memory_order_release);
  // Wake the sleepers without completing the round; one that sleeps just after this wake
  // still sees the flag within kAbortPollNs.
  futex::wake(&generation_, INT32_MAX);
}

}  // namespace sharebench
