// monotonic_ns: CLOCK_MONOTONIC (through steady_clock) in nanoseconds; clock_ns: any clock_gettime clock. It is one clock for every
// process on the machine, so a timestamp taken in one worker can be subtracted in another: the
// heartbeats, the start barrier and the IPC handoff latencies rely on that.
#pragma once

#include <time.h>

#include <chrono>
#include <cstdint>

namespace sharebench {

inline std::int64_t monotonic_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Any clock_gettime clock in nanoseconds: CLOCK_THREAD_CPUTIME_ID for what this thread has computed
// (a budget that a thread waiting for a core on a loaded machine must not spend).
inline std::int64_t clock_ns(clockid_t clock) {
  timespec ts{};
  ::clock_gettime(clock, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace sharebench
