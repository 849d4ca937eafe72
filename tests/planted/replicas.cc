// Planted: replicas that drift. Each rank keeps a private vector; every round each publishes it to
// its slot in the arena and replaces it with the mean of all slots, between two barriers. The last
// rank skips round 1. Each rank records a checksum of its replica after every round in the
// installed ReplicaLog, whose `replicas-agree` check must name the round. Twin `every-round`.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include <sharebench/sharebench.h>

namespace {

constexpr int kFloats = 1024;
constexpr std::int64_t kLoggedRounds = 1000;  // the log keeps the first ones; later rounds still average

struct Rounds {
  explicit Rounds(int procs) : written(static_cast<std::uint32_t>(procs), "written"),
                               read(static_cast<std::uint32_t>(procs), "read") {}
  sharebench::ProcessBarrier written, read;
};

class Replicas : public sharebench::Scenario {
 public:
  explicit Replicas(const sharebench::CellConfig& c) : cell_(c) {}
  void setup(sharebench::SetupContext& ctx) override {
    ctx.arena().create<Rounds>("rounds", cell_.procs);
    ctx.arena().allocate("slots", sizeof(float) * kFloats * static_cast<std::size_t>(cell_.procs));
    sharebench::ReplicaLog::create(ctx.arena(), "replicas", cell_.procs, kLoggedRounds);
  }
  void work(sharebench::WorkerContext& ctx) override {
    auto* rounds = ctx.arena().lookup<Rounds>("rounds");
    auto* slots = static_cast<float*>(ctx.arena().get("slots"));
    sharebench::ReplicaLog log = sharebench::ReplicaLog::attach(ctx.arena(), "replicas");
    std::vector<float> mine(kFloats);
    for (int i = 0; i < kFloats; ++i) mine[static_cast<std::size_t>(i)] = static_cast<float>(ctx.rank() * kFloats + i);
    ctx.wait_for_start();
    for (std::int64_t round = 0; round < cell_.workload.steps; ++round) {
      // Local work that differs by rank (each its own data), so replicas differ until averaged.
      for (int i = 0; i < kFloats; ++i) mine[static_cast<std::size_t>(i)] += static_cast<float>(ctx.rank() + 1);
      std::copy(mine.begin(), mine.end(), slots + ctx.rank() * kFloats);
      rounds->written.wait();
      const bool skip = cell_.variant == "skip-round" && ctx.rank() == ctx.procs() - 1 && round == 1;
      if (!skip) {
        for (int i = 0; i < kFloats; ++i) {
          float sum = 0;
          for (int r = 0; r < ctx.procs(); ++r) sum += slots[r * kFloats + i];
          mine[static_cast<std::size_t>(i)] = sum / static_cast<float>(ctx.procs());
        }
      }
      rounds->read.wait();
      log.record(ctx.rank(), round, sharebench::checksum_words(mine.data(), mine.size() * sizeof(float)));
      ctx.beat(round + 1);
    }
  }
  void check(sharebench::CheckContext& ctx) override {
    sharebench::check_replicas_agree(ctx, sharebench::ReplicaLog::attach(ctx.arena(), "replicas"));
  }

 private:
  sharebench::CellConfig cell_;
};

}  // namespace

// What the harness must say of each planted bug, in every repetition under every start method
// (tests/planted_pair_test.py reads these lines: `expect SCENARIO/VARIANT: CHECK says "WORDS"...`).
// expect replicas/skip-round: replicas-agree says "round 1"
SHAREBENCH_SCENARIO(Replicas, "replicas")
    ->Describe("private replicas averaged through arena slots every round")
    ->Variant("every-round", "every rank averages every round")
    ->KnownBug("skip-round", "the last rank skips round 1", sharebench::Expectation{{"replicas-agree"}});
