// Planted: a seqlock reader that never re-checks the sequence after copying. One writer stamps a
// version into every element of an array (the installed version-stripes checker), inside an odd
// sequence number; readers copy the array and hand each copy to a SnapshotMonitor, whose
// `consistent-snapshots` check must fail. On its first copy a reader pauses halfway until the
// writer has finished a whole round, so the copy straddles a write every time; the twin `recheck`
// sees the sequence moved and copies again.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include <sharebench/sharebench.h>

namespace {

constexpr std::size_t kElements = 4096;

struct Seqlocked {
  std::atomic<std::uint64_t> sequence{0};  // odd while a write is in progress
  std::atomic<int> writer_done{0};
  sharebench::SnapshotMonitor snapshots;
  std::int64_t data[kElements] = {};
};

class TornReads : public sharebench::Scenario {
 public:
  explicit TornReads(const sharebench::CellConfig& c) : cell_(c) {}
  void setup(sharebench::SetupContext& ctx) override { ctx.arena().create<Seqlocked>("seqlocked"); }
  void work(sharebench::WorkerContext& ctx) override {
    auto* s = ctx.arena().lookup<Seqlocked>("seqlocked");
    ctx.wait_for_start();
    if (ctx.rank() == 0) {  // the writer
      for (std::int64_t version = 1; version <= cell_.workload.steps; ++version) {
        s->sequence.fetch_add(1);
        sharebench::stamp_version(s->data, kElements, version);
        s->sequence.fetch_add(1);
        std::this_thread::sleep_for(std::chrono::microseconds(500));
        ctx.beat(version);
      }
      s->writer_done.store(1);
      return;
    }
    std::vector<std::int64_t> copy(kElements);
    bool first = true;
    std::int64_t n = 0;
    while ((s->writer_done.load() == 0 && !ctx.peer_failed()) || first) {
      std::uint64_t before;
      do {
        do before = s->sequence.load(); while (before % 2 == 1);
        for (std::size_t i = 0; i < kElements; ++i) {
          if (first && i == kElements / 2) {  // halfway through the first copy: let a write pass
            const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
            while (s->sequence.load() < before + 2 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
            first = false;
          }
          copy[i] = s->data[i];
        }
      } while (cell_.variant == "recheck" && s->sequence.load() != before);  // the bug: no re-check
      s->snapshots.observe(copy.data(), copy.size());
      ctx.beat(++n);
    }
  }
  void check(sharebench::CheckContext& ctx) override {
    sharebench::check_consistent_snapshots(ctx, ctx.arena().lookup<Seqlocked>("seqlocked")->snapshots);
  }

 private:
  sharebench::CellConfig cell_;
};

}  // namespace

// What the harness must say of each planted bug, in every repetition under every start method
// (tests/planted_pair_test.py reads these lines: `expect SCENARIO/VARIANT: CHECK says "WORDS"...`).
// expect torn-reads/no-recheck: consistent-snapshots says "torn"
SHAREBENCH_SCENARIO(TornReads, "torn-reads")
    ->Describe("one writer stamps versions under a sequence number; readers copy")
    ->MinProcs(2)
    ->Variant("recheck", "the reader copies again when the sequence moved")
    ->KnownBug("no-recheck", "the reader trusts its copy without re-reading the sequence",
               sharebench::Expectation{{"consistent-snapshots"}});
