// The process-shared mutex and barrier against the bound they should approach, each pair in the
// same run (docs/performance.md):
//   BM_FutexPingPong            two processes bounce a futex word: one round trip = two handoffs
//   BM_BarrierRoundTrip         two processes meet at a ProcessBarrier: one round per iteration
//   BM_MutexUncontended         lock(rank)+unlock of a ProcessMutex nobody else wants (with its
//                               owner record and wait timing)
//   BM_PthreadMutexUncontended  the bound: a robust, process-shared pthread mutex, nothing else
//   BM_MutexContended           two processes lock/unlock the same ProcessMutex; time per
//                               acquisition by the timed side
//   BM_MutexHandoff             the mutex as a baton: its holder lets go only once the other
//                               process is waiting in lock() (its waiter bit is up), so every
//                               acquisition is a handoff to a blocked waiter; one iteration is a
//                               round trip (two handoffs), comparable with BM_FutexPingPong
#include <pthread.h>

#include <atomic>
#include <cstdint>

#include <benchmark/benchmark.h>

#include "bench/partner_process.h"
#include "harness/sync/futex.h"
#include "harness/sync/process_barrier.h"
#include "harness/sync/process_mutex.h"

namespace sharebench::bench {
namespace {

struct PingPong {
  std::atomic<std::uint32_t> word{0};  // 1: ping sent, 0: pong sent
  std::atomic<std::uint32_t> stop{0};
};

void BM_FutexPingPong(benchmark::State& state) {
  SharedObject<PingPong> shared;
  PartnerProcess partner([&] {
    for (;;) {
      while (shared->word.load(std::memory_order_acquire) != 1) {
        if (shared->stop.load()) return;
        futex::wait(&shared->word, 0, 100'000'000);
      }
      shared->word.store(0, std::memory_order_release);
      futex::wake(&shared->word, 1);
    }
  });
  for (auto _ : state) {
    shared->word.store(1, std::memory_order_release);
    futex::wake(&shared->word, 1);
    while (shared->word.load(std::memory_order_acquire) != 0) futex::wait(&shared->word, 1, 100'000'000);
  }
  shared->stop.store(1);
  futex::wake(&shared->word, 1);
}
BENCHMARK(BM_FutexPingPong)->UseRealTime();

struct TwoPartyBarrier {
  ProcessBarrier barrier{2};
  std::atomic<std::uint32_t> stop{0};
};

void BM_BarrierRoundTrip(benchmark::State& state) {
  SharedObject<TwoPartyBarrier> shared;
  PartnerProcess partner([&] {
    try {
      while (!shared->stop.load()) shared->barrier.wait();
    } catch (const BarrierAborted&) {
    }
  });
  for (auto _ : state) shared->barrier.wait();
  shared->stop.store(1);
  shared->barrier.abort();
}
BENCHMARK(BM_BarrierRoundTrip)->UseRealTime();

void BM_MutexUncontended(benchmark::State& state) {
  SharedObject<ProcessMutex> mutex("bench");
  for (auto _ : state) {
    mutex->lock(0);
    mutex->unlock();
  }
}
BENCHMARK(BM_MutexUncontended);

struct PthreadMutex {
  PthreadMutex() {
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&m, &attr);
    pthread_mutexattr_destroy(&attr);
  }
  ~PthreadMutex() { pthread_mutex_destroy(&m); }
  pthread_mutex_t m;
};

void BM_PthreadMutexUncontended(benchmark::State& state) {
  SharedObject<PthreadMutex> mutex;
  for (auto _ : state) {
    pthread_mutex_lock(&mutex->m);
    pthread_mutex_unlock(&mutex->m);
  }
}
BENCHMARK(BM_PthreadMutexUncontended);

struct ContendedMutex {
  ProcessMutex mutex{"bench"};
  std::atomic<std::uint32_t> stop{0};
  std::int64_t counter = 0;
};

void BM_MutexContended(benchmark::State& state) {
  SharedObject<ContendedMutex> shared;
  PartnerProcess partner([&] {
    while (!shared->stop.load(std::memory_order_relaxed)) {
      shared->mutex.lock(1);
      ++shared->counter;
      shared->mutex.unlock();
    }
  });
  for (auto _ : state) {
    shared->mutex.lock(0);
    ++shared->counter;
    shared->mutex.unlock();
  }
  shared->stop.store(1);
}
BENCHMARK(BM_MutexContended)->UseRealTime();

// Waits until `rank`'s waiter bit is up on `m` (it is blocked in lock(), or about to be).
bool wait_for_waiter(const ProcessMutex& m, int rank, const std::atomic<std::uint32_t>& stop) {
  const std::uint64_t bit = std::uint64_t{1} << rank;
  while ((m.waiting_ranks() & bit) == 0) {
    if (stop.load(std::memory_order_relaxed)) return false;
  }
  return true;
}

void BM_MutexHandoff(benchmark::State& state) {
  SharedObject<ContendedMutex> shared;
  std::atomic<std::uint32_t>& stop = shared->stop;
  shared->mutex.lock(0);  // the timed side starts with the baton
  PartnerProcess partner([&] {
    for (;;) {
      shared->mutex.lock(1);  // handed over by rank 0
      if (stop.load()) {
        shared->mutex.unlock();
        return;
      }
      ++shared->counter;
      if (!wait_for_waiter(shared->mutex, 0, stop)) {
        shared->mutex.unlock();
        return;
      }
      shared->mutex.unlock();  // hand it back
    }
  });
  for (auto _ : state) {
    wait_for_waiter(shared->mutex, 1, stop);
    shared->mutex.unlock();  // handoff to rank 1 ...
    shared->mutex.lock(0);   // ... and back
  }
  stop.store(1);
  shared->mutex.unlock();
}
BENCHMARK(BM_MutexHandoff)->UseRealTime();

}  // namespace
}  // namespace sharebench::bench
