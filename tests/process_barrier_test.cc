// ProcessBarrier: rounds across processes, and abort waking every waiter.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>

#include <gtest/gtest.h>

#include "harness/arena/shared_arena.h"
#include "harness/sync/process_barrier.h"

namespace sharebench {
namespace {

struct Shared {
  explicit Shared(std::uint32_t n) : barrier(n) {}
  ProcessBarrier barrier;
  std::atomic<int> arrivals[64];
  std::atomic<int> errors{0};
};

TEST(ProcessBarrier, NoProcessRunsAheadOfARound) {
  constexpr int kProcs = 3, kRounds = 50;
  SharedArena arena = SharedArena::create(1 << 20);
  auto* s = arena.create<Shared>("s", kProcs);
  std::vector<pid_t> pids;
  for (int r = 0; r < kProcs; ++r) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      for (int round = 0; round < kRounds; ++round) {
        s->arrivals[round].fetch_add(1);
        s->barrier.wait();
        if (s->arrivals[round].load() != kProcs) s->errors.fetch_add(1);
        s->barrier.wait();
      }
      _exit(0);
    }
    pids.push_back(pid);
  }
  for (pid_t p : pids) {
    int status = 0;
    ASSERT_EQ(waitpid(p, &status, 0), p);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_EQ(s->errors.load(), 0);
  EXPECT_EQ(s->barrier.generation(), 2u * kRounds);
}

TEST(ProcessBarrier, AbortWakesAWaiterWithAnError) {
  SharedArena arena = SharedArena::create(1 << 20);
  auto* s = arena.create<Shared>("s", 2);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    try {
      s->barrier.wait();  // the second party never comes
    } catch (const BarrierAborted&) {
      _exit(7);
    }
    _exit(0);
  }
  usleep(100000);
  s->barrier.abort();
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 7);
  EXPECT_THROW(s->barrier.wait(), BarrierAborted);
}

}  // namespace
}  // namespace sharebench
