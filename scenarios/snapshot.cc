// Scenario `snapshot` (once catalogued as locked/element-lock): one writer keeps
// replacing a shared array of weights, version after version, while readers copy it to compute
// with. Version stripes (harness/checkers/version_stripes.h) are the detector: round v writes v
// into every element, so a reader's snapshot must hold a single version; two versions in one
// snapshot is a torn read.
//   whole-lock     the writer holds the lock for a whole round, a reader for a whole copy: clean
//   element-lock   (known bug) the lock is taken per element access, as multiprocessing.Array's
//                  built-in lock is: every access is atomic, the loop is not. A rendezvous makes
//                  the first snapshot straddle a write (it orders the workers; it guards no data).
// Rank 0 writes; every other rank reads until the writer is done. The writer begins once every
// reader has begun copying, and yields between rounds: 200 whole-lock rounds take well under a
// millisecond, the lock is not fair, and readers that started late or lost every race for the
// lock copied only the last version (the check's exposure then read 0 writes between reads in two
// of the default matrix's three cells: a vacuous clean).
#include <sched.h>

#include <algorithm>
#include <atomic>

#include <fmt/format.h>

#include "harness/checkers/version_stripes.h"
#include "harness/scenario/scenario.h"
#include "harness/sync/process_barrier.h"
#include "harness/sync/process_mutex.h"

namespace sharebench {

namespace {
constexpr const char* kState = "snapshot.state";
constexpr const char* kArray = "snapshot.array";
// Small enough that a per-element-locked round stays cheap: every lock call reads the clock twice,
// about 1 µs a lock on this VM (docs/known-bugs.md).
constexpr std::int64_t kElements = 1024;
// Writer rounds: min(--steps, this). Under per-element locks a round is 1024 contended lock
// operations (futex calls), about 10 ms with a reader beside it; 200 rounds catch the bug
// hundreds of times over.
constexpr std::int64_t kMaxRounds = 200;

struct SnapshotState {
  explicit SnapshotState(int procs) : rendezvous(static_cast<std::uint32_t>(procs)) {}
  ProcessMutex lock{"snapshot-lock"};
  ProcessBarrier rendezvous;
  std::atomic<std::int32_t> writer_done{0};
  std::atomic<std::int32_t> readers_copying{0};
  SnapshotMonitor snapshots;  // version stripes (harness/checkers)
};

class SnapshotScenario : public Scenario {
 public:
  explicit SnapshotScenario(const CellConfig& c) : cell_(c), per_element_(c.variant == "element-lock") {}

  void setup(SetupContext& ctx) override {
    ctx.arena().create<SnapshotState>(kState, cell_.procs);
    ctx.arena().allocate(kArray, sizeof(float) * kElements);  // version 0 everywhere
  }

  void work(WorkerContext& ctx) override {
    auto* s = ctx.arena().lookup<SnapshotState>(kState);
    auto* array = static_cast<float*>(ctx.arena().get(kArray));
    const int rank = ctx.rank();
    const bool force = per_element_ && ctx.procs() >= 2;
    ctx.wait_for_start();
    if (rank == 0) {
      while (s->readers_copying.load(std::memory_order_acquire) < ctx.procs() - 1 && !ctx.peer_failed()) {
        ::sched_yield();
      }
      const std::int64_t rounds = std::min(cell_.workload.steps, kMaxRounds);
      for (std::int64_t v = 1; v <= rounds; ++v) {
        if (force && v == 1) s->rendezvous.wait();  // a reader is halfway through its first copy
        write_round(*s, array, static_cast<float>(v), rank);
        if (force && v == 1) s->rendezvous.wait();  // let it finish the copy
        ::sched_yield();  // a writer computes its next version between writes; the readers get the lock
        ctx.beat(v);
      }
      s->writer_done.store(1, std::memory_order_release);
      return;
    }
    std::vector<float> copy(kElements);
    std::int64_t n = 0;
    bool first = true;
    s->readers_copying.fetch_add(1, std::memory_order_acq_rel);
    // Until the writer is done, or dead: a reader must not outlive a killed writer.
    while ((s->writer_done.load(std::memory_order_acquire) == 0 && !ctx.peer_failed()) || first) {
      if (per_element_) {
        for (std::int64_t i = 0; i < kElements; ++i) {
          if (force && first && rank == 1 && i == kElements / 2) {
            s->rendezvous.wait();
            s->rendezvous.wait();
          }
          ProcessLockGuard g(s->lock, rank);
          copy[i] = array[i];
        }
        if (force && first && rank != 1) {  // other readers keep the rendezvous count whole
          s->rendezvous.wait();
          s->rendezvous.wait();
        }
      } else {
        ProcessLockGuard g(s->lock, rank);
        std::copy(array, array + kElements, copy.begin());
      }
      first = false;
      s->snapshots.observe(copy.data(), copy.size());
      ctx.beat(++n);
    }
  }

  void check(CheckContext& ctx) override {
    const auto* s = ctx.arena().lookup<SnapshotState>(kState);
    if (cell_.procs < 2) {
      ctx.check(checks::kConsistentSnapshots, Verdict::kPass, 0.0, "no reader: one process only writes",
                Exposure{0, "readers"}, "--procs 2 or more");
      return;
    }
    check_consistent_snapshots(ctx, s->snapshots);
  }

 private:
  void write_round(SnapshotState& s, float* array, float version, int rank) const {
    if (per_element_) {
      for (std::int64_t i = 0; i < kElements; ++i) {
        ProcessLockGuard g(s.lock, rank);
        array[i] = version;
      }
    } else {
      ProcessLockGuard g(s.lock, rank);
      stamp_version(array, kElements, version);
    }
  }

  CellConfig cell_;
  bool per_element_;
};
}  // namespace

SHAREBENCH_SCENARIO(SnapshotScenario, "snapshot")
    ->Describe("one writer replaces a shared array version after version while readers copy it")
    ->Variant("whole-lock", "the lock covers a whole write and a whole copy")
    ->KnownBug("element-lock", "a lock per element access; each access is atomic, the loop is not",
               Expectation{{checks::kConsistentSnapshots}, {}});

}  // namespace sharebench
