// `lock-order`: on every cell whose setup() made a ProcessMutex (unless the scenario wrote its own
// check of that name), a cycle in the graph of nested acquisitions fails, naming the locks and
// ranks: a deadlock waiting to happen, caught whether or not this schedule deadlocked.
#include <algorithm>

#include <fmt/format.h>

#include "harness/detectors/detector.h"

namespace sharebench {
namespace {

class LockOrderDetector final : public Detector {
 public:
  CheckId id() const override { return checks::kLockOrder; }
  DetectorStage stage() const override { return DetectorStage::kAfterCheck; }
  void judge(const RepetitionEvidence& e, Repetition& rep) const override {
    const LockRegistry& locks = e.block->locks;
    int mutexes = 0;
    for (int i = 0; i < locks.count(); ++i) mutexes += locks.entry(i).kind == LockRegistry::Kind::kMutex;
    if (mutexes == 0) return;
    if (std::any_of(rep.checks.begin(), rep.checks.end(), [&](const Check& c) { return c.name == id(); })) return;
    const std::string untracked =
        locks.untracked() > 0
            ? fmt::format(" ({} more locks beyond {} were not tracked)", locks.untracked(), LockRegistry::kMaxLocks)
            : "";
    // Exposure: the distinct pairs (held → taken) seen; with none, there was no order to break.
    const Exposure exposure{static_cast<double>(locks.nested_pairs()), "distinct nested acquisition pairs (a lock taken while holding another)"};
    const std::vector<int> cycle = locks.find_cycle();
    if (!cycle.empty()) {
      rep.checks.push_back(Check{id(), Verdict::kFail, static_cast<double>(cycle.size()),
                                 fmt::format("lock-order inversion: {}: a deadlock waiting to happen{}",
                                             locks.describe_cycle(cycle), untracked),
                                 exposure});
      return;
    }
    rep.checks.push_back(Check{
        id(), Verdict::kPass, 0.0,
        locks.any_nesting()
            ? fmt::format("every nested acquisition of the {} lock(s) followed one global order{}; {}", mutexes,
                          untracked, exposure_text(exposure, "more --steps"))
            : fmt::format("no lock was taken while holding another ({} lock(s)){}", mutexes, untracked),
        // With no nesting there is no order to keep: nothing to exercise, and nothing claimed.
        locks.any_nesting() ? std::optional<Exposure>(exposure) : std::nullopt});
  }
};

}  // namespace

std::unique_ptr<Detector> make_lock_order_detector() { return std::make_unique<LockOrderDetector>(); }

}  // namespace sharebench
