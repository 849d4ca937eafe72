// Planted (ThreadSanitizer builds only): a data race. Under the thread start method the workers are
// threads of one process; each adds to a counter in the arena with a plain load and store. The
// harness's `sanitizer` check must fail, naming this file and line. Twin `atomic`: fetch_add.
// Both are registered as plain variants, as a user who believes the code correct would: the racy
// one must then make the run exit 1 (tests/tsan_test.sh).
#include <atomic>
#include <cstdint>

#include <sharebench/sharebench.h>

namespace {

struct Counter {
  std::int64_t plain = 0;
  std::atomic<std::int64_t> atomic{0};
};

class DataRace : public sharebench::Scenario {
 public:
  explicit DataRace(const sharebench::CellConfig& c) : cell_(c) {}
  void setup(sharebench::SetupContext& ctx) override { ctx.arena().create<Counter>("counter"); }
  void work(sharebench::WorkerContext& ctx) override {
    auto* counter = ctx.arena().lookup<Counter>("counter");
    ctx.wait_for_start();
    for (int step = 1; step <= 1000; ++step) {
      if (cell_.variant == "plain") {
        counter->plain = counter->plain + 1;  // planted: the racing line
      } else {
        counter->atomic.fetch_add(1);
      }
      ctx.beat(step);
    }
  }
  void check(sharebench::CheckContext&) override {}

 private:
  sharebench::CellConfig cell_;
};

}  // namespace

SHAREBENCH_SCENARIO(DataRace, "data-race")
    ->Describe("a counter in the arena, incremented by every worker thread")
    ->Starts({sharebench::StartMethod::kThread})
    ->Variant("atomic", "fetch_add")
    ->Variant("plain", "a plain load and store");
