// ProcessMutex: exclusion across real processes, owner records, and recovery after owner death.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "harness/arena/shared_arena.h"
#include "harness/sync/process_mutex.h"

namespace sharebench {
namespace {

struct Shared {
  ProcessMutex mutex{"test"};
  volatile std::int64_t counter = 0;  // deliberately not atomic: only the mutex protects it
};

TEST(ProcessMutex, ExcludesAcrossProcesses) {
  SharedArena arena = SharedArena::create(1 << 20);
  auto* s = arena.create<Shared>("s");
  constexpr int kProcs = 3, kIncrements = 20000;
  std::vector<pid_t> pids;
  for (int r = 0; r < kProcs; ++r) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      for (int i = 0; i < kIncrements; ++i) {
        ProcessLockGuard g(s->mutex, r);
        s->counter = s->counter + 1;
      }
      _exit(0);
    }
    pids.push_back(pid);
  }
  for (pid_t p : pids) {
    int status = 0;
    ASSERT_EQ(waitpid(p, &status, 0), p);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_EQ(s->counter, kProcs * kIncrements);
  EXPECT_EQ(s->mutex.acquisitions(), static_cast<std::uint64_t>(kProcs * kIncrements));
  EXPECT_EQ(s->mutex.owner_rank(), ProcessMutex::kNoOwner);
}

TEST(ProcessMutex, RecordsOwnerWhileHeld) {
  SharedArena arena = SharedArena::create(1 << 20);
  auto* s = arena.create<Shared>("s");
  s->mutex.lock(5);
  EXPECT_EQ(s->mutex.owner_rank(), 5);
  EXPECT_EQ(s->mutex.owner_pid(), getpid());
  EXPECT_FALSE(s->mutex.try_lock(6));
  s->mutex.unlock();
  EXPECT_EQ(s->mutex.owner_rank(), ProcessMutex::kNoOwner);
}

TEST(ProcessMutex, RecoversWhenTheOwnerDiesHoldingIt) {
  SharedArena arena = SharedArena::create(1 << 20);
  auto* s = arena.create<Shared>("s");
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    s->mutex.lock(1);
    _exit(0);  // dies holding the lock
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_EQ(s->mutex.owner_pid(), pid);  // the record still names the dead owner
  const LockResult r = s->mutex.lock(0);
  EXPECT_TRUE(r.recovered_owner_death);
  EXPECT_EQ(s->mutex.owner_deaths(), 1u);
  EXPECT_EQ(s->mutex.owner_rank(), 0);
  s->mutex.unlock();
  // Consistent again: a normal lock afterwards reports nothing unusual.
  EXPECT_FALSE(s->mutex.lock(0).recovered_owner_death);
  s->mutex.unlock();
}

TEST(ProcessMutex, WaiterBitmapShowsWhoWaits) {
  SharedArena arena = SharedArena::create(1 << 20);
  auto* s = arena.create<Shared>("s");
  s->mutex.lock(0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    s->mutex.lock(3);
    s->mutex.unlock();
    _exit(0);
  }
  for (int i = 0; i < 2000 && s->mutex.waiting_ranks() == 0; ++i) usleep(1000);
  usleep(20000);  // the waiter bit is set just before blocking; let the child block
  EXPECT_EQ(s->mutex.waiting_ranks(), std::uint64_t{1} << 3);
  s->mutex.unlock();
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_EQ(s->mutex.waiting_ranks(), 0u);
}

}  // namespace
}  // namespace sharebench
