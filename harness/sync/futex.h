// futex.h: the two futex calls the process-shared primitives are built on. Shared futexes (no
// FUTEX_PRIVATE_FLAG) work across processes on a MAP_SHARED mapping and across threads alike.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <ctime>

namespace sharebench::futex {

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t),
              "futex words must be plain 32-bit integers");

// Sleeps while *word == expected, at most `timeout_ns` (<0: forever). Returns on wake, timeout,
// signal or a changed value; callers re-check their condition.
inline void wait(std::atomic<std::uint32_t>* word, std::uint32_t expected, std::int64_t timeout_ns) {
  timespec ts{};
  timespec* tsp = nullptr;
  if (timeout_ns >= 0) {
    ts.tv_sec = static_cast<time_t>(timeout_ns / 1'000'000'000);
    ts.tv_nsec = static_cast<long>(timeout_ns % 1'000'000'000);
    tsp = &ts;
  }
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAIT, expected, tsp, nullptr, 0);
}

// Wakes up to `count` sleepers on `word`.
inline void wake(std::atomic<std::uint32_t>* word, int count) {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE, count, nullptr, nullptr, 0);
}

}  // namespace sharebench::futex
