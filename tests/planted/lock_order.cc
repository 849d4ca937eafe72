// Planted: a lock-order inversion that never hangs. Rank 0 takes A then B, rank 1 takes B then A,
// in turns (a barrier between the turns), --steps rounds, so no run ever deadlocks; the order is still a deadlock
// waiting to happen. The harness's `lock-order` check must flag it with no line of wiring here.
// Twin `same-order`: both take A then B.
#include <sharebench/sharebench.h>

namespace {

struct TwoLocks {
  explicit TwoLocks(int procs) : turn(static_cast<std::uint32_t>(procs), "turns") {}
  sharebench::ProcessMutex a{"A"};
  sharebench::ProcessMutex b{"B"};
  sharebench::ProcessBarrier turn;
};

class LockOrder : public sharebench::Scenario {
 public:
  explicit LockOrder(const sharebench::CellConfig& c) : cell_(c) {}
  void setup(sharebench::SetupContext& ctx) override { ctx.arena().create<TwoLocks>("locks", cell_.procs); }
  void work(sharebench::WorkerContext& ctx) override {
    auto* locks = ctx.arena().lookup<TwoLocks>("locks");
    const bool inverted = cell_.variant == "inverted" && ctx.rank() % 2 == 1;
    sharebench::ProcessMutex& first = inverted ? locks->b : locks->a;
    sharebench::ProcessMutex& second = inverted ? locks->a : locks->b;
    ctx.wait_for_start();
    for (std::int64_t step = 1; step <= cell_.workload.steps; ++step) {
      for (int turn = 0; turn < ctx.procs(); ++turn) {
        if (turn == ctx.rank()) {
          sharebench::ProcessLockGuard outer(first, ctx.rank());
          sharebench::ProcessLockGuard inner(second, ctx.rank());
        }
        locks->turn.wait();
      }
      ctx.beat(step);
    }
  }
  void check(sharebench::CheckContext&) override {}  // the harness's own checks are the point

 private:
  sharebench::CellConfig cell_;
};

}  // namespace

// What the harness must say of each planted bug, in every repetition under every start method
// (tests/planted_pair_test.py reads these lines: `expect SCENARIO/VARIANT: CHECK says "WORDS"...`).
// expect lock-order/inverted: lock-order says "A → B → A" "A then B by rank" "B then A by rank"
SHAREBENCH_SCENARIO(LockOrder, "lock-order")
    ->Describe("two named locks taken nested, in turns")
    ->Variant("same-order", "every rank takes A then B")
    ->KnownBug("inverted", "odd ranks take B then A: never hangs, still an inversion",
               sharebench::Expectation{{"lock-order"}});
