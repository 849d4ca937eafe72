// `lock-init`: every registered lock still is the object setup() made. A worker that constructs the
// shared lock again (as each "initialises" it when it starts) wipes its owner and waiters: two
// workers may then hold it at once, and its lock-order edges are lost. Caught whatever the schedule.
#include <fmt/format.h>

#include "harness/detectors/detector.h"

namespace sharebench {
namespace {

class LockInitDetector final : public Detector {
 public:
  CheckId id() const override { return checks::kLockInit; }
  DetectorStage stage() const override { return DetectorStage::kAfterCheck; }
  void judge(const RepetitionEvidence& e, Repetition& rep) const override {
    const LockRegistry& locks = e.block->locks;
    if (locks.count() == 0) return;
    const std::vector<int> again = locks.reconstructed();
    if (again.empty()) {
      rep.checks.push_back(Check{id(), Verdict::kPass, 0.0,
                                 fmt::format("all {} lock(s) and barrier(s) kept the state setup() gave them",
                                             locks.count())});
      return;
    }
    std::string names;
    for (const int lock : again) names += (names.empty() ? "'" : ", '") + locks.name(lock) + "'";
    rep.checks.push_back(Check{
        id(), Verdict::kFail, static_cast<double>(again.size()),
        fmt::format("{} was constructed again while the workers ran: a lock re-initialised in use forgets its "
                    "owner and waiters, so two workers can hold it at once; construct it once, in setup()",
                    names)});
  }
};

}  // namespace

std::unique_ptr<Detector> make_lock_init_detector() { return std::make_unique<LockInitDetector>(); }

}  // namespace sharebench
