// Scenario `counter`: workers add to one shared counter under the process-shared mutex; the
// count must come out exact. Every launcher, the watchdog, the results file and every report work
// for it unchanged. (A planted-bug twin, increments with no lock, would lose updates only when the
// workers happen to overlap; see the in-tree `locked` scenario for a detector that does not rely on
// luck: an occupancy counter inside the critical section.) Its check's name is a CheckId declared
// here, and --increments-per-step is an option of its own: declared in its registration, it is a
// flag of `run`, shown by `list`, stored in the results and written back by every reproduce line.
#include <fmt/format.h>

#include <sharebench/sharebench.h>

namespace {

inline constexpr sharebench::CheckId kCount{"count"};

struct SharedCounter {
  sharebench::ProcessMutex mutex{"counter-lock"};  // the name the harness's lock reports use
  std::int64_t value = 0;
};

class CounterScenario : public sharebench::Scenario {
 public:
  explicit CounterScenario(const sharebench::CellConfig& c) : cell_(c) {}

  void setup(sharebench::SetupContext& ctx) override { ctx.arena().create<SharedCounter>("counter"); }

  void work(sharebench::WorkerContext& ctx) override {
    auto* counter = ctx.arena().lookup<SharedCounter>("counter");
    const std::int64_t per_step = sharebench::option_int(cell_, "increments-per-step");
    ctx.wait_for_start();
    for (std::int64_t i = 0; i < cell_.workload.steps; ++i) {
      sharebench::ProcessLockGuard guard(counter->mutex, ctx.rank());
      for (std::int64_t k = 0; k < per_step; ++k) counter->value = counter->value + 1;
      ctx.beat(i + 1);
    }
  }

  void check(sharebench::CheckContext& ctx) override {
    auto* counter = ctx.arena().lookup<SharedCounter>("counter");
    const std::int64_t expected =
        cell_.workload.steps * cell_.procs * sharebench::option_int(cell_, "increments-per-step");
    if (!ctx.all_completed()) {
      ctx.check(kCount, sharebench::Verdict::kUnknown, std::nullopt, "a worker did not finish");
      return;
    }
    ctx.check(kCount, counter->value == expected ? sharebench::Verdict::kPass : sharebench::Verdict::kFail,
              static_cast<double>(expected - counter->value),
              fmt::format("counter {} after {} increments", counter->value, expected));
  }

 private:
  sharebench::CellConfig cell_;
};

}  // namespace

SHAREBENCH_SCENARIO(CounterScenario, "counter")
    ->Describe("increment one shared counter")
    ->IntOption("increments-per-step", 1, 1, 1000, "counter: increments each worker makes in one step, under the lock")
    ->Variant("locked", "every increment under the process-shared mutex");
