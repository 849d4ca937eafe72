// Planted: workers that die. The harness's `liveness` check must fail with the cause in its message
// (the step, and std::terminate's reason from the worker's stderr), and a worker that calls exit()
// must never disturb the runner, the forkserver or a later cell:
//   exit0      calls exit(0) at step 3, inside work()
//   terminate  an exception escapes a noexcept function at step 3: std::terminate, SIGABRT
// Twin `returns`: returns from work() after --steps steps. The bugs are registered first, so in a run of the
// whole scenario the twin's cells come after theirs, in the same forkserver.
#include <cstdlib>
#include <stdexcept>

#include <sharebench/sharebench.h>

namespace {

void fails_inside_noexcept() noexcept {
  throw std::runtime_error("planted: the shared queue was closed under us");  // NOLINT: on purpose
}

class Deaths : public sharebench::Scenario {
 public:
  explicit Deaths(const sharebench::CellConfig& c) : cell_(c) {}
  void setup(sharebench::SetupContext&) override {}
  void work(sharebench::WorkerContext& ctx) override {
    ctx.wait_for_start();
    for (std::int64_t step = 1; step <= cell_.workload.steps; ++step) {
      ctx.beat(step);
      if (step == 3 && cell_.variant == "exit0") std::exit(0);
      if (step == 3 && cell_.variant == "terminate") fails_inside_noexcept();
    }
  }
  void check(sharebench::CheckContext&) override {}

 private:
  sharebench::CellConfig cell_;
};

}  // namespace

// What the harness must say of each planted bug, in every repetition under every start method
// (tests/planted_pair_test.py reads these lines: `expect SCENARIO/VARIANT: CHECK says "WORDS"...`).
// expect deaths/exit0: liveness says "exit(0)" "step 3"
// expect deaths/terminate: liveness says "signal 6" "step 3" "the shared queue was closed under us"
SHAREBENCH_SCENARIO(Deaths, "deaths")
    ->Describe("a worker ends early")
    ->KnownBug("exit0", "calls exit(0) inside work()", sharebench::Expectation{{"liveness"}}, 1)
    ->KnownBug("terminate", "std::terminate from an exception in a noexcept function",
               sharebench::Expectation{{"liveness"}}, 1)
    ->Variant("returns", "returns from work()");
