// Planted: a ring of locks that hangs. Rank r takes lock L<r>, waits until every rank holds its
// first lock, then takes L<r+1 mod N>: each waits for its neighbour, forever. The harness must call
// it a hang and name the cycle (every lock and rank). Twin `ordered`: the same meeting point, but
// before any lock, then both locks in one global order (lower index first), --steps times.
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include <sharebench/sharebench.h>

namespace {

class LockRing : public sharebench::Scenario {
 public:
  explicit LockRing(const sharebench::CellConfig& c) : cell_(c) {}
  void setup(sharebench::SetupContext& ctx) override {
    ctx.arena().create<sharebench::ProcessBarrier>("ring.meet", static_cast<std::uint32_t>(cell_.procs), "meet");
    for (int i = 0; i < cell_.procs; ++i) {
      ctx.arena().create<sharebench::ProcessMutex>(fmt::format("ring.{}", i), fmt::format("L{}", i));
    }
  }
  void work(sharebench::WorkerContext& ctx) override {
    auto& meet = *ctx.arena().lookup<sharebench::ProcessBarrier>("ring.meet");
    auto lock = [&](int i) -> sharebench::ProcessMutex& {
      return *ctx.arena().lookup<sharebench::ProcessMutex>(fmt::format("ring.{}", i % ctx.procs()));
    };
    const int mine = ctx.rank(), next = (ctx.rank() + 1) % ctx.procs();
    ctx.wait_for_start();
    if (cell_.variant == "ring") {
      sharebench::ProcessLockGuard first(lock(mine), ctx.rank());
      ctx.beat(1);
      meet.wait();  // everyone holds its first lock
      sharebench::ProcessLockGuard second(lock(next), ctx.rank());
      ctx.beat(2);
      return;
    }
    for (std::int64_t step = 1; step <= cell_.workload.steps; ++step) {
      meet.wait();
      sharebench::ProcessLockGuard first(lock(std::min(mine, next)), ctx.rank());
      sharebench::ProcessLockGuard second(lock(std::max(mine, next)), ctx.rank());
      ctx.beat(step);
    }
  }
  void check(sharebench::CheckContext&) override {}

 private:
  sharebench::CellConfig cell_;
};

}  // namespace

// What the harness must say of each planted bug, in every repetition under every start method
// (tests/planted_pair_test.py reads these lines: `expect SCENARIO/VARIANT: CHECK says "WORDS"...`).
// expect lock-ring/ring: liveness says "L0" "L1" "L2" "rank 0" "rank 1" "rank 2"
SHAREBENCH_SCENARIO(LockRing, "lock-ring")
    ->Describe("each rank holds its lock and takes its neighbour's")
    ->MinProcs(2)
    ->Variant("ordered", "both locks in one global order")
    ->KnownBug("ring", "each rank takes its own lock, then its neighbour's: a cycle through every rank",
               sharebench::Expectation{{"liveness"}, {"lock-order"}});
