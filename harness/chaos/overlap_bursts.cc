// overlap_bursts: the phase plan and the rendezvous.
#include "harness/chaos/overlap_bursts.h"

#include <sched.h>

#include <algorithm>
#include <climits>

#include "harness/chaos/splitmix.h"
#include "harness/util/clock.h"

namespace sharebench {

namespace {


constexpr std::int64_t kNoEnd = INT64_MAX / 4;

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

ChaosPhases ChaosPhases::draw(std::uint64_t seed) {
  ChaosPhases p;
  std::int64_t t = 0;
  for (int i = 0; i < kCount; ++i) {
    // Bursts 1 to 5 ms, shakes 2 to 8 ms: a shake long enough for a pause of a few ms to land in
    // it, a burst long enough for a short cell's whole work (the first) or many racy windows.
    const bool burst = i % 2 == 0;
    const std::uint64_t r = splitmix64(seed);
    t += burst ? 1'000'000 + static_cast<std::int64_t>(r % 4'000'001) : 2'000'000 + static_cast<std::int64_t>(r % 6'000'001);
    p.end_ns[i] = t;
  }
  p.period_ns = t;
  p.tick_ns = 10'000 + static_cast<std::int64_t>(splitmix64(seed) % 40'001);
  return p;
}

ChaosPhases::At ChaosPhases::at(std::int64_t since_epoch_ns) const {
  if (period_ns <= 0) return {false, kNoEnd, -1};
  const std::int64_t t = since_epoch_ns % period_ns;
  const std::int64_t* it = std::upper_bound(end_ns, end_ns + kCount, t);
  const int i = static_cast<int>(it - end_ns);
  return {i % 2 == 0, end_ns[i] - t, since_epoch_ns / period_ns * kCount + i};
}

ChaosPhases::At ChaosPhases::at(std::int64_t epoch_ns, std::int64_t now_ns) const {
  if (epoch_ns == 0 || now_ns < epoch_ns) return {false, kNoEnd, -1};
  return at(now_ns - epoch_ns);
}

std::int64_t meet_at_tick(std::atomic<std::int64_t>& gate, const std::atomic<std::int32_t>& finished, int procs,
                          std::int64_t tick, std::int64_t bound_ns) {
  std::int64_t g = gate.load(std::memory_order_acquire);
  for (;;) {
    const std::int64_t at = g >> 16;
    if (at > tick) return 0;  // the others are past it already
    const std::int64_t next = at < tick ? (tick << 16) | 1 : g + 1;
    if (gate.compare_exchange_weak(g, next, std::memory_order_acq_rel)) break;
  }
  const std::int64_t start = monotonic_ns();
  const std::int64_t until = start + bound_ns;
  for (int spins = 0;; ++spins) {
    g = gate.load(std::memory_order_acquire);
    const int working = procs - finished.load(std::memory_order_acquire);
    if ((g >> 16) != tick || (g & 0xffff) >= working) break;
    if ((spins & 63) == 0 && monotonic_ns() >= until) break;
    if (spins < 4096) {
      cpu_relax();
    } else {
      ::sched_yield();
    }
  }
  return monotonic_ns() - start;
}

}  // namespace sharebench
