// monotonic_ns: CLOCK_MONOTONIC (through steady_clock) in nanoseconds. It is one clock for every
// process on the machine, so a timestamp taken in one worker can be subtracted in another: the
// heartbeats, the start barrier and the IPC handoff latencies rely on that.
#pragma once

#include <chrono>
#include <cstdint>

namespace sharebench {

inline std::int64_t monotonic_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace sharebench
