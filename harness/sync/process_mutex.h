// ProcessMutex: a mutex that lives in shared memory and excludes across processes and threads.
//
// It is a robust, process-shared pthread mutex plus records the harness reads from outside:
//   - the owner (rank, pid, tid) while held, so a hang report can say who holds what;
//   - which ranks are waiting for it (a bitmap), the other half of a wait-for graph;
//   - how often an owner died holding it, and how long lockers waited.
// Contract: construct it in place in an arena (SharedArena::create<ProcessMutex>) before any
// worker starts. Constructed during a cell's setup(), it registers itself, under its name, with the
// cell's LockRegistry (lock_registry.h): the harness then draws its lock-order graph and names it in
// a hang's wait-for report without any wiring in the scenario. lock() never fails for a dead owner: it recovers the mutex (EOWNERDEAD →
// pthread_mutex_consistent) and reports it in the returned LockResult. The data the mutex
// guarded may be half-updated after an owner death; recovering the lock does not repair it.
// Ranks are 0..kMaxRanks-1.
#pragma once

#include <pthread.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string_view>

namespace sharebench {

struct LockResult {
  bool recovered_owner_death = false;  // the previous owner died holding the lock
  std::int64_t waited_ns = 0;          // time inside the lock call (tens of ns when it was free)
};

class ProcessMutex {
 public:
  static constexpr int kMaxRanks = 64;  // the waiter bitmap is one 64-bit word
  static constexpr int kNoOwner = -1;

  // `name` appears in lock-order and wait-for reports ("mutex#<id>" when empty).
  explicit ProcessMutex(std::string_view name = {});
  ~ProcessMutex();
  ProcessMutex(const ProcessMutex&) = delete;
  ProcessMutex& operator=(const ProcessMutex&) = delete;

  // Blocks until held by `rank`.
  LockResult lock(int rank);
  // Returns true if taken; never blocks.
  bool try_lock(int rank, bool* recovered_owner_death = nullptr);
  void unlock();

  // Read from outside (the watchdog); values may be stale by the time they are used.
  int id() const { return id_; }  // in the cell's LockRegistry; -1 when not registered
  int owner_rank() const { return owner_rank_.load(std::memory_order_acquire); }
  pid_t owner_pid() const { return owner_pid_.load(std::memory_order_acquire); }
  pid_t owner_tid() const { return owner_tid_.load(std::memory_order_acquire); }
  std::uint64_t waiting_ranks() const { return waiters_.load(std::memory_order_acquire); }
  std::uint64_t acquisitions() const { return acquisitions_.load(std::memory_order_relaxed); }
  std::uint64_t owner_deaths() const { return owner_deaths_.load(std::memory_order_relaxed); }
  // Acquisitions by lock() that found the lock held by another: how often mutual exclusion was put
  // to the test (a lock nobody contended for excludes nobody, rightly or wrongly).
  std::uint64_t contended() const { return contended_.load(std::memory_order_relaxed); }

 private:
  void mark_acquired(int rank, bool recovered);

  pthread_mutex_t mutex_;
  int id_ = -1;
  std::int64_t registry_offset_ = 0;  // the LockRegistry, relative to this object (0: none)
  std::atomic<int> owner_rank_{kNoOwner};
  std::atomic<pid_t> owner_pid_{0};
  std::atomic<pid_t> owner_tid_{0};
  std::atomic<std::uint64_t> waiters_{0};
  std::atomic<std::uint64_t> acquisitions_{0};
  std::atomic<std::uint64_t> owner_deaths_{0};
  std::atomic<std::uint64_t> contended_{0};
};

// The fault kill-holding-lock, carried out by the worker itself: once the fault injector sets
// *trigger (the worker's slot) to kLockKillArmed, the calling thread's next ProcessMutex
// acquisition sets it to kLockKillFired and SIGKILLs its own process while holding that lock. From
// inside, the death lands in the critical section every time; a signal sent from outside has to
// hit a window of microseconds, and missed it under load. nullptr: no trigger.
constexpr std::int32_t kLockKillIdle = 0;
constexpr std::int32_t kLockKillArmed = 1;
constexpr std::int32_t kLockKillFired = 2;
void kill_on_next_lock_when_armed(std::atomic<std::int32_t>* trigger);

static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "cross-process atomics must be lock-free");

// RAII holder: `ProcessLockGuard g(mutex, rank);`
class ProcessLockGuard {
 public:
  ProcessLockGuard(ProcessMutex& m, int rank) : m_(m), result_(m.lock(rank)) {}
  ~ProcessLockGuard() { m_.unlock(); }
  ProcessLockGuard(const ProcessLockGuard&) = delete;
  ProcessLockGuard& operator=(const ProcessLockGuard&) = delete;
  const LockResult& result() const { return result_; }

 private:
  ProcessMutex& m_;
  LockResult result_;
};

}  // namespace sharebench
