// Planted: a lock that excludes nobody (each worker constructs its own). The
// critical section is instrumented with the installed checkers (a SectionMonitor in the arena, a
// GuardedSection around what the lock guards); `mutual-exclusion` must fail. On its first pass a
// worker waits inside the section, up to a second, for the other to arrive: under a real lock the
// other cannot, so the twin `shared-lock` merely waits; under the private lock both are inside.
#include <atomic>
#include <chrono>
#include <thread>

#include <sharebench/sharebench.h>

namespace {

struct Shared {
  sharebench::ProcessMutex lock{"counter-lock"};
  sharebench::SectionMonitor section;
  std::atomic<int> inside_first_pass{0};
};

class MutualExclusion : public sharebench::Scenario {
 public:
  explicit MutualExclusion(const sharebench::CellConfig& c) : cell_(c) {}
  void setup(sharebench::SetupContext& ctx) override { ctx.arena().create<Shared>("shared"); }
  void work(sharebench::WorkerContext& ctx) override {
    auto* shared = ctx.arena().lookup<Shared>("shared");
    sharebench::ProcessMutex private_lock("private-lock");  // the bug: this one is the worker's own
    sharebench::ProcessMutex& lock = cell_.variant == "private-lock" ? private_lock : shared->lock;
    ctx.wait_for_start();
    for (std::int64_t step = 1; step <= cell_.workload.steps; ++step) {
      sharebench::ProcessLockGuard guard(lock, ctx.rank());
      sharebench::GuardedSection section(shared->section);
      if (step == 1) {
        shared->inside_first_pass.fetch_add(1);
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
        while (shared->inside_first_pass.load() < ctx.procs() && std::chrono::steady_clock::now() < until &&
               !ctx.peer_failed()) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
      }
      ctx.beat(step);
    }
  }
  void check(sharebench::CheckContext& ctx) override {
    const auto& section = ctx.arena().lookup<Shared>("shared")->section;
    sharebench::check_mutual_exclusion(ctx, section);
    sharebench::check_lost_updates(ctx, section);
  }

 private:
  sharebench::CellConfig cell_;
};

}  // namespace

// What the harness must say of each planted bug, in every repetition under every start method
// (tests/planted_pair_test.py reads these lines: `expect SCENARIO/VARIANT: CHECK says "WORDS"...`).
// expect mutual-exclusion/private-lock: mutual-exclusion says "began while another worker was inside" "does not exclude"
SHAREBENCH_SCENARIO(MutualExclusion, "mutual-exclusion")
    ->Describe("a counter updated under a lock")
    ->Variant("shared-lock", "one ProcessMutex in the arena")
    ->KnownBug("private-lock", "each worker locks a ProcessMutex of its own",
               sharebench::Expectation{{"mutual-exclusion"}, {"lost-updates"}});
