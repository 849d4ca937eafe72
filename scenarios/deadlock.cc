// Scenario `deadlock`: workers take two process-shared locks, A and B.
//   same-order            every worker takes A then B: clean.
//   lock-order            (known bug) even ranks take A then B, odd ranks B then A; a rendezvous
//                         after the first lock forces the interleaving, so the run hangs every
//                         time. Must be reported as a hang with the wait-for cycle (who holds
//                         what, who waits for what) and as a lock-order inversion.
//   lock-order-staggered  (known bug) the same inverted orders, but the workers take turns, so
//                         the run never hangs: the inversion must still be reported, from the
//                         lock-order graph (and, under ThreadSanitizer in thread mode, by TSan's
//                         lock-order-inversion report).
// The scenario writes no lock bookkeeping of its own: the harness registers A, B and the rendezvous
// (lock_registry.h), draws the `lock-order` graph and reads the wait-for graph on a hang
// (wait_for.h); `deadlock-free` only turns that wait-for report into this scenario's verdict.
// The rendezvous is a barrier between lock operations: it orders the workers but adds no
// synchronisation to the locks under test.
#include <optional>

#include <fmt/format.h>

#include "harness/scenario/scenario.h"
#include "harness/sync/process_barrier.h"
#include "harness/watchdog/wait_for.h"

namespace sharebench {

namespace {
constexpr const char* kRegion = "deadlock.state";

struct DeadlockState {
  explicit DeadlockState(int procs) : rendezvous(static_cast<std::uint32_t>(procs), "rendezvous") {}
  ProcessMutex a{"A"};
  ProcessMutex b{"B"};
  ProcessBarrier rendezvous;
  std::atomic<std::int64_t> critical_sections{0};
};

class DeadlockScenario : public Scenario {
 public:
  explicit DeadlockScenario(const CellConfig& c) : cell_(c) {}

  void setup(SetupContext& ctx) override { ctx.arena().create<DeadlockState>(kRegion, cell_.procs); }

  void work(WorkerContext& ctx) override {
    auto* s = ctx.arena().lookup<DeadlockState>(kRegion);
    const int rank = ctx.rank();
    const bool inverted = cell_.variant != "same-order" && rank % 2 == 1;
    ProcessMutex& first = inverted ? s->b : s->a;
    ProcessMutex& second = inverted ? s->a : s->b;
    ctx.wait_for_start();

    if (cell_.variant == checks::kLockOrder) {
      first.lock(rank);
      s->rendezvous.wait();  // everyone holds its first lock now
      second.lock(rank);     // and waits for the other's: deadlock
      second.unlock();
      first.unlock();
      ctx.beat(1);
      return;
    }
    if (cell_.variant == "lock-order-staggered") {
      for (int turn = 0; turn < ctx.procs(); ++turn) {
        if (turn == rank) nested(*s, first, second, rank);
        s->rendezvous.wait();
        ctx.beat(turn + 1);
      }
      return;
    }
    for (std::int64_t i = 0; i < cell_.workload.steps; ++i) {
      nested(*s, first, second, rank);
      ctx.beat(i + 1);
    }
  }

  void before_teardown(SharedArena& arena) override {
    stuck_ = describe_wait_for(*arena.lookup<HarnessBlock>(HarnessBlock::kRegionName));
  }

  void check(CheckContext& ctx) override {
    auto* s = ctx.arena().lookup<DeadlockState>(kRegion);
    if (stuck_) {
      ctx.check(checks::kDeadlockFree, Verdict::kFail, stuck_->cycle ? 1.0 : 0.0, stuck_->text);
    } else {
      ctx.check(checks::kDeadlockFree, Verdict::kPass, 0.0, "no worker was stuck");
    }
    ctx.metric("critical_sections", static_cast<double>(s->critical_sections.load()));
  }

 private:
  static void nested(DeadlockState& s, ProcessMutex& first, ProcessMutex& second, int rank) {
    ProcessLockGuard g1(first, rank);
    ProcessLockGuard g2(second, rank);
    s.critical_sections.fetch_add(1, std::memory_order_relaxed);
  }

  CellConfig cell_;
  std::optional<WaitForReport> stuck_;  // the wait-for graph, read while the workers were frozen
};
}  // namespace

SHAREBENCH_SCENARIO(DeadlockScenario, "deadlock")
    ->Describe("take two process-shared locks, in one order or in opposite orders")
    ->Variant("same-order", "every worker takes A then B")
    ->KnownBug(checks::kLockOrder, "two workers take A and B in opposite orders, forced to interleave: hangs",
               Expectation{{checks::kLiveness, checks::kDeadlockFree, checks::kLockOrder}, {}})
    ->KnownBug("lock-order-staggered", "opposite orders, taken in turns: never hangs, still an inversion",
               Expectation{{checks::kLockOrder}, {}});

}  // namespace sharebench
