// The process-shared mutex and barrier against the bound they should approach, each pair in the
// same run (docs/performance.md):
//   BM_FutexPingPong            two processes bounce a futex word: one round trip = two handoffs
//   BM_BarrierRoundTrip         two processes meet at a ProcessBarrier: one round per iteration
//   BM_MutexUncontended         lock(rank)+unlock of a ProcessMutex nobody else wants (with its
//                               owner record and wait timing)
//   BM_PthreadMutexUncontended  the bound: a robust, process-shared pthread mutex, nothing else
//   BM_MutexContended           two processes lock/unlock the same ProcessMutex; time per
//                               acquisition by the timed side
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
  SharedObject<ProcessMutex> mutex(0);
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
  ProcessMutex mutex{0};
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

}  // namespace
}  // namespace sharebench::bench
