// Planted: a worker whose private memory grows every step (a cache, a member of the worker's
// scenario object, that is never trimmed: 2 MiB a step, written so the pages are really its own). The harness's `memory` check must flag it (growth
// past --max-growth-mb between a quarter of the way through and the end). Twin `steady`: the same
// buffer, allocated once and rewritten every step.
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include <sharebench/sharebench.h>

namespace {

constexpr std::size_t kChunk = std::size_t{2} << 20;

class MemoryGrowth : public sharebench::Scenario {
 public:
  explicit MemoryGrowth(const sharebench::CellConfig& c) : cell_(c) {}
  void setup(sharebench::SetupContext&) override {}
  void work(sharebench::WorkerContext& ctx) override {
    auto steady = std::make_unique<char[]>(kChunk);
    ctx.wait_for_start();
    for (std::int64_t step = 1; step <= cell_.workload.steps; ++step) {
      if (cell_.variant == "grows") {
        cache_.push_back(std::make_unique<char[]>(kChunk));
        std::memset(cache_.back().get(), static_cast<int>(step), kChunk);
      } else {
        std::memset(steady.get(), static_cast<int>(step), kChunk);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // long enough for the sampler to see it
      ctx.beat(step);
    }
  }
  void check(sharebench::CheckContext&) override {}

 private:
  sharebench::CellConfig cell_;
  std::vector<std::unique_ptr<char[]>> cache_;  // the worker's cache: kept as long as it lives
};

}  // namespace

// What the harness must say of each planted bug, in every repetition under every start method
// (tests/planted_pair_test.py reads these lines: `expect SCENARIO/VARIANT: CHECK says "WORDS"...`).
// expect memory-growth/grows: memory says "MiB"
SHAREBENCH_SCENARIO(MemoryGrowth, "memory-growth")
    ->Describe("a worker allocates 2 MiB a step")
    ->Variant("steady", "one buffer, rewritten every step")
    ->KnownBug("grows", "keeps every step's buffer: 200 MiB after 100 steps", sharebench::Expectation{{"memory"}}, 1)
    // Memory is sampled per process; threads share their host's.
    ->OnlyUnder({sharebench::StartMethod::kFork, sharebench::StartMethod::kSpawn, sharebench::StartMethod::kForkserver});
