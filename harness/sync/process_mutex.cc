// ProcessMutex: robust process-shared pthread mutex with owner and waiter records.
#include "harness/chaos/chaos_schedule.h"
#include "harness/sync/process_mutex.h"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include "harness/sync/lock_registry.h"
#include "harness/util/clock.h"

namespace sharebench {

namespace {
// The owner record names the holder's pid and tid. Both are system calls (glibc caches neither),
// about 1 µs each on a VM: cached per thread, and forgotten in a fork child, whose pid differs.
thread_local pid_t t_pid = 0;
thread_local pid_t t_tid = 0;
void forget_ids() {
  t_pid = 0;
  t_tid = 0;
}
[[maybe_unused]] const int atfork_registered = pthread_atfork(nullptr, nullptr, &forget_ids);
pid_t cached_pid() { return t_pid ? t_pid : (t_pid = ::getpid()); }
pid_t cached_tid() { return t_tid ? t_tid : (t_tid = static_cast<pid_t>(::syscall(SYS_gettid))); }

thread_local std::atomic<std::int32_t>* t_kill_trigger = nullptr;
// The registered locks this thread holds (bit = registry id): the "held" side of lock-order edges.
thread_local std::uint64_t t_held_ids = 0;
// kill-holding-lock (process_mutex.h): called with the lock just acquired.
void die_here_if_armed() {
  if (!t_kill_trigger || t_kill_trigger->load(std::memory_order_acquire) != kLockKillArmed) return;
  t_kill_trigger->store(kLockKillFired, std::memory_order_release);
  ::kill(::getpid(), SIGKILL);
  ::pause();  // SIGKILL cannot be caught: the process ends before this returns
}

void check_rank(int rank) {
  if (rank < 0 || rank >= ProcessMutex::kMaxRanks) {
    throw std::out_of_range(fmt::format("rank {} outside 0..{}", rank, ProcessMutex::kMaxRanks - 1));
  }
}
}  // namespace

void kill_on_next_lock_when_armed(std::atomic<std::int32_t>* trigger) {
  t_kill_trigger = trigger;
  t_held_ids = 0;  // a new worker starts holding nothing
}

ProcessMutex::ProcessMutex(std::string_view name) {
  LockRegistry* registry = nullptr;
  id_ = LockRegistry::register_object(this, name, LockRegistry::Kind::kMutex, &registry);
  if (registry) registry_offset_ = reinterpret_cast<char*>(registry) - reinterpret_cast<char*>(this);
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
  const int rc = pthread_mutex_init(&mutex_, &attr);
  pthread_mutexattr_destroy(&attr);
  if (rc != 0) throw std::system_error(rc, std::generic_category(), "pthread_mutex_init(ProcessMutex)");
}

ProcessMutex::~ProcessMutex() { pthread_mutex_destroy(&mutex_); }

void ProcessMutex::mark_acquired(int rank, bool recovered) {
  if (recovered) {
    pthread_mutex_consistent(&mutex_);
    owner_deaths_.fetch_add(1, std::memory_order_relaxed);
  }
  if (id_ >= 0) t_held_ids |= std::uint64_t{1} << id_;
  owner_rank_.store(rank, std::memory_order_release);
  owner_pid_.store(cached_pid(), std::memory_order_release);
  owner_tid_.store(cached_tid(), std::memory_order_release);
  acquisitions_.fetch_add(1, std::memory_order_relaxed);
  die_here_if_armed();  // after the owner record: the peers see who died holding it
}

bool ProcessMutex::try_lock(int rank, bool* recovered_owner_death) {
  check_rank(rank);
  const int rc = pthread_mutex_trylock(&mutex_);
  if (rc == EBUSY || rc == EDEADLK) return false;  // EDEADLK: held by this very thread
  if (rc != 0 && rc != EOWNERDEAD) {
    throw std::system_error(rc, std::generic_category(), fmt::format("trylock(ProcessMutex {})", id_));
  }
  mark_acquired(rank, rc == EOWNERDEAD);
  if (recovered_owner_death) *recovered_owner_death = rc == EOWNERDEAD;
  return true;
}

LockResult ProcessMutex::lock(int rank) {
  check_rank(rank);
  // Always the blocking call, never trylock first: ThreadSanitizer's deadlock detector draws
  // lock-order edges only from blocking acquisitions, and the waiter bit must be visible while
  // blocked. The cost is two clock reads and two atomic operations per lock.
  LockResult result;
  chaos_point(ChaosSite::kBeforeLock);
  if (registry_offset_ != 0) {
    if (t_held_ids != 0) {  // nested: the attempt itself is the edge (a deadlocked lock() never returns)
      reinterpret_cast<LockRegistry*>(reinterpret_cast<char*>(this) + registry_offset_)
          ->record_attempt(t_held_ids, id_, rank);
    }
  }
  const std::uint64_t bit = std::uint64_t{1} << rank;
  waiters_.fetch_or(bit, std::memory_order_acq_rel);
  const bool held_by_another = owner_rank_.load(std::memory_order_acquire) != kNoOwner;
  const std::int64_t t0 = monotonic_ns();
  const int rc = pthread_mutex_lock(&mutex_);
  result.waited_ns = monotonic_ns() - t0;
  waiters_.fetch_and(~bit, std::memory_order_acq_rel);
  if (rc != 0 && rc != EOWNERDEAD) {
    throw std::system_error(rc, std::generic_category(), fmt::format("lock(ProcessMutex {})", id_));
  }
  result.recovered_owner_death = rc == EOWNERDEAD;
  if (held_by_another) contended_.fetch_add(1, std::memory_order_relaxed);
  mark_acquired(rank, result.recovered_owner_death);
  chaos_point(ChaosSite::kHoldingLock);  // --chaos: widen the critical section now and then
  return result;
}

void ProcessMutex::unlock() {
  chaos_point(ChaosSite::kBeforeUnlock);
  if (id_ >= 0) t_held_ids &= ~(std::uint64_t{1} << id_);
  owner_rank_.store(kNoOwner, std::memory_order_release);
  owner_pid_.store(0, std::memory_order_release);
  owner_tid_.store(0, std::memory_order_release);
  const int rc = pthread_mutex_unlock(&mutex_);
  if (rc == EPERM) {
    throw std::system_error(rc, std::generic_category(),
                            fmt::format("unlock(ProcessMutex {}): this thread does not hold it (was the lock constructed "
                                        "again while held?)", id_));
  }
  if (rc != 0) {
    throw std::system_error(rc, std::generic_category(), fmt::format("unlock(ProcessMutex {})", id_));
  }
}

}  // namespace sharebench
